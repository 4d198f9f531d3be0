package mcpclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func textTool(name, text string) (*mcp.Tool, mcp.ToolHandler) {
	return &mcp.Tool{Name: name, Description: "says " + text, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}
}

func toolNames(m *Manager) []string {
	var out []string
	for _, tl := range m.Tools() {
		out = append(out, tl.QualifiedName)
	}
	return out
}

// waitChange waits for one OnToolsChanged call.
func waitChange(t *testing.T, changed <-chan struct{}) {
	t.Helper()
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no OnToolsChanged call")
	}
}

// TestToolListChanged runs against a Go SDK server over streamable HTTP, which
// also exercises header injection.
func TestToolListChanged(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
	srv.AddTool(textTool("one", "1"))
	var unauthorized atomic.Int64
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			unauthorized.Add(1)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	defer hs.Close()

	changed := make(chan struct{}, 8)
	m := newTestManager(t, Options{OnToolsChanged: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	startOK(t, m, Server{Name: "go", URL: hs.URL, Transport: TransportHTTP,
		Headers: map[string]string{"Authorization": "Bearer t0ken"}})
	if got := toolNames(m); !slices.Equal(got, []string{"mcp__go__one"}) {
		t.Fatalf("tools = %v", got)
	}
	if res := call(t, m, "mcp__go__one", `{}`); res.Text != "1" {
		t.Errorf("one = %+v", res)
	}

	srv.AddTool(textTool("two", "2"))
	for !slices.Contains(toolNames(m), "mcp__go__two") {
		waitChange(t, changed)
	}
	if res := call(t, m, "mcp__go__two", ``); res.Text != "2" {
		t.Errorf("two = %+v", res)
	}
	srv.RemoveTools("one")
	for slices.Contains(toolNames(m), "mcp__go__one") {
		waitChange(t, changed)
	}
	if got := toolNames(m); !slices.Equal(got, []string{"mcp__go__two"}) {
		t.Errorf("tools after removal = %v", got)
	}
	if n := unauthorized.Load(); n != 0 {
		t.Errorf("%d requests lacked the configured header", n)
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
