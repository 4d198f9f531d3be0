package permissions

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"acpd/acp"
)

func rememberedMatches(t *testing.T, s *Store, project string) map[string]Action {
	t.Helper()
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Action{}
	for _, e := range list {
		if e.Project == project {
			out[e.Rule.Tool+" "+e.Rule.Match] = e.Rule.Action
		}
	}
	return out
}

func TestRememberCommandsNarrowly(t *testing.T) {
	w := newWorkspace(t)
	store, p := w.storePolicy(t)

	call := runCmd("go test ./... && echo hi")
	d := p.Decide(ModeAsk, call)
	if d.Action != Ask {
		t.Fatalf("got %s", d.Action)
	}
	want := []Rule{{Tool: "run_command", Match: "go test ./..."}, {Tool: "run_command", Match: "echo hi"}}
	if !slices.Equal(d.Remember, want) {
		t.Fatalf("Remember = %v, want %v", d.Remember, want)
	}
	if err := p.Remember(call, d, true); err != nil {
		t.Fatal(err)
	}
	got := rememberedMatches(t, store, w.root)
	if len(got) != 2 || got["run_command go test ./..."] != Allow || got["run_command echo hi"] != Allow {
		t.Fatalf("stored %v", got)
	}

	cases := map[string]Action{
		"go test ./... && echo hi":  Allow,
		"echo hi; go test ./...":    Allow,
		"go test ./...":             Allow,
		"go test ./... && rm -rf /": Ask,
		"go test ./... -v":          Ask,
		"go test ./pkg":             Ask,
		"echo hi there":             Ask,
		"echo hi > out":             Ask,
		"sudo go test ./...":        Ask,
		"bash -c 'go test ./...'":   Ask,
	}
	wantCommands(t, p, ModeAsk, cases)
	// Only the part that is not covered yet is offered next time.
	d = p.Decide(ModeAsk, runCmd("go test ./... && rm -rf /"))
	if !slices.Equal(d.Remember, []Rule{{Tool: "run_command", Match: "rm -rf /"}}) {
		t.Errorf("Remember = %v", d.Remember)
	}

	// Another project does not see these choices.
	other, err := NewPolicy(PolicyOptions{Tools: testTools, Store: store, Project: w.outside})
	if err != nil {
		t.Fatal(err)
	}
	if d := other.Decide(ModeAsk, runCmd("go test ./...")); d.Action != Ask {
		t.Errorf("other project: %s", d.Action)
	}
}

func TestRememberRefusesUnanalysableLines(t *testing.T) {
	w := newWorkspace(t)
	store, p := w.storePolicy(t)
	for _, line := range []string{"echo $(rm x)", "bash -c 'ls'", "ls > out", "X=1 ls", "go test '", "$X", "ls &", ""} {
		call := runCmd(line)
		d := p.Decide(ModeAsk, call)
		if d.Action != Ask {
			t.Errorf("%q: got %s", line, d.Action)
		}
		if len(d.Remember) != 0 {
			t.Errorf("%q: Remember = %v", line, d.Remember)
		}
		if opts := Options(d); len(opts) != 2 {
			t.Errorf("%q: offered %v", line, opts)
		}
		if err := p.Remember(call, d, true); !errors.Is(err, ErrCannotRemember) {
			t.Errorf("%q: Remember error %v", line, err)
		}
		// A forged decision naming the line's commands is refused too.
		forged := Decision{Action: Ask, Remember: []Rule{{Tool: "run_command", Match: "echo *"}}}
		if err := p.Remember(call, forged, true); !errors.Is(err, ErrCannotRemember) {
			t.Errorf("%q: forged Remember error %v", line, err)
		}
	}
	if got := rememberedMatches(t, store, w.root); len(got) != 0 {
		t.Errorf("stored %v", got)
	}
}

func TestRememberRefusesForgedRules(t *testing.T) {
	w := newWorkspace(t)
	store, p := w.storePolicy(t)
	forgeries := []struct {
		call Call
		rule Rule
	}{
		{runCmd("echo hi"), Rule{Tool: "run_command", Match: "echo *"}},
		{runCmd("echo hi"), Rule{Tool: "run_command"}},
		{runCmd("echo hi"), Rule{Tool: "*", Match: "echo hi"}},
		{runCmd("echo hi"), Rule{Tool: "run_command", Match: "rm -rf /"}},
		{Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("a.txt")}}, Rule{Tool: "write_file", Match: "**"}},
		{Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("a.txt")}}, Rule{Tool: "*_file", Match: "a.txt"}},
		{Call{Tool: "mcp__gh__get", ReadOnly: true}, Rule{Tool: "mcp__gh__*"}},
	}
	for _, f := range forgeries {
		d := Decision{Action: Ask, Remember: []Rule{f.rule}}
		if err := p.Remember(f.call, d, true); !errors.Is(err, ErrCannotRemember) {
			t.Errorf("%v with %s: error %v", f.call, f.rule, err)
		}
	}
	if got := rememberedMatches(t, store, w.root); len(got) != 0 {
		t.Errorf("stored %v", got)
	}
}

func TestRememberGlobCharactersStayLiteral(t *testing.T) {
	w := newWorkspace(t)
	_, p := w.storePolicy(t)
	for _, line := range []string{"rm '*'", "ls *.go", "echo '[a]' ?"} {
		call := runCmd(line)
		d := p.Decide(ModeAsk, call)
		if err := p.Remember(call, d, true); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
	}
	cases := map[string]Action{
		"rm '*'":       Allow,
		`rm \*`:        Allow,
		"rm x":         Ask,
		"rm -rf /":     Ask,
		"ls *.go":      Allow,
		"ls main.go":   Ask,
		"echo '[a]' ?": Allow,
		"echo a x":     Ask,
	}
	wantCommands(t, p, ModeAsk, cases)
}

func TestRememberReject(t *testing.T) {
	w := newWorkspace(t)
	store, p := w.storePolicy(t)
	call := runCmd("rm -rf build")
	d := p.Decide(ModeAsk, call)
	if err := p.Remember(call, d, false); err != nil {
		t.Fatal(err)
	}
	cases := map[string]Action{
		"rm -rf build":         Deny,
		"make && rm -rf build": Deny,
		"sudo rm -rf build":    Deny,
		"/bin/rm -rf build":    Deny,
		"rm -rf other":         Allow,
		"$X":                   Ask, // might be the rejected command
	}
	wantCommands(t, p, ModeFull, cases)
	// A later allow_always for the same command replaces the rejection.
	other := w.policy(t, store)
	call2 := runCmd("rm -rf build")
	if err := other.Remember(call2, Decision{Action: Ask, Remember: []Rule{{Tool: "run_command", Match: "rm -rf build"}}}, true); err != nil {
		t.Fatal(err)
	}
	if got := rememberedMatches(t, store, w.root); len(got) != 1 || got["run_command rm -rf build"] != Allow {
		t.Errorf("stored %v", got)
	}
}

func TestRememberFiles(t *testing.T) {
	w := newWorkspace(t)
	_, p := w.storePolicy(t)
	write := func(p Path) Call { return Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{p}} }

	call := Call{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("src/a.go"), w.in("src/[x].go")}}
	d := p.Decide(ModeAsk, call)
	want := []Rule{{Tool: "write_file", Match: "src/a.go"}, {Tool: "write_file", Match: `src/\[x\].go`}}
	if !slices.Equal(d.Remember, want) {
		t.Fatalf("Remember = %v, want %v", d.Remember, want)
	}
	if err := p.Remember(call, d, true); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		call Call
		want Action
	}{
		{write(w.in("src/a.go")), Allow},
		{write(w.in("src/[x].go")), Allow},
		{write(w.in("src/x.go")), Ask},
		{write(w.in("src/b.go")), Ask},
		{Call{Tool: "edit_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("src/a.go")}}, Ask}, // exact tool only
	}
	for _, c := range cases {
		if d := p.Decide(ModeAsk, c.call); d.Action != c.want {
			t.Errorf("%s %s: got %s (%s), want %s", c.call.Tool, c.call.Paths[0].Rel, d.Action, d.Reason, c.want)
		}
	}

	// A second root of the same session: its "src/a.go" is another file.
	root2 := filepath.Join(w.outside, "root2")
	if err := os.MkdirAll(root2, 0o755); err != nil {
		t.Fatal(err)
	}
	same := Path{Abs: filepath.Join(root2, "src", "a.go"), Rel: "src/a.go", Inside: true}
	if d := p.Decide(ModeAsk, write(same)); d.Action != Ask {
		t.Errorf("second root's src/a.go: got %s (%s)", d.Action, d.Reason)
	}
	// Remembering there stores an absolute path.
	d = p.Decide(ModeAsk, write(same))
	if len(d.Remember) != 1 || d.Remember[0].Match != filepath.ToSlash(same.Abs) {
		t.Errorf("Remember = %v", d.Remember)
	}

	// Protected and outside paths cannot be remembered.
	for _, path := range []Path{w.in(".git/config"), w.out("/etc/hosts")} {
		d := p.Decide(ModeAsk, write(path))
		if len(d.Remember) != 0 {
			t.Errorf("%s: Remember = %v", path.Abs, d.Remember)
		}
		forged := Decision{Action: Ask, Remember: []Rule{{Tool: "write_file", Match: path.Rel}}}
		if err := p.Remember(write(path), forged, true); !errors.Is(err, ErrCannotRemember) {
			t.Errorf("%s: forged Remember error %v", path.Abs, err)
		}
	}
}

func TestRememberMCPTool(t *testing.T) {
	w := newWorkspace(t)
	_, p := w.storePolicy(t)
	call := Call{Tool: "mcp__gh__create_issue"}
	d := p.Decide(ModeAsk, call)
	if !slices.Equal(d.Remember, []Rule{{Tool: "mcp__gh__create_issue"}}) {
		t.Fatalf("Remember = %v", d.Remember)
	}
	if err := p.Remember(call, d, true); err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(ModeAsk, call); d.Action != Allow {
		t.Errorf("remembered tool: %s", d.Action)
	}
	if d := p.Decide(ModeAsk, Call{Tool: "mcp__gh__delete_repo"}); d.Action != Ask {
		t.Errorf("other tool: %s", d.Action)
	}
	// A tool whose name contains glob characters is stored escaped.
	star := Call{Tool: "mcp__evil__*"}
	d = p.Decide(ModeAsk, star)
	if err := p.Remember(star, d, true); err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(ModeAsk, Call{Tool: "mcp__evil__wipe"}); d.Action != Ask {
		t.Errorf("glob-named tool widened to its server: %s", d.Action)
	}
	if d := p.Decide(ModeAsk, star); d.Action != Allow {
		t.Errorf("glob-named tool itself: %s", d.Action)
	}
}

func TestAskRuleCannotBeRemembered(t *testing.T) {
	w := newWorkspace(t)
	store := openTestStore(t, w.state)
	p := w.policy(t, store, askCmd("git push *"), Rule{Action: Ask, Tool: "write_file", Match: "go.mod"})
	for _, c := range []Call{runCmd("git push"), {Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{w.in("go.mod")}}} {
		d := p.Decide(ModeAsk, c)
		if d.Action != Ask || len(d.Remember) != 0 {
			t.Errorf("%v: %s Remember=%v", c, d.Action, d.Remember)
		}
	}
}
