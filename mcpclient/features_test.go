package mcpclient

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"acpd/internal/syncbuf"
)

// TestEverythingClientFeatures drives server-everything's sampling,
// elicitation (with schema defaults), roots, logging, resource templates,
// subscriptions and completion through the Manager's hooks.
func TestEverythingClientFeatures(t *testing.T) {
	node, entry := everything(t)
	base := t.TempDir()
	var logs syncbuf.Buffer
	updated := make(chan string, 16)
	var mu sync.Mutex
	var samples []SampleRequest
	m := newTestManager(t, Options{
		BaseEnv: baseEnv(node),
		Logger:  slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Dir:     base,
		Roots:   []string{"/work/extra"},
		Sample: func(_ context.Context, server string, req SampleRequest) (SampleResult, error) {
			mu.Lock()
			samples = append(samples, req)
			mu.Unlock()
			return SampleResult{Text: "sampled answer", Model: "test-model", StopReason: "endTurn"}, nil
		},
		Elicit: func(context.Context, string, ElicitRequest) (ElicitResult, error) {
			// Only the required field: the defaults fill the rest.
			return ElicitResult{Action: ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
		OnResourceUpdated: func(server, uri string) {
			select {
			case updated <- server + " " + uri:
			default:
			}
		},
	})
	startOK(t, m, stdioEverything("everything", node, entry))

	res := call(t, m, "mcp__everything__trigger-sampling-request", `{"prompt":"say hi","maxTokens":50}`)
	if !strings.Contains(res.Text, "sampled answer") {
		t.Errorf("sampling result = %+v", res)
	}
	mu.Lock()
	if len(samples) != 1 || samples[0].MaxTokens != 50 || len(samples[0].Messages) == 0 || len(samples[0].Messages[0].Content) != 1 || !strings.Contains(samples[0].Messages[0].Content[0].Text, "say hi") {
		t.Errorf("sample requests = %+v", samples)
	}
	mu.Unlock()

	res = call(t, m, "mcp__everything__trigger-elicitation-request", `{}`)
	if !strings.Contains(res.Text, "Ada") || !strings.Contains(res.Text, "dark and stormy") {
		t.Errorf("elicitation lost the schema's defaults: %+v", res)
	}

	res = call(t, m, "mcp__everything__get-roots-list", `{}`)
	if !strings.Contains(res.Text, "file://"+base) || !strings.Contains(res.Text, "file:///work/extra") {
		t.Errorf("roots = %+v", res)
	}
	m.SetRoots([]string{"/work/other"})
	deadline := time.Now().Add(10 * time.Second)
	for {
		res = call(t, m, "mcp__everything__get-roots-list", `{}`)
		if strings.Contains(res.Text, "file:///work/other") && !strings.Contains(res.Text, "file:///work/extra") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("roots after SetRoots = %+v", res)
		}
		time.Sleep(100 * time.Millisecond)
	}

	tmpls, err := m.ResourceTemplates(context.Background(), "everything")
	if err != nil || len(tmpls) == 0 || !strings.Contains(tmpls[0].URITemplate, "{") {
		t.Errorf("templates = %+v, %v", tmpls, err)
	}

	vals, err := m.Complete(context.Background(), "everything:completable-prompt", "department", "Eng", nil)
	if err != nil || len(vals) != 1 || vals[0] != "Engineering" {
		t.Errorf("completion = %v, %v", vals, err)
	}
	vals, err = m.Complete(context.Background(), "everything:completable-prompt", "name", "A", map[string]string{"department": "Engineering"})
	if err != nil || len(vals) != 1 || vals[0] != "Alice" {
		t.Errorf("completion with context = %v, %v", vals, err)
	}

	rs, err := m.Resources(context.Background(), "everything")
	if err != nil || len(rs) == 0 {
		t.Fatalf("resources = %v, %v", rs, err)
	}
	if err := m.Subscribe(context.Background(), "everything", rs[0].URI); err != nil {
		t.Fatal(err)
	}
	call(t, m, "mcp__everything__toggle-subscriber-updates", `{}`)
	select {
	case u := <-updated:
		if !strings.HasPrefix(u, "everything ") {
			t.Errorf("update = %q", u)
		}
		if got := m.TakeUpdated(); len(got) == 0 || got[0].Server != "everything" {
			t.Errorf("TakeUpdated = %+v", got)
		}
		if err := m.Subscribe(context.Background(), "everything", rs[0].URI); err != nil {
			t.Errorf("subscribing again: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("no notifications/resources/updated")
	}

	call(t, m, "mcp__everything__toggle-simulated-logging", `{}`)
	deadline = time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String(), "server log") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if l := logs.String(); !strings.Contains(l, "server log") || !strings.Contains(l, "server=everything") {
		t.Errorf("no server log message reached the logger:\n%s", l)
	}
}

// TestCapabilitiesFollowHandlers: sampling and elicitation are advertised
// only with their handlers.
func TestCapabilitiesFollowHandlers(t *testing.T) {
	m := NewManager(Options{})
	defer m.Close()
	caps := m.capabilities()
	//lint:ignore SA1019 MCP sampling and roots are deprecated by SEP-2577 but acpd serves them through the deprecation window
	if caps.Elicitation != nil || caps.Sampling != nil || caps.RootsV2 == nil || !caps.RootsV2.ListChanged {
		t.Errorf("without handlers: %+v", caps)
	}
	m2 := NewManager(Options{Elicit: func(context.Context, string, ElicitRequest) (ElicitResult, error) { return ElicitResult{}, nil }, ElicitModes: []string{"form", "url"}})
	defer m2.Close()
	if c := m2.capabilities(); c.Elicitation == nil || c.Elicitation.Form == nil || c.Elicitation.URL == nil {
		t.Errorf("with Elicit in both modes: %+v", c)
	}
	b, _ := json.Marshal(withDefaults(json.RawMessage(`{"properties":{"a":{"default":1},"b":{"type":"string"},"c":{"default":"x"}}}`), map[string]any{"c": "given"}))
	if string(b) != `{"a":1,"c":"given"}` {
		t.Errorf("withDefaults = %s", b)
	}
}
