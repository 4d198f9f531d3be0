package acp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/log"

	"acpd/acp/jsonrpc"
	"acpd/internal/syncbuf"
)

// baseAgent implements only the required Agent methods.
type baseAgent struct{ cancelled []SessionID }

func (*baseAgent) Authenticate(context.Context, *AuthenticateRequest) (*AuthenticateResponse, error) {
	return &AuthenticateResponse{}, nil
}

func (a *baseAgent) Cancel(_ context.Context, p *CancelNotification) error {
	a.cancelled = append(a.cancelled, p.SessionID)
	return nil
}

func (*baseAgent) Initialize(_ context.Context, p *InitializeRequest) (*InitializeResponse, error) {
	return &InitializeResponse{ProtocolVersion: p.ProtocolVersion}, nil
}

func (*baseAgent) NewSession(context.Context, *NewSessionRequest) (*NewSessionResponse, error) {
	return &NewSessionResponse{SessionID: "s1"}, nil
}

func (*baseAgent) Prompt(context.Context, *PromptRequest) (*PromptResponse, error) {
	return &PromptResponse{StopReason: StopReasonEndTurn}, nil
}

func (*baseAgent) SetSessionConfigOption(context.Context, *SetSessionConfigOptionRequest) (*SetSessionConfigOptionResponse, error) {
	return &SetSessionConfigOptionResponse{}, nil
}

func (*baseAgent) SetSessionMode(context.Context, *SetSessionModeRequest) (*SetSessionModeResponse, error) {
	return &SetSessionModeResponse{}, nil
}

// loadingAgent adds the optional session/load.
type loadingAgent struct{ baseAgent }

func (*loadingAgent) LoadSession(context.Context, *LoadSessionRequest) (*LoadSessionResponse, error) {
	return &LoadSessionResponse{}, nil
}

func code(err error) int {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func TestAgentHandlerDispatch(t *testing.T) {
	ctx := context.Background()
	load := json.RawMessage(`{"sessionId":"s1","cwd":"/tmp","mcpServers":[]}`)

	h := AgentHandler(&baseAgent{})
	if _, err := h(ctx, AgentMethodSessionLoad, load); code(err) != codeMethodNotFound {
		t.Errorf("session/load without LoadSession: err = %v, want -32601", err)
	}
	if _, err := h(ctx, AgentMethodSessionSetModel, json.RawMessage(`{"sessionId":"s1","modelId":"m"}`)); code(err) != codeMethodNotFound {
		t.Errorf("session/set_model without SetSessionModel: err = %v, want -32601", err)
	}
	if _, err := h(ctx, "no/such", nil); code(err) != codeMethodNotFound {
		t.Errorf("unknown method: err = %v, want -32601", err)
	}
	res, err := h(ctx, AgentMethodInitialize, json.RawMessage(`{"protocolVersion":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := res.(*InitializeResponse); !ok || r.ProtocolVersion != 1 {
		t.Errorf("initialize result = %#v", res)
	}
	for name, params := range map[string]string{
		"missing required": `{}`,
		"miscased key":     `{"ProtocolVersion":1}`,
		"not an object":    `[1]`,
	} {
		if _, err := h(ctx, AgentMethodInitialize, json.RawMessage(params)); code(err) != codeInvalidParams {
			t.Errorf("%s: err = %v, want -32602", name, err)
		}
	}

	la := &loadingAgent{}
	h = AgentHandler(la)
	if _, err := h(ctx, AgentMethodSessionLoad, load); err != nil {
		t.Errorf("session/load with LoadSession: %v", err)
	}
	if _, err := h(ctx, AgentMethodSessionCancel, json.RawMessage(`{"sessionId":"s9"}`)); err != nil || len(la.cancelled) != 1 || la.cancelled[0] != "s9" {
		t.Errorf("session/cancel: err = %v, cancelled = %v", err, la.cancelled)
	}
}

// updatesClient implements only the required Client methods.
type updatesClient struct{ got []SessionNotification }

func (*updatesClient) RequestPermission(context.Context, *RequestPermissionRequest) (*RequestPermissionResponse, error) {
	return &RequestPermissionResponse{Outcome: RequestPermissionOutcome{Cancelled: &RequestPermissionOutcomeCancelled{}}}, nil
}

func (c *updatesClient) SessionUpdate(_ context.Context, n *SessionNotification) error {
	c.got = append(c.got, *n)
	return nil
}

func TestClientHandlerDispatch(t *testing.T) {
	ctx := context.Background()
	c := &updatesClient{}
	h := ClientHandler(c)
	if _, err := h(ctx, ClientMethodFsReadTextFile, json.RawMessage(`{"sessionId":"s1","path":"/a"}`)); code(err) != codeMethodNotFound {
		t.Errorf("fs/read_text_file without ReadTextFile: err = %v, want -32601", err)
	}
	if _, err := h(ctx, ClientMethodTerminalKill, json.RawMessage(`{"sessionId":"s1","terminalId":"t"}`)); code(err) != codeMethodNotFound {
		t.Errorf("terminal/kill without KillTerminal: err = %v, want -32601", err)
	}
	n := json.RawMessage(`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}`)
	if _, err := h(ctx, ClientMethodSessionUpdate, n); err != nil || len(c.got) != 1 {
		t.Fatalf("session/update: err = %v, got %d updates", err, len(c.got))
	}
	if u := c.got[0].Update.AgentMessageChunk; u == nil || u.Content.Text == nil || u.Content.Text.Text != "hi" {
		t.Errorf("session/update decoded as %#v", c.got[0].Update)
	}
}

// TestClientSideKeepsUnknownVariants: what acpd receives as a client (an
// agent's results and notifications) keeps the union variants this schema
// does not define, and notifications nobody handles are dropped without a
// log line above debug level; what acpd receives as an agent stays strict.
func TestClientSideKeepsUnknownVariants(t *testing.T) {
	var logs syncbuf.Buffer
	c := &updatesClient{}
	var mu sync.Mutex
	h := ClientHandler(c)
	p := newPeer(t, func(conn *jsonrpc.Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method == "ping" {
			return "pong", nil
		}
		mu.Lock()
		defer mu.Unlock()
		return h(ctx, method, params)
	}, jsonrpc.Options{Logger: slog.New(log.NewWithOptions(&logs, log.Options{Level: log.InfoLevel}))})

	// codex-acp's initialize reply: an auth method of a type this schema lacks.
	type result struct {
		resp *InitializeResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		r, err := NewAgentConn(p.conn).Initialize(context.Background(), &InitializeRequest{ProtocolVersion: 1})
		done <- result{r, err}
	}()
	req := p.recv()
	if req.Method != AgentMethodInitialize {
		t.Fatalf("sent %s", req.raw)
	}
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"protocolVersion":1,"authMethods":[` +
		`{"type":"env_var","id":"openai","name":"OpenAI key","vars":[{"name":"OPENAI_API_KEY"}]},` +
		`{"id":"login","name":"Log in"}]}}`)
	r := recvChan(t, done)
	if r.err != nil {
		t.Fatalf("Initialize: %v", r.err)
	}
	if ms := r.resp.AuthMethods; len(ms) != 2 || ms[0].Other == nil || ms[1].Agent == nil || ms[1].Agent.ID != "login" {
		t.Fatalf("auth methods = %+v", ms)
	}

	// Notifications: an unknown method, and a session/update of an unknown kind.
	p.send(`{"jsonrpc":"2.0","method":"_auth/status_update","params":{"status":"ok"}}`)
	p.send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"usage_update_v9","used":1}}}`)
	p.ping()
	waitFor(t, "the session/update", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(c.got) == 1
	})
	mu.Lock()
	if u := c.got[0].Update; u.Other == nil || !strings.Contains(string(u.Other), "usage_update_v9") {
		t.Errorf("unknown update = %+v", u)
	}
	mu.Unlock()
	if out := logs.String(); out != "" {
		t.Errorf("unknown notifications logged above debug level:\n%s", out)
	}

	// The agent side keeps strict validation: a client's result with an
	// unknown variant fails the call.
	perm := make(chan error, 1)
	go func() {
		_, err := NewClientConn(p.conn).RequestPermission(context.Background(), &RequestPermissionRequest{SessionID: "s1", Options: []PermissionOption{}})
		perm <- err
	}()
	req = p.recv()
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"outcome":{"outcome":"maybe"}}}`)
	if err := recvChan(t, perm); err == nil || !strings.Contains(err.Error(), `unknown outcome "maybe"`) {
		t.Errorf("strict result decoding: err = %v", err)
	}
	if _, err := AgentHandler(&baseAgent{})(context.Background(), AgentMethodSessionPrompt,
		json.RawMessage(`{"sessionId":"s","prompt":[{"type":"video","data":"x"}]}`)); code(err) != codeInvalidParams {
		t.Errorf("agent request with an unknown content block: err = %v, want -32602", err)
	}
}
