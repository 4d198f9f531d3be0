package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"acpd/acp"
	"acpd/mcpclient"
	"acpd/model"
	"acpd/tools"
	"acpd/tools/mcptools"
)

// mcpStartTimeout bounds connecting to a session's MCP servers.
const mcpStartTimeout = 30 * time.Second

// mcpTools are a session's MCP servers: connected in the background when the
// session opens, so session/new answers at once; a prompt waits (bounded)
// for the connections before its first model request.
type mcpTools struct {
	m      *mcpclient.Manager
	ready  chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errs   []error // set before ready closes

	// cmdMu serializes available_commands_update sends (announceCommands);
	// announced is set once the first one went out after the session reply.
	cmdMu     sync.Mutex
	announced bool
}

// startMCP connects the session's MCP servers in the background. The
// session owns the goroutine: closeMCP cancels and waits for it.
func (s *sess) startMCP() {
	servers := mcptools.Servers(s.mcp, s.cfg.MCPServers)
	if len(servers) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(s.a.baseContext(), mcpStartTimeout)
	t := &mcpTools{
		m: mcpclient.NewManager(mcpclient.Options{
			ClientName:    s.a.opts.Name,
			ClientVersion: s.a.opts.Version,
			Logger:        slog.New(s.a.log),
			BaseEnv:       s.childEnv(),
			Dir:           s.cwd,
			// MCP prompts are slash commands: announce the new list.
			OnPromptsChanged: func() { s.announceCommands(s.a.baseContext(), false) },
			// MCP elicitation goes to the editor (or is declined).
			Elicit: s.mcpElicit,
		}),
		ready:  make(chan struct{}),
		cancel: cancel,
	}
	s.mcpTools = t
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer cancel()
		errs := t.m.Start(ctx, servers)
		t.errs = errs
		close(t.ready)
		s.announceCommands(s.a.baseContext(), false) // now with the servers' prompts
		for _, err := range errs {
			s.a.log.Warn("MCP server failed to start", "session", s.id, "err", err)
		}
	}()
}

// awaitMCP waits for the MCP connections (or ctx) and reports failures
// once, as notices.
func (s *sess) awaitMCP(ctx context.Context) {
	t := s.mcpTools
	if t == nil {
		return
	}
	select {
	case <-t.ready:
	case <-ctx.Done():
		return
	}
	s.mu.Lock()
	errs := t.errs
	t.errs = nil
	s.mu.Unlock()
	for _, err := range errs {
		s.notice(s.a.baseContext(), acp.NoticeSeverityWarning, "MCP server unavailable: "+err.Error())
	}
}

// closeMCP stops connecting and closes every MCP connection.
func (s *sess) closeMCP() {
	t := s.mcpTools
	if t == nil {
		return
	}
	t.cancel()
	t.wg.Wait()
	if err := t.m.Close(); err != nil {
		s.a.log.Warn("closing MCP servers", "session", s.id, "err", err)
	}
}

// mcpToolMap returns the session's MCP tools as model tools, once connected.
func (s *sess) mcpToolMap() map[string]*tools.Tool {
	t := s.mcpTools
	if t == nil {
		return nil
	}
	select {
	case <-t.ready:
	default:
		return nil
	}
	out := map[string]*tools.Tool{}
	for _, mt := range mcptools.Tools(t.m) {
		out[mt.Def.Name] = mt
	}
	return out
}

// availableCommands returns acpd's slash commands followed by the MCP
// prompts of the session's connected servers.
func (s *sess) availableCommands() []acp.AvailableCommand {
	out := slices.Clone(commands)
	t := s.mcpTools
	if t == nil {
		return out
	}
	select {
	case <-t.ready:
	default:
		return out
	}
	return append(out, mcptools.Commands(t.m)...)
}

// announceCommands sends the available commands. The first call (from
// session/new or session/load, after the reply) marks the session as
// announced; later calls from the MCP side (servers connected, prompt list
// changed) send only after that, so no update precedes the reply. The lock
// keeps the updates in the order their lists were computed.
func (s *sess) announceCommands(ctx context.Context, initial bool) {
	t := s.mcpTools
	if t == nil {
		if initial {
			s.send(ctx, acp.SessionUpdate{AvailableCommandsUpdate: &acp.AvailableCommandsUpdate{AvailableCommands: s.availableCommands()}})
		}
		return
	}
	t.cmdMu.Lock()
	defer t.cmdMu.Unlock()
	if initial {
		t.announced = true
	} else if !t.announced {
		return
	}
	s.send(ctx, acp.SessionUpdate{AvailableCommandsUpdate: &acp.AvailableCommandsUpdate{AvailableCommands: s.availableCommands()}})
}

// mcpPromptTurn expands an MCP prompt command (see package mcptools) into
// the turn's user message. ok reports that the prompt was such a command;
// then either parts is the message, or stop is set and the turn is over (the
// user was told why). A "/a:b" naming no prompt is not a command: it goes to
// the model as text.
func (s *sess) mcpPromptTurn(ctx context.Context, prompt []acp.ContentBlock) (parts []model.Part, stop acp.StopReason, ok bool) {
	t := s.mcpTools
	if t == nil {
		return nil, "", false
	}
	name, rest, ok := mcptools.ParseCommand(prompt)
	if !ok {
		return nil, "", false
	}
	s.awaitMCP(ctx)
	if ctx.Err() != nil {
		return nil, acp.StopReasonCancelled, true
	}
	text, err := mcptools.Expand(ctx, t.m, name, rest)
	var argsErr *mcptools.ArgsError
	msg := ""
	switch {
	case errors.Is(err, mcptools.ErrUnknownPrompt):
		return nil, "", false
	case errors.As(err, &argsErr):
		msg = fmt.Sprintf("/%s: %v.", name, err)
	case err != nil && ctx.Err() != nil:
		return nil, acp.StopReasonCancelled, true
	case err != nil:
		msg = fmt.Sprintf("The MCP prompt /%s failed: %v", name, err)
	case text == "":
		msg = fmt.Sprintf("The MCP prompt /%s returned no text.", name)
	default:
		return []model.Part{{Type: model.PartText, Text: text}}, "", true
	}
	s.notify(s.a.baseContext(), acp.SessionUpdate{AgentMessageChunk: textChunk(msg, newID("m_"))})
	return nil, acp.StopReasonEndTurn, true
}
