package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"acpd/acp"
	"acpd/mcpclient"
	"acpd/model"
	"acpd/tools"
	"acpd/tools/mcptools"
)

// mcpTools are a session's MCP servers: each connects in the background
// when the session opens, so session/new answers at once; a prompt waits
// at most the grace (agent.mcp_grace_ms) for those still starting, and a
// server that is ready later joins from the next model request.
type mcpTools struct {
	m     *mcpclient.Manager
	grace time.Duration
	// apps is the MCP Apps state when the client renders views, else nil.
	apps *mcptools.Apps

	// mu guards errs (servers that could not even be started) and
	// reported (servers whose unavailability the user was shown).
	mu       sync.Mutex
	errs     []error
	reported map[string]bool
	// sampleAlways are servers the user allowed to sample for the rest of
	// the session; sampleUsed is the output tokens sampling reserved.
	sampleAlways map[string]bool
	sampleUsed   int

	// cmdMu serializes available_commands_update sends (announceCommands);
	// announced is set once the first one went out after the session reply.
	cmdMu     sync.Mutex
	announced bool
}

// startMCP starts connecting the session's MCP servers in the background;
// the Manager owns those goroutines and closeMCP ends them.
func (s *sess) startMCP() {
	servers := mcptools.Servers(s.mcp, s.cfg.MCPServers)
	if len(servers) == 0 {
		return
	}
	if s.a.opts.MCPTokens != nil {
		servers = mcpclient.WithStoredOAuth(servers, s.a.opts.MCPTokens)
	}
	grace := mcpclient.DefaultGrace
	if ms := s.cfg.Agent.MCPGraceMs; ms > 0 {
		grace = time.Duration(ms) * time.Millisecond
	}
	// Servers are offered elicitation only in the modes the editor shows.
	var elicit func(context.Context, string, mcpclient.ElicitRequest) (mcpclient.ElicitResult, error)
	modes := []string{}
	if ec := s.a.clientCapabilities().Elicitation; ec != nil {
		if ec.Form != nil {
			modes = append(modes, "form")
		}
		if ec.URL != nil {
			modes = append(modes, "url")
		}
	}
	if len(modes) > 0 {
		elicit = s.mcpElicit
	}
	t := &mcpTools{
		m: mcpclient.NewManager(mcpclient.Options{
			ClientName:    s.a.opts.Name,
			ClientVersion: s.a.opts.Version,
			Logger:        s.a.log,
			BaseEnv:       s.childEnv(),
			Dir:           s.cwd,
			StateDir:      s.cfg.State.Dir,
			// MCP prompts are slash commands: announce the new list (also
			// when a server connects).
			OnPromptsChanged: func() { s.announceCommands(s.a.baseContext(), false) },
			// MCP elicitation goes to the editor.
			Elicit:      elicit,
			ElicitModes: modes,
			// Sampling runs the session's model after the user agrees.
			Sample: s.mcpSample,
			// Roots: the working directory and the additional directories.
			Roots: s.dirs,
			// MCP Apps: advertised only to render views the client hosts.
			Apps: s.a.rendersApps(),
		}),
		grace:        grace,
		reported:     map[string]bool{},
		sampleAlways: map[string]bool{},
	}
	t.apps = s.newApps(t.m)
	s.mcpTools = t
	t.errs = t.m.Add(servers)
	for _, err := range t.errs {
		s.a.log.Warn("MCP server failed to start", "session", s.id, "err", err)
	}
}

// awaitMCP waits (at most the grace) for servers still starting, then
// shows the user, once per server and session, each server that is
// unavailable: a failed tool call titled "MCP server NAME unavailable"
// with the reason, which every editor shows, and a notice where the editor
// takes notices.
func (s *sess) awaitMCP(ctx context.Context) {
	t := s.mcpTools
	if t == nil {
		return
	}
	t.m.Wait(ctx, t.grace)
	if ctx.Err() != nil {
		return
	}
	type down struct{ name, why string }
	var news []down
	t.mu.Lock()
	for _, err := range t.errs {
		news = append(news, down{"", err.Error()})
	}
	t.errs = nil
	for _, st := range t.m.Status() {
		if st.State == mcpclient.StateDown && !t.reported[st.Name] {
			t.reported[st.Name] = true
			news = append(news, down{st.Name, st.Err})
		}
	}
	t.mu.Unlock()
	out := s.a.baseContext()
	for _, d := range news {
		title := "MCP server unavailable"
		if d.name != "" {
			title = fmt.Sprintf("MCP server %s unavailable", d.name)
		}
		text := d.why + "\n\nThe session goes on without this server's tools. Check its command, URL or credentials in the editor's or acpd's configuration (`acpd mcp list` shows every server's state), then start a new session."
		s.card(out, title, text)
		s.notice(out, acp.NoticeSeverityWarning, title+": "+d.why)
	}
}

// mcpStatusPrompt describes, for the system prompt, the configured MCP
// servers whose tools the model does not have, and why.
func (s *sess) mcpStatusPrompt() string {
	t := s.mcpTools
	if t == nil {
		return ""
	}
	var b strings.Builder
	for _, st := range t.m.Status() {
		switch st.State {
		case mcpclient.StateDown:
			fmt.Fprintf(&b, "- %s: unavailable (%s)\n", st.Name, tools.Truncate(st.Err, 300))
		case mcpclient.StateStarting:
			fmt.Fprintf(&b, "- %s: still starting; its tools may appear in a later request\n", st.Name)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "\nThese configured MCP servers are not available, so their tools are missing:\n" + b.String()
}

// closeMCP closes every MCP connection and stops the servers.
func (s *sess) closeMCP() {
	t := s.mcpTools
	if t == nil {
		return
	}
	if err := t.m.Close(); err != nil {
		s.a.log.Warn("closing MCP servers", "session", s.id, "err", err)
	}
}

// mcpToolMap returns the tools of the session's ready (or restarting) MCP
// servers as model tools.
func (s *sess) mcpToolMap() map[string]*tools.Tool {
	t := s.mcpTools
	if t == nil {
		return nil
	}
	out := map[string]*tools.Tool{}
	for _, mt := range mcptools.Tools(t.m, t.apps) {
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
