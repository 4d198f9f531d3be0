package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"acpd/acp"
	"acpd/acp/jsonrpc"
)

// DialOptions tunes Dial beyond the Client's Options. Nil selects defaults.
type DialOptions struct {
	// Info names this client in initialize; empty means "acpd".
	Info acp.Implementation
	// MaxLineBytes bounds one message from the agent (jsonrpc.Options).
	MaxLineBytes int
	// OnWrite, when not nil, is told the absolute path of every file an
	// fs/write_text_file request replaced, after it did.
	OnWrite func(path string)
	// CapabilitiesMeta, when not nil, is sent as clientCapabilities._meta
	// (an extension's opt-in, e.g. MCP Apps' "io.modelcontextprotocol/ui").
	CapabilitiesMeta map[string]any
}

// Conn is an initialized connection to an agent, hosted by a Client that
// serves its fs/*, terminal/* and permission requests (Options). Its
// methods are safe for concurrent use. Close it to stop the agent.
type Conn struct {
	cl     *Client
	rpc    *jsonrpc.Conn
	agent  acp.AgentConn
	stream *Stream
	init   acp.InitializeResponse

	mu        sync.Mutex
	replaying map[acp.SessionID]bool

	watch   sync.WaitGroup // the goroutine watching the agent's exit
	closing chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// ErrAgentExited wraps the failure of a call because the agent ended (it
// crashed, or exited in the middle of the conversation).
var ErrAgentExited = errors.New("the agent exited")

// Dial connects to the agent through t, starts serving it as o describes
// and initializes it (protocol version 1, file system and terminal
// capabilities, form elicitation when o.Elicit is set). Session updates
// reach o.OnUpdate in order with the responses to the calls that caused
// them; those an agent replays while it loads a session (LoadSession) are
// not delivered. On error nothing is left running.
func Dial(ctx context.Context, t Transport, o Options, d *DialOptions) (*Conn, error) {
	if d == nil {
		d = &DialOptions{}
	}
	c := &Conn{replaying: map[acp.SessionID]bool{}, closing: make(chan struct{})}
	onUpdate := o.OnUpdate
	o.OnUpdate = func(n acp.SessionNotification) {
		c.mu.Lock()
		replay := c.replaying[n.SessionID]
		c.mu.Unlock()
		if !replay && onUpdate != nil {
			onUpdate(n)
		}
	}
	c.cl = New(o)
	s, err := t.Connect(ctx)
	if err != nil {
		c.cl.Close()
		return nil, err
	}
	c.stream = s
	h := c.cl.Handler()
	if d.OnWrite != nil {
		inner := h
		h = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			res, err := inner(ctx, method, params)
			if err == nil && method == acp.ClientMethodFsWriteTextFile {
				var req acp.WriteTextFileRequest
				if json.Unmarshal(params, &req) == nil {
					d.OnWrite(req.Path)
				}
			}
			return res, err
		}
	}
	c.rpc = jsonrpc.NewConn(context.Background(), s.R, s.W, h, jsonrpc.Options{
		Logger:       c.cl.log,
		MaxLineBytes: d.MaxLineBytes,
		// Updates run on the read loop, so they are handled before the
		// reply to the request that caused them.
		Immediate: func(m string) bool { return m == acp.ClientMethodSessionUpdate },
	})
	info := d.Info
	if info.Name == "" {
		info.Name = "acpd"
	}
	c.agent = acp.NewAgentConn(c.rpc)
	caps := &acp.ClientCapabilities{
		Fs:       &acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true},
		Terminal: true,
		Meta:     d.CapabilitiesMeta,
	}
	if o.Elicit != nil {
		caps.Elicitation = &acp.ElicitationCapabilities{Form: &acp.ElicitationFormCapabilities{}}
	}
	ini, err := c.agent.Initialize(ctx, &acp.InitializeRequest{
		ProtocolVersion:    1,
		ClientCapabilities: caps,
		ClientInfo:         &info,
	})
	if err = c.fail(ctx, err); err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if c.stream.Exited != nil {
		// An agent whose process ended is gone, even when something it
		// started still holds its output open: fail what is outstanding.
		c.watch.Add(1)
		go func() {
			defer c.watch.Done()
			select {
			case <-c.stream.Exited:
				c.rpc.Close()
			case <-c.closing:
			}
		}()
	}
	c.init = *ini
	if c.init.AgentCapabilities == nil {
		c.init.AgentCapabilities = &acp.AgentCapabilities{}
	}
	return c, nil
}

// ExtMethod sends the extension request method (a name starting with "_")
// to the agent and returns its result.
func (c *Conn) ExtMethod(ctx context.Context, method string, params any) (json.RawMessage, error) {
	var res json.RawMessage
	err := c.fail(ctx, c.rpc.Call(ctx, method, params, &res))
	return res, err
}

// Initialize returns the agent's reply to initialize.
func (c *Conn) Initialize() acp.InitializeResponse { return c.init }

// Done is closed when the agent's output has ended (it exited or closed
// it) or the connection was closed.
func (c *Conn) Done() <-chan struct{} { return c.rpc.Done() }

// fail reports err of a call, an agent that died as ErrAgentExited.
func (c *Conn) fail(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return err
	}
	// Not a reply: the connection failed. When the agent exited (or its
	// output ended), say so, with its exit status once it is known.
	timer := time.NewTimer(time.Second)
	defer timer.Stop()
	select {
	case <-c.exited():
	case <-c.rpc.Done():
		select {
		case <-c.exited():
		case <-timer.C:
			return fmt.Errorf("%w: %v", ErrAgentExited, err)
		}
	case <-timer.C:
		return err
	}
	if xerr := c.stream.ExitErr(); xerr != nil {
		return fmt.Errorf("%w: %v", ErrAgentExited, xerr)
	}
	return fmt.Errorf("%w: %v", ErrAgentExited, err)
}

func (c *Conn) exited() <-chan struct{} {
	if c.stream.Exited == nil {
		return nil
	}
	return c.stream.Exited
}

// Close ends the connection: the agent's input is closed and the agent is
// stopped (see the Transport; CommandTransport escalates to signals), the
// commands it started on terminals are killed, and everything is waited
// for. It returns how the agent ended. Idempotent.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closing)
		c.watch.Wait()
		c.rpc.Close()
		c.closeErr = c.stream.Stop()
		c.cl.Close()
	})
	return c.closeErr
}

// ErrCannotList is returned by LatestSession when the agent does not list
// sessions.
var ErrCannotList = errors.New("the agent does not list sessions")

// LatestSession returns the id of the most recently updated session the
// agent lists for cwd (session/list, every page), or "" when it has none.
func (c *Conn) LatestSession(ctx context.Context, cwd string) (acp.SessionID, error) {
	caps := c.init.AgentCapabilities
	if caps.SessionCapabilities == nil || caps.SessionCapabilities.List == nil {
		return "", ErrCannotList
	}
	var best acp.SessionInfo
	var cursor *string
	for page := 0; page < 1000; page++ {
		res, err := c.agent.ListSessions(ctx, &acp.ListSessionsRequest{Cwd: &cwd, Cursor: cursor})
		if err = c.fail(ctx, err); err != nil {
			return "", fmt.Errorf("session/list: %w", err)
		}
		for _, s := range res.Sessions {
			if s.Cwd != cwd {
				continue
			}
			if best.SessionID == "" || updated(s) > updated(best) {
				best = s
			}
		}
		if res.NextCursor == nil || *res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	return best.SessionID, nil
}

// updated is the session's RFC 3339 update time, which sorts as text
// when agents use one format (UTC); "" when unknown.
func updated(s acp.SessionInfo) string {
	if s.UpdatedAt == nil {
		return ""
	}
	if t, err := time.Parse(time.RFC3339Nano, *s.UpdatedAt); err == nil {
		return t.UTC().Format("2006-01-02T15:04:05.000000000Z")
	}
	return *s.UpdatedAt
}

// ErrCannotDelete is returned by DeleteSession when the agent does not
// delete sessions.
var ErrCannotDelete = errors.New("the agent does not delete sessions")

// DeleteSession removes a session from the agent's list (session/delete),
// when the agent offers it.
func (c *Conn) DeleteSession(ctx context.Context, id acp.SessionID) error {
	caps := c.init.AgentCapabilities
	if caps.SessionCapabilities == nil || caps.SessionCapabilities.Delete == nil {
		return ErrCannotDelete
	}
	_, err := c.agent.DeleteSession(ctx, &acp.DeleteSessionRequest{SessionID: id})
	if err = c.fail(ctx, err); err != nil {
		return fmt.Errorf("session/delete: %w", err)
	}
	return nil
}

// TerminalOutput returns the output of a terminal the agent created in
// session sid and has not released (terminal/output's answer), and whether
// the terminal exists.
func (c *Conn) TerminalOutput(ctx context.Context, sid acp.SessionID, id acp.TerminalID) (acp.TerminalOutputResponse, bool) {
	t, err := c.cl.terminal(sid, id)
	if err != nil {
		return acp.TerminalOutputResponse{}, false
	}
	out, err := t.Output(ctx)
	if err != nil {
		return acp.TerminalOutputResponse{}, true
	}
	return acp.TerminalOutputResponse{Output: out.Output, Truncated: out.Truncated, ExitStatus: exitStatus(out.Exit)}, true
}

// SessionParams are the parameters of a session's start.
type SessionParams struct {
	// Cwd is the session's working directory (absolute).
	Cwd string
	// McpServers are passed to the agent; nil sends none.
	McpServers []acp.McpServer
}

func (p SessionParams) servers() []acp.McpServer {
	if p.McpServers == nil {
		return []acp.McpServer{}
	}
	return p.McpServers
}

// NewSession starts a session (session/new).
func (c *Conn) NewSession(ctx context.Context, p SessionParams) (*Session, error) {
	res, err := c.agent.NewSession(ctx, &acp.NewSessionRequest{Cwd: p.Cwd, McpServers: p.servers()})
	if err = c.fail(ctx, err); err != nil {
		return nil, fmt.Errorf("session/new: %w", err)
	}
	return c.session(res.SessionID, res.ConfigOptions, res.Modes), nil
}

// ErrCannotResume is returned by ResumeSession when the agent offers
// neither session/resume nor session/load.
var ErrCannotResume = errors.New("the agent can neither resume nor load sessions")

// ResumeSession continues session id: with session/resume when the agent
// offers it, else with session/load (whose replay of the conversation is
// not delivered to OnUpdate).
func (c *Conn) ResumeSession(ctx context.Context, id acp.SessionID, p SessionParams) (*Session, error) {
	caps := c.init.AgentCapabilities
	switch {
	case caps.SessionCapabilities != nil && caps.SessionCapabilities.Resume != nil:
		res, err := c.agent.ResumeSession(ctx, &acp.ResumeSessionRequest{SessionID: id, Cwd: p.Cwd, McpServers: p.servers()})
		if err = c.fail(ctx, err); err != nil {
			return nil, fmt.Errorf("session/resume: %w", err)
		}
		return c.session(id, res.ConfigOptions, res.Modes), nil
	case caps.LoadSession:
		c.setReplay(id, true)
		res, err := c.agent.LoadSession(ctx, &acp.LoadSessionRequest{SessionID: id, Cwd: p.Cwd, McpServers: p.servers()})
		c.setReplay(id, false)
		if err = c.fail(ctx, err); err != nil {
			return nil, fmt.Errorf("session/load: %w", err)
		}
		return c.session(id, res.ConfigOptions, res.Modes), nil
	}
	return nil, ErrCannotResume
}

func (c *Conn) setReplay(id acp.SessionID, on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if on {
		c.replaying[id] = true
	} else {
		delete(c.replaying, id)
	}
}

func (c *Conn) session(id acp.SessionID, opts []acp.SessionConfigOption, modes *acp.SessionModeState) *Session {
	s := &Session{ID: id, conn: c}
	for _, o := range opts {
		if o.ID == "mode" && o.Select != nil {
			s.modeOption = true
			for _, v := range o.Select.Options.Ungrouped {
				s.modes = append(s.modes, string(v.Value))
			}
			for _, g := range o.Select.Options.Grouped {
				for _, v := range g.Options {
					s.modes = append(s.modes, string(v.Value))
				}
			}
			return s
		}
	}
	if modes != nil {
		for _, m := range modes.AvailableModes {
			s.modes = append(s.modes, string(m.ID))
		}
	}
	return s
}

// Session is one session of a Conn.
type Session struct {
	ID   acp.SessionID
	conn *Conn

	modeOption bool     // the agent offers the "mode" config option
	modes      []string // offered mode ids (or "mode" option values)
}

// Modes returns the modes the agent offered when the session started: the
// values of its "mode" configuration option when it has one, else the ids of
// its session modes. Nil when it offers none.
func (s *Session) Modes() []string { return slices.Clone(s.modes) }

// ModeError is returned by SetMode for a mode the agent does not offer.
type ModeError struct {
	Mode    string
	Offered []string
}

func (e *ModeError) Error() string {
	if len(e.Offered) == 0 {
		return fmt.Sprintf("the agent offers no modes (asked for %q)", e.Mode)
	}
	return fmt.Sprintf("the agent offers no mode %q (it offers %s)", e.Mode, strings.Join(e.Offered, ", "))
}

// SetMode selects one of Modes: through the "mode" configuration option
// when the agent has one, else through session/set_mode. A mode not offered
// is a *ModeError and nothing is sent.
func (s *Session) SetMode(ctx context.Context, mode string) error {
	if !slices.Contains(s.modes, mode) {
		return &ModeError{Mode: mode, Offered: s.Modes()}
	}
	var err error
	if s.modeOption {
		_, err = s.conn.agent.SetSessionConfigOption(ctx, &acp.SetSessionConfigOptionRequest{
			SessionID: s.ID, ConfigID: "mode",
			ValueID: &acp.SetSessionConfigOptionRequestValueID{Value: acp.SessionConfigValueID(mode)},
		})
	} else {
		_, err = s.conn.agent.SetSessionMode(ctx, &acp.SetSessionModeRequest{SessionID: s.ID, ModeID: acp.SessionModeID(mode)})
	}
	if err = s.conn.fail(ctx, err); err != nil {
		return fmt.Errorf("setting mode %s: %w", mode, err)
	}
	return nil
}

// ErrUnknownStopReason wraps a stop reason outside ACP v1's.
var ErrUnknownStopReason = errors.New("unknown stop reason")

// Prompt runs one turn (session/prompt) and returns the agent's reply. Its
// updates reach Options.OnUpdate before Prompt returns. A stop reason ACP v1
// does not define is returned with an error wrapping ErrUnknownStopReason.
// Prompt waits for the turn's end even after Cancel; ctx ending abandons
// the call.
func (s *Session) Prompt(ctx context.Context, prompt ...acp.ContentBlock) (acp.PromptResponse, error) {
	resp, err := s.conn.agent.Prompt(ctx, &acp.PromptRequest{SessionID: s.ID, Prompt: prompt})
	if err = s.conn.fail(ctx, err); err != nil {
		return acp.PromptResponse{}, fmt.Errorf("session/prompt: %w", err)
	}
	res := *resp
	switch res.StopReason {
	case acp.StopReasonEndTurn, acp.StopReasonCancelled, acp.StopReasonRefusal,
		acp.StopReasonMaxTokens, acp.StopReasonMaxTurnRequests:
		return res, nil
	}
	return res, fmt.Errorf("%w %q", ErrUnknownStopReason, res.StopReason)
}

// Cancel asks the agent to end the running turn (session/cancel); the turn
// then ends with the stop reason "cancelled".
func (s *Session) Cancel(ctx context.Context) error {
	return s.conn.agent.Cancel(ctx, &acp.CancelNotification{SessionID: s.ID})
}
