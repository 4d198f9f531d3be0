package tools

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"acpd/model"
	"acpd/model/anthropic"
	"acpd/permissions"
	"acpd/sandbox"
)

// searchEnv is a testEnv whose model is an Anthropic backend on a local
// server replaying the Messages API's web search stream.
type searchEnv struct {
	*testEnv
	b         model.Backend
	available bool
}

func (e *searchEnv) WebSearch() (model.Backend, string, string, bool) {
	return e.b, "claude-sonnet-4-5", "anthropic", e.available
}

// newSearchEnv serves testdata/websearch_anthropic.sse (a search for "go
// 1.26" with one result and a citation) and records the request bodies.
func newSearchEnv(t *testing.T, mode permissions.Mode) (*searchEnv, func() [][]byte) {
	t.Helper()
	stream, err := os.ReadFile("testdata/websearch_anthropic.sse")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(stream)
	}))
	t.Cleanup(srv.Close)
	b := anthropic.New(anthropic.Options{HTTPOptions: model.HTTPOptions{BaseURL: srv.URL + "/v1/", APIKey: "sk-test"}})
	return &searchEnv{testEnv: newTestEnv(t, mode), b: b, available: true}, func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return append([][]byte(nil), bodies...)
	}
}

// TestWebSearch: web_search asks like web_fetch, makes one request with
// the provider's search tool, and returns the answer with the query run
// and the sources as links, which the card shows too.
func TestWebSearch(t *testing.T) {
	t.Parallel()
	e, bodies := newSearchEnv(t, permissions.ModeAsk)
	res := searchRun(t, e, `{"query":"latest go release"}`)
	if res.IsError {
		t.Fatalf("web_search failed: %s", res.Text)
	}
	for _, want := range []string{`Web search for "latest go release" (searched: "go 1.26")`, "Go 1.26 is out.", "Sources:\n1. [Go](https://go.dev)"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("result lacks %q:\n%s", want, res.Text)
		}
	}
	if strings.Count(res.Text, "https://go.dev") != 1 {
		t.Errorf("the source is listed more than once:\n%s", res.Text)
	}
	if len(res.Content) != 1 || res.Content[0].Content == nil || res.Content[0].Content.Content.Text == nil || res.Content[0].Content.Content.Text.Text != res.Text {
		t.Errorf("the card does not show the result: %+v", res.Content)
	}
	got := bodies()
	if len(got) != 1 || !strings.Contains(string(got[0]), `"type":"web_search_20250305"`) || !strings.Contains(string(got[0]), `"text":"latest go release"`) {
		t.Fatalf("requests: %s", got)
	}
	if len(e.asked) != 1 || e.asked[0].req.Tool != "web_search" || !strings.Contains(*e.asked[0].upd.Title, "Search the web: latest go release") {
		t.Errorf("permission requests: %+v", e.asked)
	}
	var raw struct {
		Queries []string `json:"queries"`
		Sources []source `json:"sources"`
	}
	if err := json.Unmarshal(res.Raw.(json.RawMessage), &raw); err != nil || len(raw.Queries) != 1 || len(raw.Sources) != 1 {
		t.Errorf("rawOutput %s: %v", res.Raw, err)
	}
}

// TestWebSearchPolicy: a rejected search reaches no provider; full mode
// searches without asking only while commands have the network.
func TestWebSearchPolicy(t *testing.T) {
	t.Parallel()
	e, bodies := newSearchEnv(t, permissions.ModeAsk)
	e.answer = permissions.RejectOnce
	if res := searchRun(t, e, `{"query":"x"}`); !res.IsError || len(bodies()) != 0 {
		t.Errorf("a rejected search: %q, %d requests", res.Text, len(bodies()))
	}
	full, _ := newSearchEnv(t, permissions.ModeFull)
	full.sandbox = sandbox.Policy{Mode: sandbox.WorkspaceWrite, Network: true}
	if res := searchRun(t, full, `{"query":"x"}`); res.IsError || len(full.asked) != 0 {
		t.Errorf("full mode online: %q, %d questions", res.Text, len(full.asked))
	}
	offline, _ := newSearchEnv(t, permissions.ModeFull)
	offline.sandbox = sandbox.Policy{Mode: sandbox.WorkspaceWrite}
	if res := searchRun(t, offline, `{"query":"x"}`); res.IsError || len(offline.asked) != 1 || !strings.Contains(offline.asked[0].preview[0].Content.Content.Text.Text, "off the network") {
		t.Errorf("full mode offline: %q, %+v", res.Text, offline.asked)
	}
	none, bodies2 := newSearchEnv(t, permissions.ModeFull)
	none.available = false
	if res := searchRun(t, none, `{"query":"x"}`); !res.IsError || !strings.Contains(res.Text, "no web search of its own") || len(bodies2()) != 0 {
		t.Errorf("a model without search: %q", res.Text)
	}
}

// searchRun runs web_search with the JSON input in, in e.
func searchRun(t *testing.T, e *searchEnv, in string) Result {
	t.Helper()
	return webSearchTool().Run(t.Context(), e, &Call{ID: "call-search", Name: "web_search", Input: json.RawMessage(in)})
}
