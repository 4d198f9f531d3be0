package agent

import (
	"context"
	"time"

	"acpd/acp"
	"acpd/agent/internal/mcpbridge"
	"acpd/agent/internal/notice"
	"acpd/mcpclient"
	"acpd/model"
	"acpd/permissions"
	"acpd/tools/mcptools"
)

// startMCP starts connecting the session's MCP servers in the background
// (package mcpbridge), and gathering the system prompt's facts beside
// them; close ends both. Servers are offered elicitation only in the
// modes the editor shows (mcp_elicit.go).
func (s *sess) startMCP() {
	servers := mcptools.Servers(s.mcpServers, s.cfg.MCPClientServers())
	if len(servers) == 0 {
		// No bridge (mcpbridge.Start's nil), and nothing of its
		// configuration computed: the commands are read after the reply.
		return
	}
	// The first request's system prompt needs the environment facts (git
	// commands): gathered from now on, while the servers connect, rather
	// than once the prompt comes or the last server is ready; started
	// first, so that git's spawn does not queue behind the servers'.
	s.gatherFacts()
	elicit, modes := s.elicitation()
	s.mcp = mcpbridge.Start(servers, mcpbridge.Config{
		SessionID: s.id,
		Client: mcpclient.Options{
			ClientName:    s.a.opts.Name,
			ClientVersion: s.a.opts.Version,
			Logger:        s.a.log,
			BaseEnv:       s.childEnv(),
			Dir:           s.cwd,
			StateDir:      s.cfg.State.Dir,
			Elicit:        elicit,
			ElicitModes:   modes,
			// Roots: the working directory and the additional directories.
			Roots:          s.dirs,
			ConnectTimeout: time.Duration(max(s.cfg.Agent.MCPStartTimeoutMs, 0)) * time.Millisecond,
		},
		Tokens:   s.a.opts.MCPTokens,
		Grace:    time.Duration(max(s.cfg.Agent.MCPGraceMs, 0)) * time.Millisecond,
		Commands: s.commands(),
		Apps:     mcpbridge.RendersApps(s.a.clientCapabilities()),
		// The servers spawn once the session's reply is written
		// (announceCommands): twenty processes starting on a small
		// machine would hold the reply back until most had answered.
		Held:   true,
		Logger: s.a.log,
	}, bridgeSession{s})
}

// announceCommands sends the available commands (see
// mcpbridge.Bridge.Announce); without MCP servers only the first call,
// after the session's reply, sends acpd's own.
func (s *sess) announceCommands(ctx context.Context, initial bool) {
	if initial {
		// The reply is out: the servers spawn first (see startMCP).
		s.mcp.Spawn()
		s.watchExtensions()
	}
	if s.mcp != nil {
		s.mcp.Announce(initial)
	} else if initial {
		s.send(ctx, acp.SessionUpdate{AvailableCommandsUpdate: &acp.AvailableCommandsUpdate{AvailableCommands: s.commands()}})
	}
}

// bridgeSession is a session as its MCP bridge sees it
// (mcpbridge.Session).
type bridgeSession struct{ s *sess }

var _ mcpbridge.Session = bridgeSession{}

func (b bridgeSession) Notify(u acp.SessionUpdate) { b.s.notify(b.s.a.baseContext(), u) }

func (b bridgeSession) Send(u acp.SessionUpdate) { b.s.send(b.s.a.baseContext(), u) }

func (b bridgeSession) Card(title, why string) {
	b.s.notify(b.s.a.baseContext(), notice.Card(title, why))
}

func (b bridgeSession) Notice(sev acp.NoticeSeverity, title string) {
	b.s.notice(b.s.a.baseContext(), sev, title)
}

func (b bridgeSession) Turn() (context.Context, bool) {
	return b.s.slot.Running()
}

func (b bridgeSession) Peer() (acp.ClientConn, bool) { return b.s.a.peer() }

func (b bridgeSession) Model() (string, model.Backend, model.ModelInfo, error) {
	ref := b.s.settings().Model
	backend, info, err := b.s.a.opts.Resolve(ref)
	return ref, backend, info, err
}

func (b bridgeSession) Mode() permissions.Mode { return permissions.Mode(b.s.settings().Mode) }

func (b bridgeSession) Prompt(ctx context.Context, prompt []acp.ContentBlock) error {
	_, err := handlers{b.s.a}.Prompt(ctx, &acp.PromptRequest{SessionID: b.s.id, Prompt: prompt})
	return err
}
