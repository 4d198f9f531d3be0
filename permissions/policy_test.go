package permissions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"acpd/acp"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// workspace is a temporary project with a root, a config dir and a state dir.
type workspace struct {
	root, config, state, outside string
}

func newWorkspace(t *testing.T) workspace {
	t.Helper()
	base := t.TempDir()
	w := workspace{
		root:    filepath.Join(base, "proj"),
		config:  filepath.Join(base, "config", "acpd"),
		state:   filepath.Join(base, "state", "acpd"),
		outside: filepath.Join(base, "elsewhere"),
	}
	for _, d := range []string{w.root, w.config, w.state, w.outside, filepath.Join(w.root, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// in is a path inside the root.
func (w workspace) in(rel string) Path {
	return Path{Abs: filepath.Join(w.root, filepath.FromSlash(rel)), Rel: rel, Inside: true}
}

// out is a path outside every root.
func (w workspace) out(abs string) Path {
	return Path{Abs: abs}
}

func (w workspace) policy(t *testing.T, store *Store, rules ...Rule) *Policy {
	t.Helper()
	p, err := NewPolicy(PolicyOptions{Tools: testTools, Rules: rules, Protected: []string{w.config, w.state}, Store: store, Project: w.root})
	if err != nil {
		t.Fatalf("NewPolicy: %v", err)
	}
	return p
}

// storePolicy returns a store in w's state directory and a policy of w
// remembering in it.
func (w workspace) storePolicy(t *testing.T) (*Store, *Policy) {
	t.Helper()
	store := openTestStore(t, w.state)
	return store, w.policy(t, store)
}

func openTestStore(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := OpenStore(filepath.Join(dir, "permissions.json"))
	if err != nil {
		t.Fatalf("OpenStore: %v", err)
	}
	return s
}

var allModes = []Mode{ModeAsk, ModeAutoEdit, ModePlan, ModeFull}

// byMode lists the expected action per mode: ask, auto-edit, plan, full.
type byMode [4]Action

func TestDecideModes(t *testing.T) {
	w := newWorkspace(t)
	p := w.policy(t, nil)
	cases := []struct {
		name string
		call Call
		want byMode
	}{
		{"read inside", Call{Tool: "read_file", Kind: acp.ToolKindRead, Paths: []Path{w.in("main.go")}}, byMode{Allow, Allow, Allow, Allow}},
		{"list_dir root", Call{Tool: "list_dir", Kind: acp.ToolKindRead, Paths: []Path{w.in(".")}}, byMode{Allow, Allow, Allow, Allow}},
		{"grep inside", Call{Tool: "grep", Kind: acp.ToolKindSearch, Paths: []Path{w.in("src")}}, byMode{Allow, Allow, Allow, Allow}},
		{"glob inside", Call{Tool: "glob", Kind: acp.ToolKindSearch, Paths: []Path{w.in("src")}}, byMode{Allow, Allow, Allow, Allow}},
		{"read outside", Call{Tool: "read_file", Kind: acp.ToolKindRead, Paths: []Path{w.out("/etc/passwd")}}, byMode{Ask, Ask, Ask, Ask}},
		{"write inside", Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("main.go")}}, byMode{Ask, Allow, Deny, Allow}},
		{"edit inside", Call{Tool: "edit_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("a/b.go")}}, byMode{Ask, Allow, Deny, Allow}},
		{"write outside", Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.out(filepath.Join(w.outside, "x"))}}, byMode{Ask, Ask, Deny, Ask}},
		{"write one of two outside", Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("a"), w.out(filepath.Join(w.outside, "x"))}}, byMode{Ask, Ask, Deny, Ask}},
		{"write without path", Call{Tool: "write_file", Kind: acp.ToolKindEdit}, byMode{Ask, Ask, Deny, Ask}},
		{"read without path", Call{Tool: "read_file", Kind: acp.ToolKindRead}, byMode{Ask, Ask, Ask, Ask}},
		{"inside flag with escaping rel", Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{{Abs: filepath.Join(w.outside, "x"), Rel: "../elsewhere/x", Inside: true}}}, byMode{Ask, Ask, Deny, Ask}},
		{"inside flag with empty rel", Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{{Abs: filepath.Join(w.root, "x"), Inside: true}}}, byMode{Ask, Ask, Deny, Ask}},
		{"relative abs", Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{{Abs: "x", Rel: "x", Inside: true}}}, byMode{Ask, Ask, Deny, Ask}},
		{"command", Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: "go test ./..."}, byMode{Ask, Ask, Deny, Allow}},
		{"mcp mutating", Call{Tool: "mcp__github__create_issue"}, byMode{Ask, Ask, Deny, Allow}},
		{"mcp read-only", Call{Tool: "mcp__github__get_issue", ReadOnly: true}, byMode{Ask, Ask, Ask, Allow}},
		{"unknown tool", Call{Tool: "frobnicate"}, byMode{Ask, Ask, Deny, Allow}},
		{"update_plan", Call{Tool: "update_plan", Kind: acp.ToolKindThink}, byMode{Allow, Allow, Allow, Allow}},
	}
	for _, tc := range cases {
		for i, mode := range allModes {
			d := p.Decide(mode, tc.call)
			if d.Action != tc.want[i] {
				t.Errorf("%s in %s mode: got %s (%s), want %s", tc.name, mode, d.Action, d.Reason, tc.want[i])
			}
			if d.Reason == "" {
				t.Errorf("%s in %s mode: empty reason", tc.name, mode)
			}
			if mode == ModePlan && d.Action == Deny && d.Reason != "plan mode is read-only" {
				t.Errorf("%s in plan mode: reason %q", tc.name, d.Reason)
			}
		}
	}
}

func TestUnknownModeBehavesAsAsk(t *testing.T) {
	w := newWorkspace(t)
	p := w.policy(t, nil)
	for _, mode := range []Mode{"", "FULL", "yolo"} {
		if d := p.Decide(mode, Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("a")}}); d.Action != Ask {
			t.Errorf("mode %q: write got %s", mode, d.Action)
		}
		if d := p.Decide(mode, Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: "ls"}); d.Action != Ask {
			t.Errorf("mode %q: command got %s", mode, d.Action)
		}
	}
}

func TestDecideRules(t *testing.T) {
	w := newWorkspace(t)
	cases := []struct {
		name  string
		rules []Rule
		mode  Mode
		call  Call
		want  Action
	}{
		{"allow glob matches", []Rule{{Action: Allow, Tool: "write_file", Match: "docs/**"}}, ModeAsk,
			Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("docs/a/b.md")}}, Allow},
		{"allow glob does not match sibling", []Rule{{Action: Allow, Tool: "write_file", Match: "docs/**"}}, ModeAsk,
			Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("docsx/a.md")}}, Ask},
		{"allow glob on one of two paths", []Rule{{Action: Allow, Tool: "write_file", Match: "docs/**"}}, ModeAsk,
			Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("docs/a.md"), w.in("src/a.go")}}, Ask},
		{"allow tool glob", []Rule{{Action: Allow, Tool: "*_file"}}, ModeAsk,
			Call{Tool: "edit_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("x")}}, Allow},
		{"single star does not cross directories", []Rule{{Action: Allow, Tool: "write_file", Match: "*.md"}}, ModeAsk,
			Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("docs/a.md")}}, Ask},
		{"middle doublestar", []Rule{{Action: Allow, Tool: "write_file", Match: "src/**/*_test.go"}}, ModeAsk,
			Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("src/a/b/c_test.go")}}, Allow},
		{"absolute glob", []Rule{{Action: Deny, Tool: "read_file", Match: filepath.ToSlash(w.outside) + "/**"}}, ModeFull,
			Call{Tool: "read_file", Kind: acp.ToolKindRead, Paths: []Path{w.out(filepath.Join(w.outside, "secret"))}}, Deny},
		{"deny relative glob", []Rule{{Action: Deny, Tool: "*", Match: "secrets/**"}}, ModeFull,
			Call{Tool: "read_file", Kind: acp.ToolKindRead, Paths: []Path{w.in("secrets/key")}}, Deny},
		{"deny without match denies the tool", []Rule{{Action: Deny, Tool: "write_file"}}, ModeFull,
			Call{Tool: "write_file", Kind: acp.ToolKindEdit}, Deny},
		{"ask rule in full mode", []Rule{{Action: Ask, Tool: "write_file", Match: "go.mod"}}, ModeFull,
			Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("go.mod")}}, Ask},
		{"mcp allow rule", []Rule{{Action: Allow, Tool: "mcp__github__*"}}, ModeAsk,
			Call{Tool: "mcp__github__create_issue"}, Allow},
		{"mcp allow rule other server", []Rule{{Action: Allow, Tool: "mcp__github__*"}}, ModeAsk,
			Call{Tool: "mcp__gitlab__create_issue"}, Ask},
		{"mcp deny rule in full", []Rule{{Action: Deny, Tool: "mcp__*"}}, ModeFull,
			Call{Tool: "mcp__github__create_issue"}, Deny},
		{"mcp ask rule in full", []Rule{{Action: Ask, Tool: "mcp__github__delete_*"}}, ModeFull,
			Call{Tool: "mcp__github__delete_repo"}, Ask},
		{"path rule does not apply to mcp", []Rule{{Action: Deny, Tool: "*", Match: "docs/**"}}, ModeFull,
			Call{Tool: "mcp__x__y", ReadOnly: true}, Allow},
		{"read-only mcp allowed by rule in plan", []Rule{{Action: Allow, Tool: "mcp__x__get"}}, ModePlan,
			Call{Tool: "mcp__x__get", ReadOnly: true}, Allow},
		{"deny rule on update_plan is moot", []Rule{{Action: Deny, Tool: "*"}}, ModeAsk,
			Call{Tool: "update_plan", Kind: acp.ToolKindThink}, Allow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := w.policy(t, nil, tc.rules...)
			if d := p.Decide(tc.mode, tc.call); d.Action != tc.want {
				t.Errorf("got %s (%s), want %s", d.Action, d.Reason, tc.want)
			}
		})
	}
}

// TestPrecedence checks that each step beats every later one.
func TestPrecedence(t *testing.T) {
	w := newWorkspace(t)
	store := openTestStore(t, w.state)
	write := func(rel string) Call {
		return Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in(rel)}}
	}

	// Remembered: allow a.txt, reject b.txt, and (as if hand-edited: Remember
	// refuses protected paths) allow .git/config.
	if err := store.add(w.root, []Rule{
		{Action: Allow, Tool: "write_file", Match: "a.txt"},
		{Action: Deny, Tool: "write_file", Match: "b.txt"},
		{Action: Allow, Tool: "write_file", Match: ".git/config"},
	}); err != nil {
		t.Fatal(err)
	}

	type step struct {
		name   string
		rules  []Rule
		mode   Mode
		call   Call
		want   Action
		reason string // substring of the reason
	}
	steps := []step{
		{"1 plan beats deny rule", []Rule{{Action: Deny, Tool: "write_file"}}, ModePlan, write("x"), Deny, "plan mode is read-only"},
		{"1 plan beats allow rule", []Rule{{Action: Allow, Tool: "write_file"}}, ModePlan, write("x"), Deny, "plan mode is read-only"},
		{"2 deny rule beats protected", []Rule{{Action: Deny, Tool: "write_file", Match: ".git/**"}}, ModeFull, write(".git/config"), Deny, "denied by rule"},
		{"2 deny rule beats outside", []Rule{{Action: Deny, Tool: "read_file"}}, ModeAsk, Call{Tool: "read_file", Kind: acp.ToolKindRead, Paths: []Path{w.out("/etc/passwd")}}, Deny, "denied by rule"},
		{"2 deny rule beats remembered allow", []Rule{{Action: Deny, Tool: "write_file", Match: "*.txt"}}, ModeAsk, write("a.txt"), Deny, "denied by rule"},
		{"2 deny rule beats allow rule", []Rule{{Action: Allow, Tool: "write_file"}, {Action: Deny, Tool: "write_file"}}, ModeFull, write("x"), Deny, "denied by rule"},
		{"2 deny rule beats full mode", []Rule{{Action: Deny, Tool: "write_file"}}, ModeFull, write("x"), Deny, "denied by rule"},
		{"3 protected beats allow rule in full", []Rule{{Action: Allow, Tool: "write_file"}}, ModeFull, write(".git/config"), Ask, ".git"},
		{"3 outside beats absolute allow rule in full", []Rule{{Action: Allow, Tool: "write_file", Match: "/**"}}, ModeFull, Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.out(filepath.Join(w.outside, "x"))}}, Ask, "outside"},
		{"3 protected beats remembered allow", nil, ModeFull, write(".git/config"), Ask, ".git"},
		{"3 project config beats allow rule in full", []Rule{{Action: Allow, Tool: "write_file"}}, ModeFull, write(".acpd/config.toml"), Ask, ".acpd"},
		{"3 project config case-smuggled", []Rule{{Action: Allow, Tool: "write_file"}}, ModeFull, write(".ACPD/config.toml"), Ask, ".acpd"},
		{"4 remembered reject beats allow rule", []Rule{{Action: Allow, Tool: "write_file"}}, ModeFull, write("b.txt"), Deny, "always reject"},
		{"4 remembered reject beats ask rule", []Rule{{Action: Ask, Tool: "write_file"}}, ModeFull, write("b.txt"), Deny, "always reject"},
		{"4 ask rule beats allow rule", []Rule{{Action: Allow, Tool: "write_file"}, {Action: Ask, Tool: "write_file", Match: "a.txt"}}, ModeFull, write("a.txt"), Ask, "requires approval"},
		{"4 remembered allow beats mode", nil, ModeAsk, write("a.txt"), Allow, "remembered"},
		{"4 allow rule beats mode", []Rule{{Action: Allow, Tool: "write_file", Match: "x"}}, ModeAsk, write("x"), Allow, "rule"},
		{"5 mode default", nil, ModeAsk, write("x"), Ask, "ask mode"},
		{"5 mode default auto-edit", nil, ModeAutoEdit, write("x"), Allow, "auto-edit"},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			p := w.policy(t, store, s.rules...)
			d := p.Decide(s.mode, s.call)
			if d.Action != s.want || !strings.Contains(d.Reason, s.reason) {
				t.Errorf("got %s (%q), want %s with reason containing %q", d.Action, d.Reason, s.want, s.reason)
			}
		})
	}
}

func TestProtectedPaths(t *testing.T) {
	w := newWorkspace(t)
	// The state dir also lives inside the root in this test, to check it is
	// protected even though it is inside.
	innerState := filepath.Join(w.root, ".acpd-state")
	if err := os.MkdirAll(innerState, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(w.root, ".git"), filepath.Join(w.root, "gitlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.state, filepath.Join(w.root, "statelink")); err != nil {
		t.Fatal(err)
	}
	allowAll := []Rule{{Action: Allow, Tool: "*"}}
	p, err := NewPolicy(PolicyOptions{Tools: testTools, Rules: allowAll, Protected: []string{w.config, w.state, innerState}})
	if err != nil {
		t.Fatal(err)
	}
	paths := []Path{
		w.in(".git"),
		w.in(".git/config"),
		w.in(".git/hooks/pre-commit"),
		w.in("vendor/mod/.git/HEAD"),
		w.in(".GIT/config"),
		w.in(".acpd-state/permissions.json"),
		w.in("gitlink/config"),
		w.in("statelink/permissions.json"),
		w.out(filepath.Join(w.state, "permissions.json")),
		w.out(w.state),
		w.out(filepath.Join(w.config, "config.toml")),
	}
	for _, path := range paths {
		for _, tool := range []string{"read_file", "write_file", "edit_file", "list_dir"} {
			for _, mode := range []Mode{ModeAsk, ModeAutoEdit, ModeFull} {
				d := p.Decide(mode, Call{Tool: tool, Kind: testTools[tool], Paths: []Path{path}})
				if d.Action != Ask {
					t.Errorf("%s %s in %s mode: got %s (%s), want ask", tool, path.Abs, mode, d.Action, d.Reason)
				}
				if len(d.Remember) != 0 {
					t.Errorf("%s %s: protected path offered to remember %v", tool, path.Abs, d.Remember)
				}
			}
		}
	}
	// Names that merely resemble protected ones are not protected.
	for _, rel := range []string{".gitignore", ".github/workflows/ci.yml", "git/config", ".acpd-statex/a"} {
		if d := p.Decide(ModeAsk, Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in(rel)}}); d.Action != Allow {
			t.Errorf("%s: got %s (%s), want allow", rel, d.Action, d.Reason)
		}
	}
}

func TestNewPolicyValidation(t *testing.T) {
	bad := []struct {
		rule Rule
		want string
	}{
		{Rule{Action: "permit", Tool: "*"}, "unknown action"},
		{Rule{Action: "", Tool: "*"}, "unknown action"},
		{Rule{Action: Allow, Tool: ""}, "tool is empty"},
		{Rule{Action: Allow, Tool: "mcp__[x"}, "not a valid glob"},
		{Rule{Action: Allow, Tool: "run_command", Match: "go test; rm x"}, "single simple command"},
		{Rule{Action: Allow, Tool: "run_command", Match: "go test $X"}, "literal"},
		{Rule{Action: Allow, Tool: "run_command", Match: "go test '"}, "does not parse"},
		{Rule{Action: Allow, Tool: "run_command", Match: "go [x"}, "not a valid glob"},
		{Rule{Action: Allow, Tool: "run_command", Match: "X=1 go"}, "single simple command"},
		{Rule{Action: Allow, Tool: "run_command", Match: "go > x"}, "single simple command"},
		{Rule{Action: Allow, Tool: "write_file", Match: "docs/[x"}, "not a valid glob"},
		{Rule{Action: Allow, Tool: "write_file", Match: "docs//x"}, "empty segment"},
		{Rule{Action: Allow, Tool: "write_file", Match: "../x"}, `".."`},
		{Rule{Action: Allow, Tool: "write_file", Match: "/"}, "matches nothing"},
		{Rule{Action: Allow, Tool: "mcp__github__*", Match: "x"}, "only meaningful"},
	}
	for _, b := range bad {
		_, err := NewPolicy(PolicyOptions{Tools: testTools, Rules: []Rule{{Action: Allow, Tool: "read_file"}, b.rule}})
		if err == nil {
			t.Errorf("%s: no error", b.rule)
			continue
		}
		if !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), "rule 2") {
			t.Errorf("%s: error %q does not mention %q and the rule number", b.rule, err, b.want)
		}
	}
	if _, err := NewPolicy(PolicyOptions{Tools: testTools, Protected: []string{"relative/dir"}}); err == nil {
		t.Error("relative protected dir accepted")
	}
	good := []Rule{
		{Action: Allow, Tool: "run_command", Match: "go test *"},
		{Action: Ask, Tool: "run_command", Match: `git commit -m "*"`},
		{Action: Deny, Tool: "*", Match: "secrets/**"},
		{Action: Allow, Tool: "mcp__github__*"},
		{Action: Allow, Tool: "write_file", Match: "/tmp/**"},
	}
	if _, err := NewPolicy(PolicyOptions{Tools: testTools, Rules: good}); err != nil {
		t.Errorf("valid rules rejected: %v", err)
	}
}

func TestStoreFailureFailsClosed(t *testing.T) {
	w := newWorkspace(t)
	store, p := w.storePolicy(t)
	read := Call{Tool: "read_file", Kind: acp.ToolKindRead, Paths: []Path{w.in("a")}}
	if d := p.Decide(ModeAsk, read); d.Action != Allow {
		t.Fatalf("before corruption: %s", d.Action)
	}
	if err := os.WriteFile(store.path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range allModes {
		d := p.Decide(mode, read)
		if d.Action != Ask || !strings.Contains(d.Reason, "unavailable") {
			t.Errorf("%s: got %s (%s), want ask mentioning the store", mode, d.Action, d.Reason)
		}
	}
	write := Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("a")}}
	d := p.Decide(ModeAsk, write)
	if len(d.Remember) != 0 {
		t.Errorf("broken store offered to remember %v", d.Remember)
	}
	if d := p.Decide(ModePlan, write); d.Action != Deny {
		t.Errorf("plan mode with broken store: %s", d.Action)
	}
	if _, err := OpenStore(store.path); err == nil {
		t.Error("OpenStore accepted a corrupt file")
	}
	if _, err := store.List(); err == nil {
		t.Error("List accepted a corrupt file")
	}
	if err := p.Remember(write, Decision{Action: Ask, Remember: []Rule{{Tool: "write_file", Match: "a"}}}, true); err == nil {
		t.Error("Remember wrote over a corrupt file")
	}
}

func TestInvalidRememberedRuleFailsClosed(t *testing.T) {
	w := newWorkspace(t)
	store := openTestStore(t, w.state)
	data := `{"version":1,"entries":[{"project":` + quoteJSON(w.root) + `,"rule":{"action":"allow","tool":"run_command","match":"a; b"}}]}`
	if err := os.WriteFile(store.path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	p := w.policy(t, store)
	d := p.Decide(ModeFull, Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: "ls"})
	if d.Action != Ask || !strings.Contains(d.Reason, "acpd permissions rm") {
		t.Errorf("got %s (%s), want ask pointing at acpd permissions rm", d.Action, d.Reason)
	}
	list, err := store.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("List: %v %v", list, err)
	}
	if err := store.Remove(list[0].ID); err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(ModeFull, Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: "ls"}); d.Action != Allow {
		t.Errorf("after removing the bad entry: %s (%s)", d.Action, d.Reason)
	}
}

func quoteJSON(s string) string {
	return `"` + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`) + `"`
}

func TestPathGlob(t *testing.T) {
	cases := []struct {
		pattern, rel string
		want         bool
	}{
		{"docs/**", "docs", true},
		{"docs/**", "docs/a", true},
		{"docs/**", "docs/a/b/c", true},
		{"docs/**", "doc/a", false},
		{"**", "a/b", true},
		{"**", ".", true},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/main.go", true},
		{"**/*.go", "a/b/main.c", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/**/b", "a/x/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"*.md", "README.md", true},
		{"*.md", "docs/README.md", false},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axb", false},
	}
	for _, c := range cases {
		g, err := compilePathGlob(c.pattern)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if got := g.match(c.rel, ""); got != c.want {
			t.Errorf("%q vs %q: got %v", c.pattern, c.rel, got)
		}
	}
	// Many ** segments stay cheap.
	g, err := compilePathGlob(strings.Repeat("**/x/", 40) + "y")
	if err != nil {
		t.Fatal(err)
	}
	if g.match(strings.Repeat("x/", 200)+"z", "") {
		t.Error("unexpected match")
	}
}

func TestErrCannotRememberIsSentinel(t *testing.T) {
	w := newWorkspace(t)
	p := w.policy(t, nil)
	c := Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("a")}}
	d := p.Decide(ModeAsk, c)
	if len(d.Remember) != 0 {
		t.Errorf("no store, but Remember = %v", d.Remember)
	}
	if err := p.Remember(c, Decision{Action: Ask, Remember: []Rule{{Tool: "write_file", Match: "a"}}}, true); !errors.Is(err, ErrCannotRemember) {
		t.Errorf("Remember without store: %v", err)
	}
}

func TestSymlinks(t *testing.T) {
	w := newWorkspace(t)
	mkdir := func(rel string) {
		if err := os.MkdirAll(filepath.Join(w.root, rel), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, rel string) {
		if err := os.Symlink(target, filepath.Join(w.root, rel)); err != nil {
			t.Fatal(err)
		}
	}
	mkdir("docs")
	mkdir("src")
	mkdir("secrets")
	if err := os.WriteFile(filepath.Join(w.root, "src", "main.go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	link(w.outside, "out")                                  // a directory outside the root
	link(filepath.Join(w.root, "src", "main.go"), "docs/x") // docs/x is really src/main.go
	link(filepath.Join(w.root, "secrets"), "alias")         // alias/ is really secrets/
	link(filepath.Join(w.outside, "new"), "dangling")       // writing it creates a file outside
	link("../.git/new", "docs/dangling-git")                // relative, into .git
	link("loop", "loop")

	p := w.policy(t, nil,
		Rule{Action: Allow, Tool: "write_file", Match: "docs/**"},
		Rule{Action: Deny, Tool: "read_file", Match: "secrets/**"},
	)
	cases := []struct {
		name string
		mode Mode
		call Call
		want Action
	}{
		{"write through a link out of the root", ModeFull, Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("out/x")}}, Ask},
		{"read through a link out of the root", ModeAsk, Call{Tool: "read_file", Kind: acp.ToolKindRead, Paths: []Path{w.in("out/x")}}, Ask},
		{"allow rule needs the target to match too", ModeAsk, Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("docs/x")}}, Ask},
		{"allow rule for a plain file", ModeAsk, Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("docs/y")}}, Allow},
		{"deny rule matches the target", ModeFull, Call{Tool: "read_file", Kind: acp.ToolKindRead, Paths: []Path{w.in("alias/key")}}, Deny},
		{"deny rule matches the written path", ModeFull, Call{Tool: "read_file", Kind: acp.ToolKindRead, Paths: []Path{w.in("secrets/key")}}, Deny},
		{"write through a dangling link", ModeFull, Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("dangling")}}, Ask},
		{"write through a relative dangling link into .git", ModeFull, Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("docs/dangling-git")}}, Ask},
		{"symlink loop", ModeFull, Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("loop")}}, Allow},
		{"Rel inconsistent with Abs", ModeFull, Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{{Abs: filepath.Join(w.root, "a"), Rel: "b", Inside: true}}}, Ask},
	}
	for _, c := range cases {
		if d := p.Decide(c.mode, c.call); d.Action != c.want {
			t.Errorf("%s: got %s (%s), want %s", c.name, d.Action, d.Reason, c.want)
		}
	}

	// A path behind a symbolic link inside the root cannot be remembered: the
	// approval would not follow the link if it were re-pointed.
	store := openTestStore(t, w.state)
	pr := w.policy(t, store)
	call := Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("docs/x")}}
	d := pr.Decide(ModeAsk, call)
	if d.Action != Ask || len(d.Remember) != 0 {
		t.Errorf("symlinked path: %s Remember=%v", d.Action, d.Remember)
	}
	forged := Decision{Action: Ask, Remember: []Rule{{Tool: "write_file", Match: "docs/x"}}}
	if err := pr.Remember(call, forged, true); !errors.Is(err, ErrCannotRemember) {
		t.Errorf("forged Remember for a symlinked path: %v", err)
	}
}

func TestSymlinkedRootCanRemember(t *testing.T) {
	w := newWorkspace(t)
	alias := filepath.Join(w.outside, "alias")
	if err := os.Symlink(w.root, alias); err != nil {
		t.Fatal(err)
	}
	store := openTestStore(t, w.state)
	p, err := NewPolicy(PolicyOptions{Tools: testTools, Store: store, Project: alias})
	if err != nil {
		t.Fatal(err)
	}
	path := Path{Abs: filepath.Join(alias, "src", "a.go"), Rel: "src/a.go", Inside: true}
	call := Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{path}}
	d := p.Decide(ModeAsk, call)
	if !slices.Equal(d.Remember, []Rule{{Tool: "write_file", Match: "src/a.go"}}) {
		t.Fatalf("Remember = %v", d.Remember)
	}
	if err := p.Remember(call, d, true); err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(ModeAsk, call); d.Action != Allow {
		t.Errorf("after remembering: %s (%s)", d.Action, d.Reason)
	}
}

// TestConcurrentUse exercises Decide and Remember from several goroutines on
// one Policy and Store (run with -race).
func TestConcurrentUse(t *testing.T) {
	w := newWorkspace(t)
	store := openTestStore(t, w.state)
	p := w.policy(t, store, allowCmd("go test *"))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				call := runCmd(fmt.Sprintf("echo %d-%d && go test ./...", g, i))
				d := p.Decide(ModeAsk, call)
				if d.Action != Ask {
					t.Errorf("%s: %s", call.Command, d.Action)
					return
				}
				if err := p.Remember(call, d, true); err != nil {
					t.Error(err)
					return
				}
				if d := p.Decide(ModeAsk, call); d.Action != Allow {
					t.Errorf("%s after Remember: %s", call.Command, d.Action)
					return
				}
			}
		}()
	}
	wg.Wait()
	list, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 40 {
		t.Errorf("%d entries, want 40", len(list))
	}
}

func BenchmarkDecideCommand(b *testing.B) {
	p, err := NewPolicy(PolicyOptions{Tools: testTools, Rules: []Rule{allowCmd("go test *"), allowCmd("echo *"), denyCmd("rm *")}})
	if err != nil {
		b.Fatal(err)
	}
	call := runCmd("go test ./... 2>&1 && echo ok || echo failed > /dev/null")
	for b.Loop() {
		if d := p.Decide(ModeAsk, call); d.Action != Allow {
			b.Fatal(d.Action)
		}
	}
}

func BenchmarkDecideFileWithStore(b *testing.B) {
	base := b.TempDir()
	store, err := OpenStore(filepath.Join(base, "state", "permissions.json"))
	if err != nil {
		b.Fatal(err)
	}
	rules := make([]Rule, 100)
	for i := range rules {
		rules[i] = Rule{Action: Allow, Tool: "write_file", Match: fmt.Sprintf("f%d", i)}
	}
	if err := store.add(base, rules); err != nil {
		b.Fatal(err)
	}
	p, err := NewPolicy(PolicyOptions{Tools: testTools, Store: store, Project: base})
	if err != nil {
		b.Fatal(err)
	}
	call := Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{{Abs: filepath.Join(base, "f99"), Rel: "f99", Inside: true}}}
	for b.Loop() {
		if d := p.Decide(ModeAsk, call); d.Action != Allow {
			b.Fatal(d.Action, d.Reason)
		}
	}
}

// TestNoApproval: a call marked NoApproval (the MCP resource tools) runs
// without asking in every mode, unless a deny rule or a remembered
// rejection refuses it.
func TestNoApproval(t *testing.T) {
	w := newWorkspace(t)
	call := Call{Tool: "mcp_read_resource", ReadOnly: true, NoApproval: true}
	p := w.policy(t, nil)
	for _, mode := range allModes {
		if d := p.Decide(mode, call); d.Action != Allow || len(d.Remember) != 0 {
			t.Errorf("%s: %+v, want allow", mode, d)
		}
	}
	p = w.policy(t, nil, Rule{Action: Deny, Tool: "mcp_*"})
	if d := p.Decide(ModeFull, call); d.Action != Deny {
		t.Errorf("with a deny rule: %+v, want deny", d)
	}
	store := openTestStore(t, t.TempDir())
	p = w.policy(t, store)
	if err := p.Remember(Call{Tool: call.Tool}, p.Decide(ModeAsk, Call{Tool: call.Tool}), false); err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(ModeAsk, call); d.Action != Deny {
		t.Errorf("after always reject: %+v, want deny", d)
	}
}

// testTools are acpd's built-in tools by kind, as the agent passes them.
var testTools = map[string]acp.ToolKind{
	"read_file": acp.ToolKindRead, "list_dir": acp.ToolKindRead,
	"glob": acp.ToolKindSearch, "grep": acp.ToolKindSearch,
	"write_file": acp.ToolKindEdit, "edit_file": acp.ToolKindEdit,
	"run_command": acp.ToolKindExecute, "update_plan": acp.ToolKindThink,
}

// TestHintedRead: an MCP tool its server marks as read-only runs without
// asking in auto-edit mode, in ask mode only when the user trusts that
// server's hints; rules still decide first.
func TestHintedRead(t *testing.T) {
	w := newWorkspace(t)
	p := w.policy(t, nil)
	read := Call{Tool: "mcp__srv__lookup", Kind: acp.ToolKindOther, ReadOnly: true, HintedRead: true}
	trusted := read
	trusted.TrustHints = true
	for _, tc := range []struct {
		mode Mode
		call Call
		want Action
	}{
		{ModeAutoEdit, read, Allow},
		{ModeAsk, read, Ask},
		{ModeAsk, trusted, Allow},
		{ModePlan, read, Ask},
		{ModeAutoEdit, Call{Tool: "mcp__srv__write", Kind: acp.ToolKindOther}, Ask},
	} {
		if d := p.Decide(tc.mode, tc.call); d.Action != tc.want {
			t.Errorf("%s %+v: %+v, want %s", tc.mode, tc.call, d, tc.want)
		}
	}
	p = w.policy(t, nil, Rule{Action: Ask, Tool: "mcp__srv__*"})
	if d := p.Decide(ModeAutoEdit, read); d.Action != Ask {
		t.Errorf("with an ask rule: %+v, want ask", d)
	}
}

// TestDecisionDefault: Default marks exactly the decisions the mode's
// default made, so a client deciding by its own levels can say so.
func TestDecisionDefault(t *testing.T) {
	w := newWorkspace(t)
	p, err := NewPolicy(PolicyOptions{Tools: fetchTools, Rules: []Rule{allowCmd("ls"), {Action: Ask, Tool: "write_file", Match: "go.mod"}}, Protected: []string{w.config}, Project: w.root})
	if err != nil {
		t.Fatal(err)
	}
	edit := func(p Path) Call { return Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{p}} }
	for _, c := range []struct {
		name string
		mode Mode
		call Call
		want bool
	}{
		{"edit in ask mode", ModeAsk, edit(w.in("a.go")), true},
		{"edit in auto-edit mode", ModeAutoEdit, edit(w.in("a.go")), true},
		{"edit by an ask rule", ModeAutoEdit, edit(w.in("go.mod")), false},
		{"edit outside", ModeAutoEdit, edit(w.out(w.outside)), false},
		{"command", ModeAsk, runCmd("make"), true},
		{"allowed command", ModeAsk, runCmd("ls"), false},
		{"unsandboxed command in full mode", ModeFull, Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: "make", Unsandboxed: true}, false},
		{"mcp tool", ModeAutoEdit, Call{Tool: "mcp__a__b"}, true},
		{"fetch", ModeAutoEdit, fetch("https://example.com/"), true},
		{"offline fetch in full mode", ModeFull, Call{Tool: "web_fetch", Kind: acp.ToolKindFetch, URL: "https://example.com/", Offline: true}, false},
		{"plan mode", ModePlan, runCmd("make"), false},
	} {
		if d := p.Decide(c.mode, c.call); d.Default != c.want {
			t.Errorf("%s: Default = %v (%s: %s)", c.name, d.Default, d.Action, d.Reason)
		}
	}
}
