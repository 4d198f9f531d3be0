package subagents

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadPrecedenceAndTools(t *testing.T) {
	root, cfg, home := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, ".acpd", "agents", "reviewer.md"), "---\nname: reviewer\ndescription: acpd's reviewer\nmodel: inherit\n---\nReview.\n")
	write(t, filepath.Join(root, ".claude", "agents", "reviewer.md"), "---\nname: reviewer\ndescription: Claude's reviewer\n---\nShadowed.\n")
	write(t, filepath.Join(root, ".claude", "agents", "tester.md"), "---\nname: tester\ndescription: Runs tests\ntools: Bash, Read, NotebookEdit, Frobnicate\nmodel: haiku\n---\nRun the tests.\n")
	write(t, filepath.Join(home, ".claude", "agents", "bad.md"), "---\nname: Bad Name\ndescription: x\n---\n")
	write(t, filepath.Join(home, ".claude", "agents", "nodesc.md"), "---\nname: nodesc\n---\n")
	write(t, filepath.Join(home, ".claude", "agents", "notes.txt"), "---\nname: notes\ndescription: not markdown\n---\n")
	known := func(n string) bool { return n == "run_command" || n == "read_file" }
	got := Load(Sources(root, cfg, home), known)
	if len(got) != 2 {
		t.Fatalf("%d agents: %+v", len(got), got)
	}
	r, te := got[0], got[1]
	if r.Name != "reviewer" || r.Description != "acpd's reviewer" || r.Prompt != "Review." || r.Model != "" || r.Tools != nil {
		t.Errorf("reviewer %+v: want the .acpd one, inheriting the model and all tools", r)
	}
	if te.Name != "tester" || te.Model != "haiku" || !slices.Equal(te.Tools, []string{"run_command", "read_file"}) || !slices.Equal(te.Unknown, []string{"Frobnicate"}) {
		t.Errorf("tester %+v", te)
	}
}

// validName accepts what ^[a-z0-9][a-z0-9_-]{0,63}$ does, and nothing else.
func TestValidName(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	for _, n := range []string{"", "a", "0", "-a", "_a", "a-b_c9", "A", "a.b", "a b", "é", strings.Repeat("a", 64), strings.Repeat("a", 65), "a\n", "ab-", "a_"} {
		if got, want := validName(n), re.MatchString(n); got != want {
			t.Errorf("validName(%q) = %v, want %v", n, got, want)
		}
	}
}
