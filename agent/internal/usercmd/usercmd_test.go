package usercmd

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"acpd/acp"
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

// Commands are found in every location (acpd's, Claude Code's, Codex's),
// the most precedent keeps a name, clashes and acpd's own names are
// namespaced, and frontmatter is read.
func TestLoadLocationsAndClashes(t *testing.T) {
	root, cfg, home := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, ".acpd", "commands", "review.md"), "---\ndescription: Review the diff\nargument-hint: \"[base]\"\nmodel: anthropic/claude-x\nallowed-tools: [Bash, Read]\n---\nReview against $1.\n")
	write(t, filepath.Join(cfg, "commands", "review.md"), "User review: $ARGUMENTS\n")
	write(t, filepath.Join(cfg, "commands", "compact.md"), "Not acpd's compact\n")
	write(t, filepath.Join(root, ".claude", "commands", "frontend", "component.md"), "# Make a component\nCreate $ARGUMENTS.\n")
	write(t, filepath.Join(home, ".claude", "commands", "fix-issue.md"), "Fix issue #$1\n")
	write(t, filepath.Join(home, ".codex", "prompts", "draftpr.md"), "---\ndescription: Draft a PR\n---\nDraft a PR for $ARGUMENTS\n")
	write(t, filepath.Join(home, ".codex", "prompts", "notes.txt"), "not a command")
	write(t, filepath.Join(home, ".codex", "prompts", "bad name.md"), "skipped")

	cmds := Load(Sources(root, cfg, home, func(string) string { return "" }), []string{"compact", "init", "plan"})
	var names []string
	by := map[string]Command{}
	for _, c := range cmds {
		names = append(names, c.Name)
		by[c.Name] = c
	}
	want := []string{"review", "user:compact", "user:review", "frontend:component", "fix-issue", "draftpr"}
	if !slices.Equal(names, want) {
		t.Fatalf("names %q, want %q", names, want)
	}
	r := by["review"]
	if r.Description != "Review the diff" || r.ArgumentHint != "[base]" || r.Model != "anthropic/claude-x" || !slices.Equal(r.AllowedTools, []string{"Bash", "Read"}) || r.Body != "Review against $1." {
		t.Errorf("review = %+v", r)
	}
	if d := by["frontend:component"].Description; d != "Make a component" {
		t.Errorf("description from the first line = %q", d)
	}
	av := Available(cmds)
	if av[0].Input == nil || av[0].Input.Unstructured.Hint != "[base]" || av[0].Description != "Review the diff (model anthropic/claude-x)" {
		t.Errorf("available %+v", av[0])
	}
	// CODEX_HOME wins over ~/.codex.
	other := t.TempDir()
	write(t, filepath.Join(other, "prompts", "mine.md"), "mine")
	cmds = Load(Sources("", "", home, func(k string) string {
		if k == "CODEX_HOME" {
			return other
		}
		return ""
	}), nil)
	if len(cmds) != 2 || cmds[1].Name != "mine" {
		t.Errorf("with CODEX_HOME: %+v", cmds)
	}
}

// Arguments expand exactly: $ARGUMENTS whole, $1… as shell words with
// quotes, unset ones empty, and a body without placeholders gets them
// appended.
func TestExpand(t *testing.T) {
	for _, tc := range []struct{ body, args, want string }{
		{"Fix issue #$1 with priority $2.", `123 "very high"`, "Fix issue #123 with priority very high."},
		{"All: $ARGUMENTS.", "a b  c", "All: a b  c."},
		{"Second: [$2] third: [$3]", "one two", "Second: [two] third: []"},
		{"Costs $5 and $x", "", "Costs  and $x"},
		{"No placeholders.", "extra words", "No placeholders.\n\nextra words"},
		{"No placeholders.", "", "No placeholders."},
		{`Quote: $1`, `'it''s' x`, "Quote: its"},
		{`Esc: $1`, `a\ b c`, "Esc: a b"},
	} {
		if got := Expand(Command{Body: tc.body}, tc.args); got != tc.want {
			t.Errorf("Expand(%q, %q) = %q, want %q", tc.body, tc.args, got, tc.want)
		}
	}
}

func TestFind(t *testing.T) {
	cmds := []Command{{Name: "review"}, {Name: "frontend:component"}}
	text := func(s string) []acp.ContentBlock { return []acp.ContentBlock{{Text: &acp.TextContent{Text: s}}} }
	if c, args, ok := Find(cmds, text("  /review main --strict ")); !ok || c.Name != "review" || args != "main --strict" {
		t.Errorf("Find = %v %q %v", c.Name, args, ok)
	}
	if c, _, ok := Find(cmds, text("/frontend:component")); !ok || c.Name != "frontend:component" {
		t.Errorf("namespaced Find = %v %v", c.Name, ok)
	}
	for _, p := range []string{"/reviewer", "review", "/unknown x"} {
		if _, _, ok := Find(cmds, text(p)); ok {
			t.Errorf("Find(%q) matched", p)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("---\ndescription: x\n---\nbody $1")
	f.Add("---\nbroken")
	f.Add("plain")
	f.Fuzz(func(t *testing.T, s string) {
		c := parse(s)
		_ = Expand(c, "a 'b c' \"d")
	})
}
