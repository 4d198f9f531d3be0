//go:build linux

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The layouts tests copy a Claude Code user's and a Codex user's setup
// (testdata/layouts/NAME/project into the project, NAME/home into $HOME)
// and check through the binary that acpd reads all of it unchanged.

// copyLayout copies testdata/layouts/name's project and home.
func copyLayout(t *testing.T, name, project, home string) {
	t.Helper()
	for src, dst := range map[string]string{"project": project, "home": home} {
		from := filepath.Join("testdata", "layouts", name, src)
		if _, err := os.Stat(from); err != nil {
			continue
		}
		if err := os.CopyFS(dst, os.DirFS(from)); err != nil {
			t.Fatal(err)
		}
	}
}

// commandNames returns the names of the last available_commands_update p
// sent.
func commandNames(t *testing.T, p *proc) []string {
	t.Helper()
	var names []string
	for _, l := range p.got {
		var m struct {
			Params struct {
				Update struct {
					Kind     string `json:"sessionUpdate"`
					Commands []struct {
						Name string `json:"name"`
					} `json:"availableCommands"`
				} `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(l, &m) == nil && m.Params.Update.Kind == "available_commands_update" {
			names = names[:0]
			for _, c := range m.Params.Update.Commands {
				names = append(names, c.Name)
			}
		}
	}
	return names
}

// layoutModel is a local Messages API server for the layouts: a request
// whose system prompt is the code-reviewer sub-agent's gets its report;
// the session's requests call task (subagent_type code-reviewer), then
// run_command "rm -rf build", then answer. Every body is kept.
type layoutModel struct {
	mu     sync.Mutex
	bodies []string
}

func (f *layoutModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(body))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	if strings.Contains(string(body), "You are a senior code reviewer") {
		anthropicStream(&sseWriter{w}, fakeStep{text: "No problems found in main.txt."})
		return
	}
	results, err := anthropicToolResults(body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	steps := []fakeStep{
		{callID: "toolu_task", tool: "task", args: `{"description":"review","prompt":"Review main.txt","subagent_type":"code-reviewer"}`},
		{callID: "toolu_rm", tool: "run_command", args: `{"command":"rm -rf build"}`},
	}
	step := fakeStep{text: "done"}
	if results < len(steps) {
		step = steps[results]
	}
	anthropicStream(&sseWriter{w}, step)
}

// startLayout starts acpd on the layout's model server and opens a full
// mode session in the project.
func startLayout(t *testing.T, a *attack, srv *httptest.Server) (*proc, string) {
	t.Helper()
	p := startProc(t, append(a.env, "ACPD_DISCOVER=0", "ANTHROPIC_API_KEY=sk-ant-layout", "ANTHROPIC_BASE_URL="+srv.URL), "--model", "anthropic/claude-sonnet-4-5")
	p.initialize()
	sid := p.newSession(a.project)
	p.mustCall("session/set_mode", map[string]any{"sessionId": sid, "modeId": "full"}, nil)
	return p, sid
}

// TestLayoutClaudeCode: a Claude Code project (.claude/commands with a
// namespaced one, .claude/skills, .claude/agents, .claude/settings.json's
// hooks, CLAUDE.md) and user (~/.claude/commands) work as they are: the
// commands and the skill are offered, /review-pr expands, the sub-agent
// runs with its own prompt and tools, and the project's hook, once
// trusted, blocks rm -rf.
func TestLayoutClaudeCode(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	copyLayout(t, "claude-code", a.project, a.iso.Home)
	build := filepath.Join(a.project, "build")
	writeFile(t, filepath.Join(build, "out.o"), "object\n")
	writeFile(t, filepath.Join(a.project, "main.txt"), "package main\n")
	m := &layoutModel{}
	srv := httptest.NewServer(m)
	defer srv.Close()
	p, sid := startLayout(t, a, srv)
	id := p.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "/review-pr 42"}}})
	var asked []string
	for {
		msg := decodeMsg(t, p.next())
		if msg.isResponse() && string(msg.ID) == id {
			if msg.Error != nil {
				t.Fatalf("prompt: %v", msg.Error)
			}
			break
		}
		if msg.Method == "session/request_permission" {
			asked = append(asked, string(msg.Params))
			answerPermission(p, msg, "allow_always")
		}
	}
	p.close()
	names := commandNames(t, p)
	for _, want := range []string{"review-pr", "frontend:component", "standup", "changelog"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not offered: %v", want, names)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.bodies) != 4 {
		t.Fatalf("%d model requests, want 4 (three of the session, one of the sub-agent)", len(m.bodies))
	}
	first := m.bodies[0]
	for _, want := range []string{"Review pull request #42: read the diff", "make check-fixture-marker", "changelog: Write a CHANGELOG entry", `"enum":["code-reviewer"]`} {
		if !strings.Contains(first, want) {
			t.Errorf("the first request lacks %q", want)
		}
	}
	var sub struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(m.bodies[1]), &sub); err != nil {
		t.Fatal(err)
	}
	var subTools []string
	for _, tl := range sub.Tools {
		subTools = append(subTools, tl.Name)
	}
	if !slices.Equal(subTools, []string{"read_file", "grep", "glob"}) {
		t.Errorf("the sub-agent's tools %v, want its file's Read, Grep, Glob", subTools)
	}
	if !strings.Contains(m.bodies[2], "No problems found in main.txt.") {
		t.Errorf("the sub-agent's report did not reach the session's model")
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "block-rm.py") {
		t.Errorf("permission requests: %v, want the one trust question naming the hook", asked)
	}
	if _, err := os.Stat(filepath.Join(build, "out.o")); err != nil {
		t.Errorf("rm -rf ran despite the project's hook: %v", err)
	}
	if !strings.Contains(m.bodies[3], "rm -rf is blocked by the project's hook") {
		t.Errorf("the model was not told why the command was blocked")
	}
}

// TestLayoutCodex: a Codex user's prompts ($CODEX_HOME/prompts) and
// skills ($CODEX_HOME/skills) and the project's AGENTS.md work as they
// are.
func TestLayoutCodex(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	copyLayout(t, "codex", a.project, a.iso.Home)
	m := &layoutModel{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		m.bodies = append(m.bodies, string(body))
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		anthropicStream(&sseWriter{w}, fakeStep{text: "fixed"})
	}))
	defer srv.Close()
	p, sid := startLayout(t, a, srv)
	promptLines(t, p, sid, func(wireMsg) {})
	if r := p.prompt(sid, "/fix-lint main.go"); r.err != nil {
		t.Fatal(r.err)
	}
	p.close()
	names := commandNames(t, p)
	for _, want := range []string{"fix-lint", "release-notes"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not offered: %v", want, names)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	last := m.bodies[len(m.bodies)-1]
	for _, want := range []string{"Fix every lint error in main.go and explain each fix.", "codex-fixture-marker", "release-notes: Draft release notes"} {
		if !strings.Contains(last, want) {
			t.Errorf("the request lacks %q", want)
		}
	}
}
