package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const elicitSchema = `{"type":"object","properties":{"name":{"type":"string","description":"your name"},"age":{"type":"integer"}},"required":["name"]}`

// elicitServer serves a Go SDK server whose tool "ask" elicits input and
// returns the answer as JSON text (or the error as an error result).
func elicitServer(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "elicit-test", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Who are you?", RequestedSchema: json.RawMessage(elicitSchema)})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			b, err := json.Marshal(map[string]any{"action": res.Action, "content": res.Content})
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

func TestElicit(t *testing.T) {
	url := elicitServer(t)
	tests := []struct {
		name    string
		answer  ElicitResult
		err     error
		want    string // exact result text, or a substring of the error text
		isError bool
	}{
		{name: "accept", answer: ElicitResult{Action: ElicitAccept, Content: map[string]any{"name": "Ada", "age": 36}},
			want: `{"action":"accept","content":{"age":36,"name":"Ada"}}`},
		{name: "decline", answer: ElicitResult{Action: ElicitDecline, Content: map[string]any{"name": "ignored"}},
			want: `{"action":"decline","content":null}`},
		{name: "cancel", answer: ElicitResult{Action: ElicitCancel}, want: `{"action":"cancel","content":null}`},
		{name: "handler error", err: errors.New("editor went away"), want: "editor went away", isError: true},
		{name: "invalid action", answer: ElicitResult{Action: "maybe"}, want: "invalid action", isError: true},
		{name: "content violates schema", answer: ElicitResult{Action: ElicitAccept, Content: map[string]any{"age": 3}}, isError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []ElicitRequest
			var servers []string
			m := newTestManager(t, Options{Elicit: func(ctx context.Context, server string, req ElicitRequest) (ElicitResult, error) {
				mu.Lock()
				got = append(got, req)
				servers = append(servers, server)
				mu.Unlock()
				return tc.answer, tc.err
			}})
			startOK(t, m, Server{Name: "el", URL: url, Transport: TransportHTTP})
			res := call(t, m, "mcp__el__ask", `{}`)
			if res.IsError != tc.isError || !strings.Contains(res.Text, tc.want) {
				t.Errorf("result = %+v, want isError=%v text %q", res, tc.isError, tc.want)
			}
			if !tc.isError && res.Text != tc.want {
				t.Errorf("result text = %s, want %s", res.Text, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || servers[0] != "el" {
				t.Fatalf("Elicit calls = %+v (servers %v), want one from el", got, servers)
			}
			r := got[0]
			if r.Message != "Who are you?" || r.Mode != "form" || r.URL != "" {
				t.Errorf("request = %+v", r)
			}
			var schema, want any
			if err := json.Unmarshal(r.Schema, &schema); err != nil {
				t.Fatalf("schema %s: %v", r.Schema, err)
			}
			_ = json.Unmarshal([]byte(elicitSchema), &want)
			if a, b := mustJSON(t, schema), mustJSON(t, want); a != b {
				t.Errorf("schema = %s, want %s", a, b)
			}
		})
	}
}

// TestElicitUnsupported checks that without Options.Elicit the capability is
// not advertised, so the server's request fails on its side.
func TestElicitUnsupported(t *testing.T) {
	url := elicitServer(t) // first, so that its cleanup runs after the Manager's
	m := newTestManager(t, Options{})
	startOK(t, m, Server{Name: "el", URL: url, Transport: TransportHTTP})
	res := call(t, m, "mcp__el__ask", `{}`)
	if !res.IsError || !strings.Contains(res.Text, "does not support elicitation") {
		t.Errorf("result = %+v, want the server to see no elicitation support", res)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestElicitURLSchemes: a URL elicitation reaches the hook only for https:
// and for http: to a loopback host; any other URL is declined to the
// server, with the reason in _meta, without asking anyone.
func TestElicitURLSchemes(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "elicit-url", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "open", InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ URL string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Open this", URL: in.URL, ElicitationID: "e1"})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			b, _ := json.Marshal(map[string]any{"action": res.Action, "meta": res.Meta})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	var mu sync.Mutex
	var shown []string
	m := newTestManager(t, Options{ElicitModes: []string{"form", "url"}, Elicit: func(ctx context.Context, server string, req ElicitRequest) (ElicitResult, error) {
		mu.Lock()
		shown = append(shown, req.URL)
		mu.Unlock()
		return ElicitResult{Action: ElicitAccept}, nil
	}})
	startOK(t, m, Server{Name: "el", URL: hs.URL, Transport: TransportHTTP})
	for _, tc := range []struct {
		url, want string // want: the action, or a part of the decline reason
	}{
		{"https://auth.example/authorize?x=1", `"action":"accept"`},
		{"http://127.0.0.1:8123/cb", `"action":"accept"`},
		{"http://[::1]:8123/cb", `"action":"accept"`},
		{"http://localhost/cb", `"action":"accept"`},
		{"javascript:alert(1)", `scheme \"javascript:\" is not allowed`},
		{"JavaScript:alert(1)", `scheme \"javascript:\" is not allowed`},
		{"file:///etc/passwd", `scheme \"file:\" is not allowed`},
		{"data:text/html,<script>x</script>", `scheme \"data:\" is not allowed`},
		{"vscode://ext/install", `scheme \"vscode:\" is not allowed`},
		{"http://evil.example/", `http: is allowed only to a loopback address`},
		{"https://good.example@evil.example/", `user information`},
		{"//evil.example/x", `no scheme`},
		{"https:///nohost", `names no host`},
	} {
		mu.Lock()
		shown = nil
		mu.Unlock()
		in, _ := json.Marshal(map[string]string{"url": tc.url})
		res := call(t, m, "mcp__el__open", string(in))
		if !strings.Contains(res.Text, tc.want) {
			t.Errorf("%s: result %s, want %s", tc.url, res.Text, tc.want)
		}
		mu.Lock()
		passed := len(shown) == 1 && shown[0] == tc.url
		mu.Unlock()
		if accepted := strings.Contains(tc.want, "accept"); passed != accepted {
			t.Errorf("%s: reached the hook = %v, want %v", tc.url, passed, accepted)
		}
		if !strings.Contains(tc.want, "accept") && !strings.Contains(res.Text, `"action":"decline"`) {
			t.Errorf("%s: not declined: %s", tc.url, res.Text)
		}
	}
}
