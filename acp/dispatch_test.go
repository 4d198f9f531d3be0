package acp

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
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
	var e *Error
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
