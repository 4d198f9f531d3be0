package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/mcpclient"
)

// A session without MCP servers has a nil bridge: it offers nothing and
// every method is a no-op.
func TestNilBridge(t *testing.T) {
	if b := Start(nil, Config{}, nil); b != nil {
		t.Fatalf("Start without servers = %v, want nil", b)
	}
	var b *Bridge
	b.Await(context.Background())
	b.Close()
	if b.Tools() != nil || b.StatusPrompt() != "" || b.Reminder() != "" {
		t.Error("a nil bridge offers tools, status or reminders")
	}
	if m, made := b.ToolsMade(); m != nil || made != 0 {
		t.Errorf("a nil bridge's tools are %v, serial %d", m, made)
	}
	if _, _, ok := b.PromptTurn(context.Background(), []acp.ContentBlock{{Text: &acp.TextContent{Text: "/a:b"}}}); ok {
		t.Error("a nil bridge expanded a prompt command")
	}
}

// Views' requests reach only sessions whose client renders views; every
// other method passes through.
func TestWithApps(t *testing.T) {
	next := func(ctx context.Context, method string, params json.RawMessage) (any, error) { return method, nil }
	notOpen := errors.New("not open")
	h := WithApps(next, func(id acp.SessionID) (*Bridge, error) {
		if id == "open" {
			return nil, nil
		}
		return nil, notOpen
	})
	if res, err := h(context.Background(), "session/prompt", json.RawMessage(`{}`)); err != nil || res != "session/prompt" {
		t.Errorf("other method: %v, %v", res, err)
	}
	if _, err := h(context.Background(), "_acpd/app/log", json.RawMessage(`{"sessionId":"gone"}`)); !errors.Is(err, notOpen) {
		t.Errorf("closed session: %v", err)
	}
	var ae *jsonrpc.Error
	if _, err := h(context.Background(), "_acpd/app/log", json.RawMessage(`{"sessionId":"open"}`)); !errors.As(err, &ae) || ae.Code != int(acp.ErrorCodeInvalidRequest) {
		t.Errorf("session without views: %v", err)
	}
	if _, err := h(context.Background(), "_acpd/app/log", json.RawMessage(`[`)); !errors.As(err, &ae) || ae.Code != int(acp.ErrorCodeInvalidParams) {
		t.Errorf("bad params: %v", err)
	}
}

func TestRendersApps(t *testing.T) {
	caps := acp.ClientCapabilities{Meta: map[string]any{mcpclient.AppsExtension: map[string]any{"mimeTypes": []any{"text/html", mcpclient.AppMIMEType}}}}
	if !RendersApps(caps) {
		t.Error("opted-in client not seen")
	}
	if RendersApps(acp.ClientCapabilities{}) {
		t.Error("client without the extension renders views")
	}
}

// The user sees what a server asks the model, capped.
func TestSamplePreview(t *testing.T) {
	got := samplePreview(mcpclient.SampleRequest{SystemPrompt: "be brief", MaxTokens: 1 << 20, Messages: []mcpclient.SampleMessage{
		{Role: "user", Content: []mcpclient.SampleContent{{Content: mcpclient.Content{Type: mcpclient.ContentText, Text: "name a colour"}}}},
		{Role: "user", Content: []mcpclient.SampleContent{{Content: mcpclient.Content{Type: mcpclient.ContentImage}}}},
		{Role: "assistant", Content: []mcpclient.SampleContent{{Content: mcpclient.Content{Type: mcpclient.ContentToolUse}, ToolUseID: "c1", ToolName: "paint", Input: []byte(`{"c":"red"}`)}}},
		{Role: "user", Content: []mcpclient.SampleContent{{Content: mcpclient.Content{Type: mcpclient.ContentToolResult}, ToolUseID: "c1", Result: []mcpclient.Content{{Type: mcpclient.ContentText, Text: "painted"}}}}},
	}, Tools: []mcpclient.SampleTool{{Name: "paint"}, {Name: "erase"}}})
	for _, want := range []string{"System prompt: be brief", "user: name a colour", "user: [image]", `assistant: [calls paint {"c":"red"}]`, "user: [result of c1: painted]", "may call (the server runs them): paint, erase.", "Up to 4096 tokens."} {
		if !strings.Contains(got, want) {
			t.Errorf("preview %q lacks %q", got, want)
		}
	}
}

// The model is told which servers still connect, and which of them wait
// for the user's authorization.
func TestStatusPromptAuthorizing(t *testing.T) {
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer hs.Close()
	defer close(release)
	b := Start([]mcpclient.Server{{Name: "slow", URL: hs.URL, Transport: mcpclient.TransportHTTP}, {Name: "guarded", URL: hs.URL, Transport: mcpclient.TransportHTTP}}, Config{}, nil)
	defer b.Close()
	b.mu.Lock()
	b.authorizing["guarded"] = 1
	b.mu.Unlock()
	got := b.StatusPrompt()
	for _, want := range []string{"- slow: still starting", "- guarded: waiting for the user to authorize acpd with it (OAuth)"} {
		if !strings.Contains(got, want) {
			t.Errorf("status prompt %q lacks %q", got, want)
		}
	}
}

// TestToolsKeptUntilChanged: the bridge makes its servers' tools once and
// hands out the same map until a server's tools change (here a tool
// added: tools/list_changed), then the new tools.
func TestToolsKeptUntilChanged(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
	echo := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "one", InputSchema: json.RawMessage(`{"type":"object"}`)}, echo)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer hs.Close()
	b := Start([]mcpclient.Server{{Name: "go", URL: hs.URL, Transport: mcpclient.TransportHTTP}}, Config{Grace: time.Minute}, nil)
	defer b.Close()
	b.Await(context.Background())
	first := b.Tools()
	if first["mcp__go__one"] == nil {
		t.Fatalf("tools = %v", first)
	}
	if again := b.Tools(); again["mcp__go__one"] != first["mcp__go__one"] {
		t.Error("the tools were made again without a change")
	}
	_, made := b.ToolsMade()
	if _, again := b.ToolsMade(); made == 0 || again != made {
		t.Errorf("serials %d then %d without a change, want one, not 0", made, again)
	}
	srv.AddTool(&mcp.Tool{Name: "two", InputSchema: json.RawMessage(`{"type":"object"}`)}, echo)
	deadline := time.Now().Add(30 * time.Second)
	for b.Tools()["mcp__go__two"] == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the added tool never joined: %v", b.Tools())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if b.Tools()["mcp__go__one"] == nil {
		t.Error("the first tool went")
	}
	if _, now := b.ToolsMade(); now == made {
		t.Error("the changed tools kept the first map's serial")
	}
}

// TestHeldUntilSpawn: a bridge started Held (as a session is, before its
// reply) counts its servers as starting but reaches none until Spawn;
// then Await waits for them and their tools are there. One closed while
// held never reaches its server.
func TestHeldUntilSpawn(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "one", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var hits atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	servers := []mcpclient.Server{{Name: "go", URL: hs.URL, Transport: mcpclient.TransportHTTP}}

	closed := Start(servers, Config{Grace: time.Minute, Held: true}, nil)
	closed.Close()
	if n := hits.Load(); n != 0 {
		t.Fatalf("a bridge closed while held sent %d requests", n)
	}

	b := Start(servers, Config{Grace: time.Minute, Held: true}, nil)
	defer b.Close()
	time.Sleep(50 * time.Millisecond)
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests before Spawn, want none", n)
	}
	if got := b.StatusPrompt(); !strings.Contains(got, "- go: still starting") {
		t.Errorf("status prompt while held = %q, want the server starting", got)
	}
	b.Spawn()
	b.Spawn() // idempotent
	b.Await(context.Background())
	if b.Tools()["mcp__go__one"] == nil {
		t.Errorf("tools after Spawn = %v", b.Tools())
	}
}
