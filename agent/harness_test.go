package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/config"
	"acpd/mcpclient/oauth"
	"acpd/model"
	"acpd/model/replay"
	"acpd/permissions"
	"acpd/session"
	"acpd/terminal"
)

// liveness bounds every wait in these tests. Reaching it means something
// hangs (a bug); it is never a speed assertion.
const liveness = 30 * time.Second

// Model references the test resolver knows.
const (
	mainModel  = "test/main"
	otherModel = "test/other"
)

// testEnv is the world of one test on disk: a project directory, a
// directory outside it, XDG directories, the session store and the
// permissions store. Every Agent the test starts (each one an acpd
// connection in this process) shares it, as processes share a machine.
type testEnv struct {
	t       *testing.T
	base    string
	cwd     string // the project, a session's cwd
	outside string // a directory outside every session root
	getenv  func(string) string
	loader  *config.Loader
	store   *session.Store
	perms   *permissions.Store

	mu       sync.Mutex
	backends map[string]model.Backend
}

// newEnv makes a fresh world. userConfig, when not empty, is the user's
// config.toml. The default model is mainModel; it resolves to nothing
// until setModel gives it a backend.
// The modes' ids on the wire.
const (
	modeAsk      = "ask"
	modeAutoEdit = "auto-edit"
	modePlan     = "plan"
	modeFull     = "full"
)

func newEnv(t *testing.T, userConfig string) *testEnv {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{
		t:        t,
		base:     base,
		cwd:      filepath.Join(base, "project"),
		outside:  filepath.Join(base, "outside"),
		backends: map[string]model.Backend{},
	}
	for _, d := range []string{e.cwd, e.outside, filepath.Join(base, "config", "acpd"), filepath.Join(base, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	vars := map[string]string{
		"XDG_CONFIG_HOME": filepath.Join(base, "config"),
		"XDG_STATE_HOME":  filepath.Join(base, "state"),
		"HOME":            filepath.Join(base, "home"),
		"ACPD_MODEL":      mainModel,
	}
	e.getenv = func(k string) string { return vars[k] }
	// Tests wait for their MCP servers as long as they need (a loaded
	// machine starts node slowly), unless they test the grace itself.
	if !strings.Contains(userConfig, "mcp_grace_ms") {
		if strings.Contains(userConfig, "[agent]\n") {
			userConfig = strings.Replace(userConfig, "[agent]\n", "[agent]\nmcp_grace_ms = 60000\n", 1)
		} else {
			userConfig += "\n[agent]\nmcp_grace_ms = 60000\n"
		}
	}
	if userConfig != "" {
		if err := os.WriteFile(filepath.Join(base, "config", "acpd", "config.toml"), []byte(userConfig), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if e.loader, err = config.NewLoader(config.Overrides{}, e.getenv); err != nil {
		t.Fatal(err)
	}
	if e.store, err = session.Open(context.Background(), e.loader.User().State.Dir); err != nil {
		t.Fatal(err)
	}
	if e.perms, err = permissions.OpenStore(filepath.Join(e.store.Dir(), "permissions.json")); err != nil {
		t.Fatal(err)
	}
	return e
}

// setModel makes ref resolve to b.
func (e *testEnv) setModel(ref string, b model.Backend) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.backends[ref] = b
}

// resolve is the agent's Resolver.
func (e *testEnv) resolve(ref string) (model.Backend, model.ModelInfo, error) {
	e.mu.Lock()
	b := e.backends[ref]
	e.mu.Unlock()
	if b == nil {
		return nil, model.ModelInfo{}, fmt.Errorf("%w: no test backend for %q", ErrNoModel, ref)
	}
	_, id, _ := model.ParseRef(ref)
	return b, model.ModelInfo{ID: id, Tools: true, Images: true}, nil
}

// newAgent returns an Agent wired to the environment, as cmd/acpd wires
// the real one.
func (e *testEnv) newAgent() *Agent {
	return New(Options{
		Name:        "acpd-test",
		Version:     "0.0.0-test",
		Config:      e.loader,
		Store:       e.store,
		Resolve:     e.resolve,
		Models:      func(context.Context) []string { return []string{mainModel, otherModel} },
		Permissions: e.perms,
		Protected:   []string{config.UserDir(e.getenv), e.store.Dir()},
		Outputs:     filepath.Join(e.base, "outputs"),
		MCPTokens:   oauth.OpenTokenStore(filepath.Join(config.UserDir(e.getenv), "mcp-tokens.json")),
		Env:         terminal.FilterEnv(os.Environ(), nil),
		Getenv:      e.getenv,
		Logger:      slog.New(slog.DiscardHandler),
	})
}

// script writes a replay script (one JSON line per argument) and loads it.
func (e *testEnv) script(lines ...string) model.Backend {
	e.t.Helper()
	f, err := os.CreateTemp(e.base, "script-*.jsonl")
	if err != nil {
		e.t.Fatal(err)
	}
	_, err = f.WriteString(strings.Join(lines, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		e.t.Fatal(err)
	}
	b, err := replay.New(f.Name())
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// path returns the absolute path of a file in the project.
func (e *testEnv) path(rel string) string { return filepath.Join(e.cwd, rel) }

// write creates a project file (and its directories).
func (e *testEnv) write(rel, content string) {
	e.t.Helper()
	p := e.path(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// ---------------------------------------------------------------------------
// The fake client.

// permFunc answers one session/request_permission; the result is sent as
// the response (any JSON-encodable value, so tests can forge answers).
type permFunc func(ctx context.Context, req acp.RequestPermissionRequest) (any, error)

// choose answers by selecting the offered option of the given kind.
func choose(kind acp.PermissionOptionKind) permFunc {
	return func(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
		for _, o := range req.Options {
			if o.Kind == kind {
				return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.SelectedPermissionOutcome{OptionID: o.OptionID}}}, nil
			}
		}
		return nil, fmt.Errorf("no %s option offered", kind)
	}
}

// termCall is one terminal/* request the client received.
type termCall struct {
	method string
	id     acp.TerminalID
	create *acp.CreateTerminalRequest
}

// client is a fake editor: a jsonrpc.Conn speaking to an Agent over two
// os.Pipes, recording every message on the wire (in arrival order) and
// answering the agent's requests with per-test behaviour.
type client struct {
	t     *testing.T
	env   *testEnv
	agent *Agent
	conn  *jsonrpc.Conn
	in    *wireTap    // agent → client
	out   *wireWriter // client → agent

	cancelServe context.CancelFunc
	served      chan struct{} // closed when Serve returned
	serveErr    error
	closeOnce   sync.Once

	mu        sync.Mutex
	perm      permFunc
	permReqs  []acp.RequestPermissionRequest
	buffers   map[string]string // editor buffers served by fs/read_text_file
	fsReads   []acp.ReadTextFileRequest
	fsWrites  []acp.WriteTextFileRequest
	termOut   string // what the editor's terminals print
	termTrunc bool   // the editor's terminals kept only termOut, the end
	termCalls []termCall
	errs      []string
	// elicit answers elicitation/create (nil: an unexpected request).
	elicit func(ctx context.Context, req acp.CreateElicitationRequest) (any, error)
}

// fullSession starts a client without capabilities and opens a session in
// e's cwd in full mode.
func (e *testEnv) fullSession() (*client, acp.SessionID) {
	c := e.start(nil)
	sid := c.newSession()
	c.mustMode(sid, modeFull)
	return c, sid
}

// allowingSession starts a client without capabilities that allows every
// permission request once, and opens a session in e's cwd.
func (e *testEnv) allowingSession() (*client, acp.SessionID) {
	c := e.start(nil)
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	return c, c.newSession()
}

// start runs a new Agent on the environment and connects a client to it,
// initialized with caps (nil: no fs, no terminal). The client is closed at
// the end of the test.
func (e *testEnv) start(caps *acp.ClientCapabilities) *client {
	e.t.Helper()
	c := e.connect()
	var resp acp.InitializeResponse
	if err := c.call(acp.AgentMethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersion1, ClientCapabilities: caps}, &resp); err != nil {
		e.t.Fatalf("initialize: %v", err)
	}
	return c
}

// connect is start without initialize.
func (e *testEnv) connect() *client { return e.connectWith(nil, nil) }

// connectWith is startWith without initialize.
func (e *testEnv) connectWith(adjust func(*model.ModelInfo), hook hookFunc) *client {
	t := e.t
	t.Helper()
	agentIn, clientOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	clientIn, agentOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, env: e, agent: e.newAgent(), buffers: map[string]string{}, served: make(chan struct{})}
	if adjust != nil {
		c.agent.opts.Resolve = func(ref string) (model.Backend, model.ModelInfo, error) {
			b, info, err := e.resolve(ref)
			if err == nil {
				adjust(&info)
			}
			return b, info, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancelServe = cancel
	go func() {
		defer close(c.served)
		c.serveErr = c.agent.Serve(ctx, agentIn, agentOut)
	}()
	c.in = &wireTap{r: clientIn}
	c.out = &wireWriter{w: clientOut}
	handler := c.handle
	if hook != nil {
		handler = func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if r, err := hook(c, ctx, method, params); err != errPass {
				return r, err
			}
			return c.handle(ctx, method, params)
		}
	}
	c.conn = jsonrpc.NewConn(context.Background(), c.in, c.out, handler, jsonrpc.Options{Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(c.close)
	return c
}

// close ends the connection the way an editor does: it closes the agent's
// input, waits for Serve to return, then closes its own side.
func (c *client) close() {
	c.closeOnce.Do(func() {
		_ = c.out.Close()
		if !c.waitServed() {
			c.t.Errorf("Serve did not return after its input was closed")
			c.cancelServe()
			<-c.served
		}
		c.cancelServe()
		if c.serveErr != nil {
			c.t.Errorf("Serve: %v", c.serveErr)
		}
		_ = c.conn.Close()
		<-c.conn.Done()
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, e := range c.errs {
			c.t.Errorf("client: %s", e)
		}
		for _, e := range c.in.problems() {
			c.t.Errorf("wire: %s", e)
		}
	})
}

// waitServed waits (bounded by liveness) for Serve to return.
func (c *client) waitServed() bool {
	tm := time.NewTimer(liveness)
	defer tm.Stop()
	select {
	case <-c.served:
		return true
	case <-tm.C:
		return false
	}
}

func (c *client) fail(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// setPerm sets how permission requests are answered (nil: reject once).
func (c *client) setPerm(f permFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.perm = f
}

// permissionRequests returns the permission requests received so far.
func (c *client) permissionRequests() []acp.RequestPermissionRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]acp.RequestPermissionRequest(nil), c.permReqs...)
}

func (c *client) handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case acp.ClientMethodSessionUpdate:
		var n acp.SessionNotification
		if err := acp.Unmarshal(params, &n); err != nil {
			c.fail("session/update does not decode: %v: %s", err, params)
		}
		return nil, nil
	case acp.ClientMethodSessionRequestPermission:
		var req acp.RequestPermissionRequest
		if err := acp.Unmarshal(params, &req); err != nil {
			c.fail("session/request_permission does not decode: %v", err)
			return nil, jsonrpc.ErrInvalidParams(err)
		}
		c.mu.Lock()
		c.permReqs = append(c.permReqs, req)
		f := c.perm
		c.mu.Unlock()
		if f == nil {
			f = choose(acp.PermissionOptionKindRejectOnce)
		}
		return f(ctx, req)
	case acp.ClientMethodFsReadTextFile:
		var req acp.ReadTextFileRequest
		if err := acp.Unmarshal(params, &req); err != nil {
			c.fail("fs/read_text_file does not decode: %v", err)
			return nil, jsonrpc.ErrInvalidParams(err)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.fsReads = append(c.fsReads, req)
		content, ok := c.buffers[req.Path]
		if !ok {
			data, err := os.ReadFile(req.Path)
			if err != nil {
				return nil, &jsonrpc.Error{Code: int(acp.ErrorCodeResourceNotFound), Message: err.Error()}
			}
			content = string(data)
		}
		return acp.ReadTextFileResponse{Content: content}, nil
	case acp.ClientMethodFsWriteTextFile:
		var req acp.WriteTextFileRequest
		if err := acp.Unmarshal(params, &req); err != nil {
			c.fail("fs/write_text_file does not decode: %v", err)
			return nil, jsonrpc.ErrInvalidParams(err)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.fsWrites = append(c.fsWrites, req)
		c.buffers[req.Path] = req.Content
		return acp.WriteTextFileResponse{}, nil
	case acp.ClientMethodTerminalCreate:
		var req acp.CreateTerminalRequest
		if err := acp.Unmarshal(params, &req); err != nil {
			c.fail("terminal/create does not decode: %v", err)
			return nil, jsonrpc.ErrInvalidParams(err)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		id := acp.TerminalID(fmt.Sprintf("term-%d", len(c.termCalls)+1))
		c.termCalls = append(c.termCalls, termCall{method: method, id: id, create: &req})
		return acp.CreateTerminalResponse{TerminalID: id}, nil
	case acp.ClientMethodTerminalOutput, acp.ClientMethodTerminalWaitForExit, acp.ClientMethodTerminalKill, acp.ClientMethodTerminalRelease:
		var req acp.TerminalOutputRequest // all four take sessionId and terminalId
		if err := acp.Unmarshal(params, &req); err != nil {
			c.fail("%s does not decode: %v", method, err)
			return nil, jsonrpc.ErrInvalidParams(err)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.termCalls = append(c.termCalls, termCall{method: method, id: req.TerminalID})
		zero := uint32(0)
		switch method {
		case acp.ClientMethodTerminalOutput:
			return acp.TerminalOutputResponse{Output: c.termOut, Truncated: c.termTrunc, ExitStatus: &acp.TerminalExitStatus{ExitCode: &zero}}, nil
		case acp.ClientMethodTerminalWaitForExit:
			return acp.WaitForTerminalExitResponse{ExitCode: &zero}, nil
		case acp.ClientMethodTerminalKill:
			return acp.KillTerminalResponse{}, nil
		}
		return acp.ReleaseTerminalResponse{}, nil
	}
	if method == acp.ClientMethodElicitationComplete { // a notification; tests read it from the wire
		return nil, nil
	}
	if method == acp.ClientMethodElicitationCreate {
		c.mu.Lock()
		f := c.elicit
		c.mu.Unlock()
		if f != nil {
			var req acp.CreateElicitationRequest
			if err := acp.Unmarshal(params, &req); err != nil {
				c.fail("elicitation/create does not decode: %v", err)
				return nil, jsonrpc.ErrInvalidParams(err)
			}
			return f(ctx, req)
		}
	}
	c.fail("unexpected request %s", method)
	return nil, jsonrpc.ErrMethodNotFound(method)
}

// call makes one request, bounded by liveness.
func (c *client) call(method string, params, result any) error {
	ctx, cancel := context.WithTimeout(context.Background(), liveness)
	defer cancel()
	return c.conn.Call(ctx, method, params, result)
}

// callAt is call that also returns the position of the reply in the
// inbound wire log (-1 when no reply arrived). Concurrent calls of the same
// method must not use it.
func (c *client) callAt(method string, params, result any) (int, error) {
	mark := c.out.count()
	err := c.call(method, params, result)
	return c.in.replyPos(c.out.idSince(mark, method)), err
}

// notify sends a notification.
func (c *client) notify(method string, params any) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), liveness)
	defer cancel()
	if err := c.conn.Notify(ctx, method, params); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

// newSession opens a session in the project directory.
func (c *client) newSession() acp.SessionID {
	c.t.Helper()
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: c.env.cwd, McpServers: []acp.McpServer{}}, &resp); err != nil {
		c.t.Fatalf("session/new: %v", err)
	}
	return resp.SessionID
}

// prompt sends a text prompt and returns the stop reason.
func (c *client) prompt(sid acp.SessionID, text string) (acp.StopReason, error) {
	var resp acp.PromptResponse
	err := c.call(acp.AgentMethodSessionPrompt, acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: text}}}}, &resp)
	return resp.StopReason, err
}

// mustPrompt is prompt that expects the given stop reason.
func (c *client) mustPrompt(sid acp.SessionID, text string, want acp.StopReason) {
	c.t.Helper()
	got, err := c.prompt(sid, text)
	if err != nil {
		c.t.Fatalf("prompt %q: %v", text, err)
	}
	if got != want {
		c.t.Fatalf("prompt %q: stop reason %q, want %q", text, got, want)
	}
}

// promptUpdates runs a prompt that must end its turn and returns the
// session's updates up to its reply.
func (c *client) promptUpdates(sid acp.SessionID, text string) []acp.SessionUpdate {
	c.t.Helper()
	var resp acp.PromptResponse
	pos, err := c.callAt(acp.AgentMethodSessionPrompt, acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: text}}}}, &resp)
	if err != nil || resp.StopReason != acp.StopReasonEndTurn {
		c.t.Fatalf("prompt %q: %v %q, want end_turn", text, err, resp.StopReason)
	}
	return c.updatesBetween(sid, -1, pos)
}

// setConfig sets a config option.
func (c *client) setConfig(sid acp.SessionID, id, value string) (*acp.SetSessionConfigOptionResponse, error) {
	var resp acp.SetSessionConfigOptionResponse
	err := c.call(acp.AgentMethodSessionSetConfigOption, acp.SetSessionConfigOptionRequest{
		SessionID: sid, ConfigID: acp.SessionConfigID(id),
		ValueID: &acp.SetSessionConfigOptionRequestValueID{Value: acp.SessionConfigValueID(value)},
	}, &resp)
	return &resp, err
}

// mustMode switches the session's mode.
func (c *client) mustMode(sid acp.SessionID, mode string) {
	c.t.Helper()
	if _, err := c.setConfig(sid, optMode, mode); err != nil {
		c.t.Fatalf("set mode %s: %v", mode, err)
	}
}

// wireUpdate is one session/update as it arrived, with its position in the
// inbound wire log.
type wireUpdate struct {
	pos int
	u   acp.SessionUpdate
}

// updates returns the session/update notifications for sid received so far,
// in arrival order. Every update the agent wrote before a reply the client
// has received is included.
func (c *client) updates(sid acp.SessionID) []wireUpdate {
	var out []wireUpdate
	for _, m := range c.in.messages() {
		if m.Method != acp.ClientMethodSessionUpdate || m.ID != nil {
			continue
		}
		var n acp.SessionNotification
		if err := acp.Unmarshal(m.Params, &n); err != nil || n.SessionID != sid {
			continue
		}
		out = append(out, wireUpdate{pos: m.pos, u: n.Update})
	}
	return out
}

// updatesBetween returns sid's updates with from < pos < to (to < 0: no
// upper bound).
func (c *client) updatesBetween(sid acp.SessionID, from, to int) []acp.SessionUpdate {
	var out []acp.SessionUpdate
	for _, w := range c.updates(sid) {
		if w.pos > from && (to < 0 || w.pos < to) {
			out = append(out, w.u)
		}
	}
	return out
}

// allUpdates returns every update of sid received so far.
func (c *client) allUpdates(sid acp.SessionID) []acp.SessionUpdate {
	return c.updatesBetween(sid, -1, -1)
}

// kind names a session update's variant.
func kind(u acp.SessionUpdate) string {
	b, err := json.Marshal(u)
	if err != nil {
		return "invalid"
	}
	var k struct {
		SessionUpdate string `json:"sessionUpdate"`
	}
	_ = json.Unmarshal(b, &k)
	return k.SessionUpdate
}

// kinds lists the variants of us.
func kinds(us []acp.SessionUpdate) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = kind(u)
	}
	return out
}

// finalStatus is the last status a call's updates set.
func finalStatus(us []acp.SessionUpdate, id string) acp.ToolCallStatus {
	var st acp.ToolCallStatus
	for _, u := range us {
		switch {
		case u.ToolCall != nil && string(u.ToolCall.ToolCallID) == id:
			st = u.ToolCall.Status
		case u.ToolCallUpdate != nil && string(u.ToolCallUpdate.ToolCallID) == id && u.ToolCallUpdate.Status != nil:
			st = *u.ToolCallUpdate.Status
		}
	}
	return st
}

// chunkText concatenates the text of agent message chunks in us.
func chunkText(us []acp.SessionUpdate) string {
	var b strings.Builder
	for _, u := range us {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

// rpcCode returns the JSON-RPC error code of err, or 0.
func rpcCode(err error) int {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// ---------------------------------------------------------------------------
// Wire taps.

// wireMsg is one JSON-RPC message seen on the wire.
type wireMsg struct {
	pos    int
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// wireTap records every line read through it, in order, before the
// connection sees it: its log is the true arrival order of the agent's
// messages.
type wireTap struct {
	r io.ReadCloser

	mu   sync.Mutex
	buf  []byte
	msgs []wireMsg
	bad  []string
}

func (w *wireTap) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if n > 0 {
		w.feed(p[:n])
	}
	return n, err
}

func (w *wireTap) Close() error { return w.r.Close() }

func (w *wireTap) feed(b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := w.buf[:i]
		m := wireMsg{pos: len(w.msgs)}
		if err := json.Unmarshal(line, &m); err != nil {
			w.bad = append(w.bad, fmt.Sprintf("line %q: %v", line, err))
		} else {
			m.Params = bytes.Clone(m.Params)
			m.Result = bytes.Clone(m.Result)
			m.ID = bytes.Clone(m.ID)
			w.msgs = append(w.msgs, m)
		}
		w.buf = w.buf[i+1:]
	}
	w.buf = append([]byte(nil), w.buf...)
}

func (w *wireTap) messages() []wireMsg {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]wireMsg(nil), w.msgs...)
}

func (w *wireTap) problems() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.bad...)
}

// replyPos returns the position of the response with the given raw id, or -1.
func (w *wireTap) replyPos(id string) int {
	if id == "" {
		return -1
	}
	for _, m := range w.messages() {
		if m.Method == "" && string(m.ID) == id {
			return m.pos
		}
	}
	return -1
}

// reply returns the response with the given raw id.
func (w *wireTap) reply(id string) (wireMsg, bool) {
	if p := w.replyPos(id); p >= 0 {
		return w.messages()[p], true
	}
	return wireMsg{}, false
}

// wireWriter is the client's output: it records the id and method of every
// request written and lets tests write raw bytes between whole messages.
type wireWriter struct {
	w io.WriteCloser

	wmu sync.Mutex // serialises writes

	mu   sync.Mutex
	sent []wireMsg // requests and notifications, in order
}

func (w *wireWriter) Write(p []byte) (int, error) {
	var m wireMsg
	if json.Unmarshal(bytes.TrimSpace(p), &m) == nil && m.Method != "" {
		m.ID = bytes.Clone(m.ID)
		m.Params = nil
		w.mu.Lock()
		m.pos = len(w.sent)
		w.sent = append(w.sent, m)
		w.mu.Unlock()
	}
	w.wmu.Lock()
	defer w.wmu.Unlock()
	return w.w.Write(p)
}

// raw writes b as is.
func (w *wireWriter) raw(b string) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	_, err := io.WriteString(w.w, b)
	return err
}

// Close closes the agent's input; it does not wait for a blocked write.
func (w *wireWriter) Close() error { return w.w.Close() }

func (w *wireWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.sent)
}

// idSince returns the raw id of the first request for method written at
// or after position mark, or "".
func (w *wireWriter) idSince(mark int, method string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.sent[mark:] {
		if m.Method == method && m.ID != nil {
			return string(m.ID)
		}
	}
	return ""
}

// waitFor polls cond until it holds, failing the test at the liveness bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(liveness)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ---------------------------------------------------------------------------
// Model backends.

// backendFunc adapts a function to model.Backend.
type backendFunc func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool)

func (f backendFunc) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) { f(ctx, req, yield) }
}

// recorder wraps a backend and keeps a deep copy of every request.
type recorder struct {
	inner model.Backend
	mu    sync.Mutex
	reqs  []model.Request
}

func record(b model.Backend) *recorder { return &recorder{inner: b} }

func (r *recorder) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	var cp model.Request
	if b, err := json.Marshal(req); err == nil && json.Unmarshal(b, &cp) == nil {
		r.mu.Lock()
		r.reqs = append(r.reqs, cp)
		r.mu.Unlock()
	}
	return r.inner.Stream(ctx, req)
}

func (r *recorder) requests() []model.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]model.Request(nil), r.reqs...)
}

// last returns the latest request.
func (r *recorder) last(t *testing.T) model.Request {
	t.Helper()
	reqs := r.requests()
	if len(reqs) == 0 {
		t.Fatal("the model got no request")
	}
	return reqs[len(reqs)-1]
}

// toolResults returns every tool_result part of the request's transcript,
// in order.
func toolResults(req model.Request) []model.Part {
	var out []model.Part
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p.Type == model.PartToolResult {
				out = append(out, p)
			}
		}
	}
	return out
}

// resultText is the text of a tool_result part.
func resultText(p model.Part) string {
	var b strings.Builder
	for _, c := range p.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// toolCallReq is a tool call a scripted backend makes.
type toolCallReq struct {
	name  string
	input any
}

// turnStep counts the model requests already made in the current turn: the
// assistant messages after the last user message that has text.
func turnStep(req *model.Request) int {
	start := 0
	for i, m := range req.Messages {
		if m.Role != model.RoleUser {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == model.PartText {
				start = i
			}
		}
	}
	n := 0
	for _, m := range req.Messages[start:] {
		if m.Role == model.RoleAssistant {
			n++
		}
	}
	return n
}

// toolSeq is a backend that, in every turn, makes the given tool calls one
// per request, then answers "done." and ends the turn. Call ids are unique
// within a session.
func toolSeq(calls ...toolCallReq) backendFunc {
	return func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		step := turnStep(req)
		if step >= len(calls) {
			_ = yield(model.Event{Type: model.EventText, Text: "done."}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
			return
		}
		c := calls[step]
		in, err := json.Marshal(c.input)
		if err != nil {
			yield(model.Event{}, err)
			return
		}
		id := fmt.Sprintf("call_%d", len(req.Messages))
		_ = yield(model.Event{Type: model.EventToolStart, ToolCallID: id, ToolName: c.name}, nil) &&
			yield(model.Event{Type: model.EventToolDone, ToolCallID: id, ToolName: c.name, Input: in}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
	}
}

// lastUserText is the text of the last user message with text.
func lastUserText(req *model.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role == model.RoleUser {
			if t := m.Text(); t != "" {
				return t
			}
		}
	}
	return ""
}

// gate is a backend that, for a prompt "block", streams one delta and then
// blocks until the request is cancelled; any other prompt is answered
// "done." at once. started receives a value each time a request blocks.
type gate struct {
	started chan struct{}
}

func newGate() *gate { return &gate{started: make(chan struct{}, 1024)} }

// gatedSession starts a client whose model is a gate, with one session.
func gatedSession(t *testing.T) (*testEnv, *gate, *client, acp.SessionID) {
	t.Helper()
	env := newEnv(t, "")
	g := newGate()
	env.setModel(mainModel, g)
	c := env.start(nil)
	return env, g, c, c.newSession()
}

func (g *gate) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		if lastUserText(req) != "block" || turnStep(req) > 0 {
			_ = yield(model.Event{Type: model.EventText, Text: "done."}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
			return
		}
		if !yield(model.Event{Type: model.EventText, Text: "working"}, nil) {
			return
		}
		g.started <- struct{}{}
		<-ctx.Done()
		yield(model.Event{}, ctx.Err())
	}
}

// waitStarted waits for the gate to block a request.
func (g *gate) waitStarted(t *testing.T) {
	t.Helper()
	tm := time.NewTimer(liveness)
	defer tm.Stop()
	select {
	case <-g.started:
	case <-tm.C:
		t.Fatal("the model request never started")
	}
}

// async runs f on a goroutine and returns a channel with its result.
func async[T any](f func() T) <-chan T {
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	return ch
}

// await receives from ch, bounded by liveness.
func await[T any](t testing.TB, what string, ch <-chan T) T {
	t.Helper()
	tm := time.NewTimer(liveness)
	defer tm.Stop()
	select {
	case v := <-ch:
		return v
	case <-tm.C:
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// promptResult is the outcome of an asynchronous prompt.
type promptResult struct {
	stop acp.StopReason
	err  error
}

// promptAsync sends a prompt on another goroutine.
// queued is the number of prompts waiting for sid's running turn.
func (c *client) queued(sid acp.SessionID) int {
	if s := c.agent.lookup(sid); s != nil {
		return s.slot.Queued()
	}
	return 0
}

func (c *client) promptAsync(sid acp.SessionID, text string) <-chan promptResult {
	return async(func() promptResult {
		stop, err := c.prompt(sid, text)
		return promptResult{stop, err}
	})
}
