package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func findPrompt(ps []Prompt, qualified string) (Prompt, bool) {
	for _, p := range ps {
		if p.QualifiedName == qualified {
			return p, true
		}
	}
	return Prompt{}, false
}

func TestEverythingPromptsAndResources(t *testing.T) {
	node, entry := everything(t)
	m := newTestManager(t, Options{BaseEnv: baseEnv(node)})
	startOK(t, m, stdioEverything("every thing", node, entry))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	ps := m.Prompts()
	simple, ok := findPrompt(ps, "every_thing:simple-prompt")
	if !ok {
		t.Fatalf("no simple-prompt in %+v", ps)
	}
	if simple.Server != "every thing" || simple.Name != "simple-prompt" || len(simple.Arguments) != 0 {
		t.Errorf("simple-prompt = %+v", simple)
	}
	args, ok := findPrompt(ps, "every_thing:args-prompt")
	if !ok {
		t.Fatalf("no args-prompt in %+v", ps)
	}
	if len(args.Arguments) != 2 || args.Arguments[0] != (PromptArg{Name: "city", Description: "Name of the city", Required: true}) ||
		args.Arguments[1].Name != "state" || args.Arguments[1].Required {
		t.Errorf("args-prompt arguments = %+v", args.Arguments)
	}

	msgs, err := m.GetPrompt(ctx, "every_thing:simple-prompt", nil)
	if err != nil || len(msgs) != 1 || msgs[0].Role != "user" || msgs[0].Text != "This is a simple prompt without arguments." {
		t.Errorf("simple-prompt = %+v, %v", msgs, err)
	}
	msgs, err = m.GetPrompt(ctx, "every_thing:args-prompt", map[string]string{"city": "Lyon", "state": "Rhône"})
	if err != nil || len(msgs) != 1 || msgs[0].Text != "What's weather in Lyon, Rhône?" {
		t.Errorf("args-prompt = %+v, %v", msgs, err)
	}
	if _, err := m.GetPrompt(ctx, "every_thing:args-prompt", nil); err == nil {
		t.Error("args-prompt without its required argument succeeded")
	}
	if _, err := m.GetPrompt(ctx, "every_thing:nope", nil); !errors.Is(err, ErrUnknownPrompt) {
		t.Errorf("unknown prompt: %v", err)
	}

	res, err := m.Resources(ctx, "")
	if err != nil || len(res) == 0 {
		t.Fatalf("Resources = %v, %v", res, err)
	}
	var doc Resource
	for _, r := range res {
		if r.Server != "every thing" {
			t.Errorf("resource of server %q", r.Server)
		}
		if strings.HasPrefix(r.URI, "demo://resource/static/document/") && doc.URI == "" {
			doc = r
		}
	}
	if doc.URI == "" || doc.Name == "" {
		t.Fatalf("no static document among %+v", res)
	}
	only, err := m.Resources(ctx, "every thing")
	if err != nil || len(only) != len(res) {
		t.Errorf("Resources(every thing) = %d, %v; want %d", len(only), err, len(res))
	}
	if _, err := m.Resources(ctx, "other"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("Resources(other): %v", err)
	}

	text, err := m.ReadResource(ctx, "every thing", doc.URI)
	if err != nil || strings.TrimSpace(text) == "" || strings.HasPrefix(text, "[binary") {
		t.Errorf("ReadResource(%s) = %q, %v", doc.URI, text, err)
	}
	text, err = m.ReadResource(ctx, "every thing", "demo://resource/dynamic/text/1")
	if err != nil || !strings.Contains(text, "1") {
		t.Errorf("dynamic text = %q, %v", text, err)
	}
	text, err = m.ReadResource(ctx, "every thing", "demo://resource/dynamic/blob/1")
	if err != nil || !strings.HasPrefix(text, "[binary resource demo://resource/dynamic/blob/1, ") || !strings.Contains(text, "bytes]") {
		t.Errorf("dynamic blob = %q, %v", text, err)
	}
	if _, err := m.ReadResource(ctx, "every thing", "demo://no/such/resource"); err == nil {
		t.Error("reading a missing resource succeeded")
	}
	if _, err := m.ReadResource(ctx, "", doc.URI); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("ReadResource without server: %v", err)
	}

	if err := m.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	if len(m.Prompts()) != 0 {
		t.Error("prompts listed after Close")
	}
	if _, err := m.GetPrompt(ctx, "every_thing:simple-prompt", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("GetPrompt after Close: %v", err)
	}
	if _, err := m.Resources(ctx, ""); !errors.Is(err, ErrClosed) {
		t.Errorf("Resources after Close: %v", err)
	}
}

// TestPromptListChanged runs against a Go SDK server that adds a prompt.
func TestPromptListChanged(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
	handler := func(text string) mcp.PromptHandler {
		return func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: text}},
				{Role: "assistant", Content: &mcp.ImageContent{MIMEType: "image/png", Data: []byte("png")}},
			}}, nil
		}
	}
	srv.AddPrompt(&mcp.Prompt{Name: "one"}, handler("first"))
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close) // after the Manager's Close: the server waits for open streams

	changed := make(chan struct{}, 8)
	m := newTestManager(t, Options{OnPromptsChanged: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	startOK(t, m, Server{Name: "go", URL: hs.URL, Transport: TransportHTTP})
	if ps := m.Prompts(); len(ps) != 1 || ps[0].QualifiedName != "go:one" {
		t.Fatalf("prompts = %+v", ps)
	}
	msgs, err := m.GetPrompt(context.Background(), "go:one", nil)
	if err != nil || len(msgs) != 2 || msgs[0].Text != "first" || msgs[1].Role != "assistant" || msgs[1].Text != "[image image/png, 3 bytes]" {
		t.Errorf("GetPrompt = %+v, %v", msgs, err)
	}

	srv.AddPrompt(&mcp.Prompt{Name: "two:2", Arguments: []*mcp.PromptArgument{{Name: "x", Required: true}}}, handler("second"))
	for {
		if _, ok := findPrompt(m.Prompts(), "go:two_2"); ok {
			break
		}
		waitChange(t, changed)
	}
	ps := m.Prompts()
	if p, ok := findPrompt(ps, "go:two_2"); !ok || p.Name != "two:2" || len(p.Arguments) != 1 || !p.Arguments[0].Required {
		t.Fatalf("after list_changed: %+v", ps)
	}
	// No resources capability: no resources, no error.
	if res, err := m.Resources(context.Background(), "go"); err != nil || len(res) != 0 {
		t.Errorf("Resources = %v, %v", res, err)
	}
}

func TestPromptNames(t *testing.T) {
	long := strings.Repeat("p", 80)
	keys := []toolKey{{"srv", "a"}, {"s r v", "a"}, {"srv", "a"}, {"x:y", "b:c"}, {"srv", long}}
	got := promptNames(keys)
	if got[0] != "srv:a" || got[3] != "x_y:b_c" {
		t.Errorf("plain names = %v", got)
	}
	seen := map[string]bool{}
	for i, n := range got {
		if seen[n] || len(n) > maxPromptNameLen || strings.Count(n, ":") != 1 {
			t.Errorf("name %d = %q (dup %v, len %d)", i, n, seen[n], len(n))
		}
		seen[n] = true
	}
}

func TestTruncate(t *testing.T) {
	if truncate("abc", 10) != "abc" {
		t.Error("short text changed")
	}
	s := strings.Repeat("é", 1000)
	out := truncate(s, 200)
	if len(out) > 200 || !strings.Contains(out, "2000 bytes in all") || !strings.HasPrefix(out, "é") {
		t.Errorf("truncate = %q", out)
	}
	if strings.ContainsRune(out, '\uFFFD') {
		t.Error("truncate split a rune")
	}
}

// FuzzResourceText: whatever contents a server returns, the text for the
// model is bounded, valid UTF-8 when the input text is, and summarises blobs.
func FuzzResourceText(f *testing.F) {
	f.Add("hello", []byte(nil), 1)
	f.Add(strings.Repeat("é", 200000), []byte("x"), 2)
	f.Add("", []byte{0, 1, 2}, 3)
	f.Fuzz(func(t *testing.T, text string, blob []byte, n int) {
		n = n%4 + 1
		var cs []*mcp.ResourceContents
		for i := range n {
			c := &mcp.ResourceContents{URI: "x://" + strconv.Itoa(i), Text: text}
			if i%2 == 1 {
				c = &mcp.ResourceContents{URI: "x://b", Blob: blob}
			}
			cs = append(cs, c, nil)
		}
		out := resourceText(cs)
		if len(out) > maxResourceBytes {
			t.Fatalf("%d bytes, limit %d", len(out), maxResourceBytes)
		}
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatal("valid text became invalid UTF-8")
		}
		if n > 1 && blob != nil && !strings.Contains(out, "[binary resource x://b") && len(out) < maxResourceBytes/2 {
			t.Fatalf("blob not summarised: %q", out)
		}
	})
}

// TestPromptsChangedOnlyWithPrompts: a server without prompts connecting
// leaves the prompt list as it was, so OnPromptsChanged is not called
// (an editor is not sent the same command list once per server); its
// tools are announced through OnToolsChanged, and ToolsGeneration moves.
func TestPromptsChangedOnlyWithPrompts(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	var prompts, tools atomic.Int32
	m := newTestManager(t, Options{
		OnPromptsChanged: func() { prompts.Add(1) },
		OnToolsChanged:   func() { tools.Add(1) },
	})
	gen := m.ToolsGeneration()
	startOK(t, m, Server{Name: "a", URL: hs.URL, Transport: TransportHTTP}, Server{Name: "b", URL: hs.URL, Transport: TransportHTTP})
	if n := prompts.Load(); n != 0 {
		t.Errorf("OnPromptsChanged called %d times for servers without prompts", n)
	}
	if n := tools.Load(); n != 2 {
		t.Errorf("OnToolsChanged called %d times, want 2", n)
	}
	if ts := m.Tools(); len(ts) != 2 || ts[0].QualifiedName != "mcp__a__t" || ts[1].QualifiedName != "mcp__b__t" {
		t.Errorf("tools = %+v", ts)
	}
	if m.ToolsGeneration() == gen {
		t.Error("ToolsGeneration did not change when servers connected")
	}
	gen = m.ToolsGeneration()
	m.Tools()
	if m.ToolsGeneration() != gen {
		t.Error("ToolsGeneration changed without a change of tools")
	}
	m.Close()
	if m.ToolsGeneration() == gen || len(m.Tools()) != 0 {
		t.Error("Close left the tools")
	}
}
