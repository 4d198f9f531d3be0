//go:build linux

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// TestE2EWebSearch: with an Anthropic model, web_search is offered; the
// model's call asks (full mode, commands offline), makes one nested
// request with the Messages API's web search tool against a local server
// speaking its stream, and the card and the model's tool result carry the
// query and the sources. An OpenAI Chat Completions model is not offered
// the tool.
func TestE2EWebSearch(t *testing.T) {
	t.Parallel()
	search, err := os.ReadFile("../../model/anthropic/testdata/server_tools.sse")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(body))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if strings.Contains(string(body), `"web_search_20250305"`) {
			w.Write(search)
			return
		}
		results, err := anthropicToolResults(body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		step := fakeStep{text: "Go 1.26 it is."}
		if results == 0 {
			step = fakeStep{callID: "toolu_s", tool: "web_search", args: `{"query":"latest go release"}`}
		}
		anthropicStream(&sseWriter{w}, step)
	}))
	defer srv.Close()
	a := newAttack(t)
	p := startProc(t, append(a.env, "ACPD_DISCOVER=0", "ANTHROPIC_API_KEY=sk-ant-search", "ANTHROPIC_BASE_URL="+srv.URL), "--model", "anthropic/claude-sonnet-4-5")
	p.initialize()
	sid := p.newSession(a.project)
	p.mustCall("session/set_mode", map[string]any{"sessionId": sid, "modeId": "full"}, nil)
	var asked []string
	seen := promptLines(t, p, sid, func(m wireMsg) {
		if m.Method == "session/request_permission" {
			asked = append(asked, string(m.Params))
			answerPermission(p, m, "allow_once")
		}
	})
	p.close()
	if len(asked) != 1 || !strings.Contains(asked[0], "Search the web: latest go release") || !strings.Contains(asked[0], "off the network") {
		t.Errorf("permission requests: %v", asked)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) != 3 {
		t.Fatalf("%d model requests, want the turn's two and the search's one:\n%s", len(bodies), strings.Join(bodies, "\n"))
	}
	var first struct {
		Tools []struct {
			Name string `json:"name"`
			Type string `json:"type"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(bodies[0]), &first); err != nil {
		t.Fatal(err)
	}
	offered := false
	for _, tl := range first.Tools {
		offered = offered || tl.Name == "web_search" && tl.Type == ""
	}
	if !offered {
		t.Errorf("web_search is not among the turn's tools: %s", bodies[0])
	}
	if !strings.Contains(bodies[1], `"text":"latest go release"`) {
		t.Errorf("the search request does not carry the query: %s", bodies[1])
	}
	if !strings.Contains(bodies[2], `Sources:\n1. [Go](https://go.dev)`) || !strings.Contains(bodies[2], `(searched: \"go 1.26\")`) {
		t.Errorf("the model's tool result lacks the sources or the query: %s", bodies[2])
	}
	if !strings.Contains(seen, `"title":"Search the web: latest go release"`) || !strings.Contains(seen, `Sources:\n1. [Go](https://go.dev)`) {
		t.Errorf("the card does not show the search and its sources:\n%s", seen)
	}

	// Chat Completions has no search of its own: not offered.
	chat := newFakeProvider(t, "openai", "", nil, fakeStep{text: "no search"})
	q := startProc(t, withEnv(newIsolation(t), "ACPD_DISCOVER=0", "OPENAI_API_KEY=sk-x", "OPENAI_BASE_URL="+chat.srv.URL+"/v1"), "--model", "openai/gpt-test")
	q.initialize()
	if r := q.prompt(q.newSession(e2eProject(t)), "hi"); r.err != nil {
		t.Fatal(r.err)
	}
	q.close()
	if reqs := chat.requests(); len(reqs) != 1 || strings.Contains(string(reqs[0].Body), `"web_search"`) {
		t.Errorf("a Chat Completions model was offered web_search: %d requests", len(reqs))
	}
}
