package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/agent/internal/handshake"
	"acpd/agent/internal/listing"
	"acpd/agent/internal/replay"
	"acpd/agent/internal/turnerr"
	"acpd/files"
	"acpd/model"
	"acpd/session"
)

func (a *Agent) connection() *jsonrpc.Conn {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.conn
}

func (a *Agent) clientCapabilities() acp.ClientCapabilities {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.clientCaps
}

// canLogIn reports whether the client can run acpd's login for the user
// (a terminal auth method, or Zed's terminal-auth _meta): only such a
// client is helped by an auth-required error, which it answers with the
// login; others (CodeCompanion) show it as a raw error and stop.
func (a *Agent) canLogIn() bool {
	caps := a.clientCapabilities()
	return (caps.Auth != nil && caps.Auth.Terminal) || caps.Meta["terminal-auth"] == true
}

// defaultModelInfo describes the default model, when it resolves.
func (a *Agent) defaultModelInfo() (model.ModelInfo, bool) {
	ref := a.opts.Config.User().Model
	if ref == "" {
		ref = a.fallbackModel()
	}
	if ref == "" {
		return model.ModelInfo{}, false
	}
	_, info, err := a.opts.Resolve(ref)
	return info, err == nil
}

func (h handlers) Initialize(ctx context.Context, p *acp.InitializeRequest) (*acp.InitializeResponse, error) {
	a := h.a
	a.mu.Lock()
	if p.ClientCapabilities != nil {
		a.clientCaps = *p.ClientCapabilities
	}
	a.clientInfo = p.ClientInfo
	a.groups.Store(p.ClientInfo != nil && strings.EqualFold(p.ClientInfo.Name, "zed"))
	a.initialized = true
	a.mu.Unlock()
	info, _ := a.defaultModelInfo()
	return handshake.Reply(p.ClientCapabilities, a.opts.Name, a.opts.Version, info.Audio, a.opts.Logout != nil), nil
}

func (h handlers) Authenticate(ctx context.Context, p *acp.AuthenticateRequest) (*acp.AuthenticateResponse, error) {
	a := h.a
	if err := handshake.Check(p.MethodID); err != nil {
		return nil, err
	}
	a.reload()
	if a.fallbackModel() == "" && a.opts.Config.User().Model == "" {
		if a.canLogIn() {
			return nil, turnerr.NoModel("", ErrNoModel)
		}
		// A client that cannot log in (CodeCompanion authenticates
		// before session/new) gets its session: the model selector and
		// the first answer say what to do.
		a.log.Warn("authenticate: no model is configured; sessions will say how to configure one")
	}
	return &acp.AuthenticateResponse{}, nil
}

func (h handlers) Logout(ctx context.Context, p *acp.LogoutRequest) (*acp.LogoutResponse, error) {
	a := h.a
	if a.opts.Logout == nil {
		return nil, jsonrpc.ErrMethodNotFound(acp.AgentMethodLogout)
	}
	if err := a.opts.Logout(); err != nil {
		return nil, fmt.Errorf("removing stored keys: %w", err)
	}
	// The default model may have come from the keys just deleted.
	a.reload()
	return &acp.LogoutResponse{}, nil
}

// checkDirs validates cwd and additionalDirectories: absolute, existing
// directories (files.CheckRoots).
func checkDirs(cwd string, dirs []string) error {
	if err := files.CheckRoots(cwd, dirs); err != nil {
		return invalidParams("%v", err)
	}
	return nil
}

// register makes s reachable by id; it fails when the agent shut down.
func (a *Agent) register(s *sess) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return errors.New("agent is shutting down")
	}
	if _, dup := a.sessions[s.id]; dup {
		return invalidParams("session %q is already open in this connection", s.id)
	}
	a.sessions[s.id] = s
	return nil
}

func (h handlers) NewSession(ctx context.Context, p *acp.NewSessionRequest) (*acp.NewSessionResponse, error) {
	a := h.a
	if err := checkDirs(p.Cwd, p.AdditionalDirectories); err != nil {
		return nil, err
	}
	a.refreshCredentials(a.baseContext())
	cfg, warning, err := a.opts.Config.ForSession(p.Cwd)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	// The session is made, its MCP servers counted as starting and its
	// facts' git commands started, before its log is created; the
	// servers spawn once the reply is written (startMCP), so that twenty
	// of them starting do not hold it back. The session is registered
	// (and replies) only once the log is durable.
	set := a.initialSettings(cfg)
	id := newID("s_")
	s, err := a.newSess(acp.SessionID(id), nil, p.Cwd, p.AdditionalDirectories, cfg, set, p.McpServers)
	if err != nil {
		return nil, err
	}
	s.configWarning = warning
	// The settings are written with the log's header: durable when Create
	// returns, with no further fsync before the reply.
	l, err := a.opts.Store.Create(session.Meta{ID: id, Cwd: p.Cwd, AdditionalDirectories: p.AdditionalDirectories}, session.Entry{Kind: kindMeta, Data: set})
	if err != nil {
		s.close()
		return nil, fmt.Errorf("creating session: %w", err)
	}
	s.log = l
	if err := a.register(s); err != nil {
		s.close()
		return nil, err
	}
	// Clients drop updates that arrive before the session/new reply.
	jsonrpc.AfterReply(ctx, func() { s.sendCommands(a.baseContext()) })
	return &acp.NewSessionResponse{
		SessionID:     s.id,
		Modes:         s.modeState(),
		ConfigOptions: s.configOptions(),
	}, nil
}

func (a *Agent) baseContext() context.Context {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.baseCtx == nil {
		return context.Background()
	}
	return a.baseCtx
}

// openStored opens a stored session for load or resume, restores it and
// makes it reachable; it returns the stored updates (for load to replay).
func (a *Agent) openStored(id acp.SessionID, cwd string, dirs []string, mcp []acp.McpServer) (*sess, []json.RawMessage, error) {
	if err := checkDirs(cwd, dirs); err != nil {
		return nil, nil, err
	}
	a.refreshCredentials(a.baseContext())
	if a.lookup(id) != nil {
		return nil, nil, invalidParams("session %q is already open in this connection", id)
	}
	cfg, warning, err := a.opts.Config.ForSession(cwd)
	if err != nil {
		return nil, nil, invalidParams("%v", err)
	}
	l, recs, err := a.opts.Store.Open(string(id))
	if err != nil {
		var le *session.LockedError
		switch {
		case errors.Is(err, session.ErrNotFound):
			return nil, nil, &jsonrpc.Error{Code: int(acp.ErrorCodeResourceNotFound), Message: fmt.Sprintf("session %q not found", id)}
		case errors.As(err, &le):
			// Shown as is by editors: say what to do.
			return nil, nil, &jsonrpc.Error{Code: int(acp.ErrorCodeInvalidRequest), Message: "This session is open in another window (" + le.Error() + "): close it there, or continue it in that window."}
		case errors.Is(err, session.ErrInvalidID):
			return nil, nil, invalidParams("%v", err)
		}
		return nil, nil, fmt.Errorf("opening session %s: %w", id, err)
	}
	s, err := a.newSess(acp.SessionID(l.ID()), l, cwd, dirs, cfg, a.initialSettings(cfg), mcp)
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	s.configWarning = warning
	updates, err := s.restore(recs)
	if err == nil {
		err = a.register(s)
	}
	if err != nil {
		s.close()
		return nil, nil, err
	}
	return s, updates, nil
}

func (h handlers) LoadSession(ctx context.Context, p *acp.LoadSessionRequest) (*acp.LoadSessionResponse, error) {
	a := h.a
	s, updates, err := a.openStored(p.SessionID, p.Cwd, p.AdditionalDirectories, p.McpServers)
	if err != nil {
		return nil, err
	}
	// Replay the conversation as the client saw it, then the current mode
	// and config options, all before the reply.
	s.mu.Lock()
	results := replay.Results(s.transcript)
	s.mu.Unlock()
	if conn := a.connection(); conn != nil {
		// The updates that follow leave with the replay, in one write.
		defer conn.Burst()()
	}
	s.sendReplay(ctx, replay.Updates(updates, replay.Options{Compaction: a.compactionUpdates(), Terminals: a.wantsTerminalMeta(), Results: results, Logger: a.log.With("session", s.id)}))
	st := s.settings()
	s.send(ctx, acp.SessionUpdate{CurrentModeUpdate: &acp.CurrentModeUpdate{CurrentModeID: acp.SessionModeID(st.Mode)}})
	s.send(ctx, acp.SessionUpdate{ConfigOptionUpdate: &acp.ConfigOptionUpdate{ConfigOptions: s.configOptions()}})
	if st.Title != "" {
		title := st.Title
		s.send(ctx, acp.SessionUpdate{SessionInfoUpdate: &acp.SessionInfoUpdate{Title: &title}})
	}
	jsonrpc.AfterReply(ctx, func() { s.sendCommands(a.baseContext()) })
	return &acp.LoadSessionResponse{Modes: s.modeState(), ConfigOptions: s.configOptions()}, nil
}

func (h handlers) ResumeSession(ctx context.Context, p *acp.ResumeSessionRequest) (*acp.ResumeSessionResponse, error) {
	a := h.a
	s, _, err := a.openStored(p.SessionID, p.Cwd, p.AdditionalDirectories, p.McpServers)
	if err != nil {
		return nil, err
	}
	jsonrpc.AfterReply(ctx, func() { s.sendCommands(a.baseContext()) })
	return &acp.ResumeSessionResponse{Modes: s.modeState(), ConfigOptions: s.configOptions()}, nil
}

func (h handlers) ListSessions(ctx context.Context, p *acp.ListSessionsRequest) (*acp.ListSessionsResponse, error) {
	return listing.List(h.a.opts.Store, p, func(id acp.SessionID) listing.State {
		s := h.a.lookup(id)
		switch {
		case s == nil:
			return listing.Closed
		case !s.prompted.Load():
			return listing.OpenEmpty
		}
		return listing.Open
	})
}

// unregister makes the open session id unreachable and closes it; it
// reports whether one was open.
func (a *Agent) unregister(id acp.SessionID) bool {
	a.mu.Lock()
	s := a.sessions[id]
	delete(a.sessions, id)
	a.mu.Unlock()
	if s != nil {
		s.close()
	}
	return s != nil
}

func (h handlers) CloseSession(ctx context.Context, p *acp.CloseSessionRequest) (*acp.CloseSessionResponse, error) {
	if !h.a.unregister(p.SessionID) {
		return nil, &jsonrpc.Error{Code: int(acp.ErrorCodeResourceNotFound), Message: fmt.Sprintf("session %q is not open", p.SessionID)}
	}
	return &acp.CloseSessionResponse{}, nil
}

func (h handlers) DeleteSession(ctx context.Context, p *acp.DeleteSessionRequest) (*acp.DeleteSessionResponse, error) {
	a := h.a
	a.unregister(p.SessionID)
	if err := a.opts.Store.Delete(string(p.SessionID)); err != nil {
		var le *session.LockedError
		switch {
		case errors.Is(err, session.ErrNotFound):
			return nil, &jsonrpc.Error{Code: int(acp.ErrorCodeResourceNotFound), Message: fmt.Sprintf("session %q not found", p.SessionID)}
		case errors.As(err, &le):
			return nil, &jsonrpc.Error{Code: int(acp.ErrorCodeInvalidRequest), Message: le.Error()}
		case errors.Is(err, session.ErrInvalidID):
			return nil, invalidParams("%v", err)
		}
		return nil, err
	}
	return &acp.DeleteSessionResponse{}, nil
}

// sendReplay writes session/load's replay, after anything queued before
// it: each update (compact JSON, as replay yields it) is written as it is
// into the params of its session/update, thousands of them in 64 KiB
// writes. It stops at the first that cannot be written (the connection
// closed, ctx ended).
func (s *sess) sendReplay(ctx context.Context, updates iter.Seq[json.RawMessage]) {
	s.out.Flush(ctx)
	conn := s.a.connection()
	if conn == nil {
		return
	}
	tail := []byte("}")
	b := conn.Batch(ctx)
	for u := range updates {
		if b.NotifyRaw(acp.ClientMethodSessionUpdate, s.head, u, tail) != nil {
			break
		}
	}
	if err := b.Flush(); err != nil {
		s.a.log.Debug("session/load replay not sent", "session", s.id, "err", err)
	}
}
