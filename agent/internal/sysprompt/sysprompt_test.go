package sysprompt

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// TestBaseSize: the fixed part is about 500 tokens (4 bytes a token,
// roughly).
func TestBaseSize(t *testing.T) {
	if n := len(Base) / 4; n < 350 || n > 700 {
		t.Errorf("the base prompt is about %d tokens", n)
	}
}

// TestProjectInstructions: files from cwd up to the project root, nearest
// first; a file reached under two names, or a copy, is included once; the
// whole is capped.
func TestProjectInstructions(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write("AGENTS.md", "ROOT-RULE\n")
	write("GEMINI.md", "ROOT-RULE\n")
	write("sub/CLAUDE.md", "SUB-RULE\n")
	got := ProjectInstructions(filepath.Join(root, "sub"))
	sub, top := strings.Index(got, "SUB-RULE"), strings.Index(got, "ROOT-RULE")
	if sub < 0 || top < 0 || sub > top {
		t.Fatalf("want SUB-RULE before ROOT-RULE:\n%s", got)
	}
	if strings.Count(got, "ROOT-RULE") != 1 {
		t.Errorf("a copy is included twice:\n%s", got)
	}
	write("AGENTS.md", strings.Repeat("ROOT-RULE: a long line.\n", 4*MaxInstructionBytes/24))
	got = ProjectInstructions(filepath.Join(root, "sub"))
	if !strings.Contains(got, "instructions cut") || len(got) > MaxInstructionBytes+200 {
		t.Errorf("%d bytes, cut said: %v", len(got), strings.Contains(got, "instructions cut"))
	}
}

// TestBuild: the sections appear when their inputs are set, and the same
// input gives the same bytes.
func TestBuild(t *testing.T) {
	in := Input{Mode: "plan", Facts: "Working directory: /x\n", Cwd: t.TempDir(), MCPStatus: "\nserver down\n", Instructions: "be brief"}
	got := Build(in)
	for _, want := range []string{Base, "# Environment\nWorking directory: /x\n", "Mode: plan: read-only.", "# MCP servers\nserver down\n", "# Instructions from the user's configuration\nbe brief\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if Build(in) != got {
		t.Error("Build is not deterministic")
	}
	if strings.Contains(Build(Input{Cwd: in.Cwd}), "# MCP servers") {
		t.Error("an empty MCP status makes a section")
	}
}

// TestCacheGather: facts gathered ahead (Gather, on another goroutine)
// are the prompt's; they are gathered once however many ask at once.
func TestCacheGather(t *testing.T) {
	var c Cache
	var calls atomic.Int32
	release := make(chan struct{})
	facts := func() string {
		calls.Add(1)
		<-release
		return "Gathered facts\n"
	}
	done := make(chan string)
	go func() { done <- c.Gather(facts) }()
	for calls.Load() == 0 {
		runtime.Gosched()
	}
	prompt := make(chan string)
	go func() { prompt <- c.Prompt(Input{Mode: "ask"}, facts) }()
	close(release)
	if got := <-done; got != "Gathered facts\n" {
		t.Errorf("Gather = %q", got)
	}
	if p := <-prompt; !strings.Contains(p, "Gathered facts") {
		t.Errorf("the prompt lacks the gathered facts:\n%s", p)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("facts gathered %d times, want 1", n)
	}
}
