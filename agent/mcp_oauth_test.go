package agent

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"acpd/acp"
	"acpd/config"
	"acpd/internal/oauthtest"
	"acpd/mcpclient/oauth"
)

// guardedMCP serves an MCP server with the tool "hello" behind a small
// OAuth authorization server (dynamic registration, PKCE), and returns it
// as the editor names it.
func guardedMCP(t *testing.T) (*oauthtest.Server, acp.McpServer) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "hello", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi from behind OAuth"}}}, nil
		})
	as := oauthtest.New(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	return as, acp.McpServer{HTTP: &acp.McpServerHTTP{Name: "guarded", URL: as.URL, Headers: []acp.HTTPHeader{}}}
}

// guardedSession opens a session with the guardedMCP server in an editor
// with caps that answers elicitations with elicit; hello prompts a turn
// that calls the server's tool and checks that it worked.
func guardedSession(t *testing.T, caps *acp.ClientCapabilities, elicit func(context.Context, acp.CreateElicitationRequest) (any, error)) (as *oauthtest.Server, env *testEnv, c *client, sid acp.SessionID, hello func()) {
	as, server := guardedMCP(t)
	env = newEnv(t, "")
	rec := record(toolSeq(toolCallReq{"mcp__guarded__hello", map[string]any{}}))
	env.setModel(mainModel, rec)
	c = env.start(caps)
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	c.elicit = elicit
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{server}}, &resp); err != nil {
		t.Fatal(err)
	}
	hello = func() {
		t.Helper()
		c.mustPrompt(resp.SessionID, "say hello", acp.StopReasonEndTurn)
		if res := toolResults(rec.last(t)); len(res) != 1 || res[0].IsError || resultText(res[0]) != "hi from behind OAuth" {
			t.Fatalf("tool results = %+v", res)
		}
	}
	return as, env, c, resp.SessionID, hello
}

// visit plays the user in the browser: it opens the authorization page,
// which sends the browser on to acpd's listener on 127.0.0.1.
func visit(ctx context.Context, t *testing.T, u string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		t.Error(err)
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("visiting the authorization page: %v", err)
		return
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Request.URL.String(), "http://127.0.0.1:") {
		t.Errorf("the authorization ended at %s (%s)", resp.Request.URL, resp.Status)
	}
}

// TestMCPOAuthURLElicitation: an HTTP server that needs OAuth while the
// session connects it is authorized by the user through ACP URL
// elicitation (the editor opens the page); acpd's loopback listener takes
// the code, sends elicitation/complete, stores the token, and the
// server's tool works in the first prompt.
func TestMCPOAuthURLElicitation(t *testing.T) {
	asked := make(chan acp.CreateElicitationRequest, 4)
	as, env, c, sid, hello := guardedSession(t, &acp.ClientCapabilities{Elicitation: &acp.ElicitationCapabilities{URL: &acp.ElicitationURLCapabilities{}}},
		func(ctx context.Context, req acp.CreateElicitationRequest) (any, error) {
			asked <- req
			if req.URL != nil {
				// The browser's visit outlives the editor's request, which
				// acpd may withdraw once the redirect came back.
				visit(context.WithoutCancel(ctx), t, req.URL.URL)
			}
			return acp.CreateElicitationResponse{Accept: &acp.ElicitationAcceptAction{}}, nil
		})
	hello()
	req := <-asked
	if req.URL == nil || req.URL.Session == nil || req.URL.Session.SessionID != sid || !strings.HasPrefix(req.URL.URL, strings.TrimSuffix(as.URL, "/mcp")+"/authorize?") ||
		!strings.Contains(req.Message, "guarded") {
		t.Errorf("elicitation = %+v", req)
	}
	waitFor(t, "elicitation/complete", func() bool {
		for _, m := range c.in.messages() {
			if m.Method == acp.ClientMethodElicitationComplete && strings.Contains(string(m.Params), string(req.URL.ElicitationID)) {
				return true
			}
		}
		return false
	})
	store := oauth.OpenTokenStore(filepath.Join(config.UserDir(env.getenv), "mcp-tokens.json"))
	if tok := store.Get("guarded", as.URL); tok == nil || tok.AccessToken == "" {
		t.Error("the token was not stored")
	}
	if as.Granted() != 1 {
		t.Errorf("%d authorizations, want 1", as.Granted())
	}
}

// TestMCPOAuthCard: in an editor without URL elicitation the user sees the
// authorization URL as a failed tool call; once they open it the server
// connects and its tool works.
func TestMCPOAuthCard(t *testing.T) {
	_, _, c, sid, hello := guardedSession(t, nil, nil)
	var link string
	waitFor(t, "the authorization card", func() bool {
		for _, u := range c.allUpdates(sid) {
			if tc := u.ToolCall; tc != nil && tc.Title == "MCP server guarded needs authorization" && tc.Status == acp.ToolCallStatusFailed && len(tc.Content) == 1 {
				text := tc.Content[0].Content.Content.Text.Text
				link = text[strings.LastIndex(text, "\n")+1:]
				return true
			}
		}
		return false
	})
	visit(t.Context(), t, link)
	hello()
}

// TestMCPOAuthDeclined: a user who declines the authorization page leaves
// the server unavailable, which the first prompt shows with the reason;
// nothing was authorized.
func TestMCPOAuthDeclined(t *testing.T) {
	as, _, c, sid, _ := guardedSession(t, &acp.ClientCapabilities{Elicitation: &acp.ElicitationCapabilities{URL: &acp.ElicitationURLCapabilities{}}},
		func(context.Context, acp.CreateElicitationRequest) (any, error) {
			return acp.CreateElicitationResponse{Decline: &acp.CreateElicitationResponseDecline{}}, nil
		})
	c.mustPrompt(sid, "say hello", acp.StopReasonEndTurn)
	found := false
	for _, u := range c.allUpdates(sid) {
		if tc := u.ToolCall; tc != nil && tc.Title == "MCP server guarded unavailable" && len(tc.Content) == 1 {
			found = strings.Contains(tc.Content[0].Content.Content.Text.Text, "did not authorize")
		}
	}
	if !found {
		t.Errorf("no card saying the user did not authorize the server: %v", kinds(c.allUpdates(sid)))
	}
	if as.Granted() != 0 {
		t.Errorf("%d authorizations after a decline", as.Granted())
	}
}
