package permissions

import (
	"strings"
	"testing"

	"acpd/acp"
)

// wantCommands checks the action p decides in mode for each command line
// of cases.
func wantCommands(t *testing.T, p *Policy, mode Mode, cases map[string]Action) {
	t.Helper()
	for line, want := range cases {
		if d := p.Decide(mode, runCmd(line)); d.Action != want {
			t.Errorf("%q: got %s (%s), want %s", line, d.Action, d.Reason, want)
		}
	}
}

func cmdPolicy(t *testing.T, rules ...Rule) *Policy {
	t.Helper()
	p, err := NewPolicy(PolicyOptions{Tools: testTools, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func allowCmd(match string) Rule { return Rule{Action: Allow, Tool: "run_command", Match: match} }
func denyCmd(match string) Rule  { return Rule{Action: Deny, Tool: "run_command", Match: match} }
func askCmd(match string) Rule   { return Rule{Action: Ask, Tool: "run_command", Match: match} }

func runCmd(line string) Call {
	return Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: line}
}

func TestCommandsWithAllowRule(t *testing.T) {
	p := cmdPolicy(t, allowCmd("go test *"), allowCmd("echo *"))
	cases := []struct {
		line string
		want Action
	}{
		{"go test ./...", Allow},
		{"go test", Allow},
		{"  go   test   -run 'Test A'  ./... ", Allow},
		{`"go" 'test' ./...`, Allow},
		{`g\o test`, Allow},
		{"go test ./... && echo done", Allow},
		{"go test ./... || echo failed", Allow},
		{"go test ./...; echo done", Allow},
		{"go test ./... | echo", Allow},
		{"(go test ./...)", Allow},
		{"{ go test ./...; }", Allow},
		{"! go test ./...", Allow},
		{"if go test; then echo ok; else echo no; fi", Allow},
		{"while go test; do echo again; done", Allow},
		{"go test ./... > /dev/null 2>&1", Allow},
		{"go test ./... 2>/dev/null", Allow},
		{"go test ./... &>/dev/null", Allow},
		{"go test ./... < input.txt", Allow},
		{"go test ./... <<< input", Allow},
		{"go test ./... 3>&1 1>&2 2>&3-", Allow},
		{"echo *.go", Allow}, // unquoted globs are matched as written
		{"echo ~/x", Allow},
		{"echo {}", Allow}, // not a brace expansion

		// Every simple command must be allowed.
		{"go test ./... && rm -rf /", Ask},
		{"go test ./...; rm x", Ask},
		{"go test ./... | rm x", Ask},
		{"go test || rm x", Ask},
		{"(rm x)", Ask},
		{"{ rm x; }", Ask},
		{"if true; then go test; fi", Ask},
		{"go vet ./...", Ask},
		{"/usr/local/go/bin/go test", Ask},
		{"./go test", Ask},
		{"gotest", Ask},
		{"go", Ask},
		// Substitutions: the inner command must be allowed, and the outer
		// word is not literal anyway.
		{"go test $(rm -rf /)", Ask},
		{"go test $(echo hi)", Ask},
		{"go test `rm x`", Ask},
		{"echo <(rm x)", Ask},
		{"go test ./... > >(rm x)", Ask},
		{"echo $((1+2))", Ask},
		{`echo "$(rm x)"`, Ask},
		{"echo ${X:-$(rm x)}", Ask},
		// Commands that run other commands.
		{"bash -c 'go test'", Ask},
		{"sh -c 'go test'", Ask},
		{"zsh -c 'go test'", Ask},
		{"/bin/bash -c 'go test'", Ask},
		{"eval go test", Ask},
		{`\eval go test`, Ask},
		{"source script.sh", Ask},
		{". script.sh", Ask},
		{"exec go test", Ask},
		{"echo x | xargs rm", Ask},
		{"find . -exec rm {} \\;", Ask},
		{"find . -delete", Ask},
		{"env go test", Ask},
		{"command go test", Ask},
		{"builtin echo x", Ask},
		{"sudo go test", Ask},
		{"nohup go test", Ask},
		{"time go test", Ask},
		{"nice go test", Ask},
		{"timeout 5 go test", Ask},
		// Expansions anywhere.
		{"$X", Ask},
		{"$X test", Ask},
		{"go test $X", Ask},
		{`go test "$X"`, Ask},
		{"go test {a,b}", Ask},
		{"go test $'x'", Ask},
		{`go test $"x"`, Ask},
		{"go test @(a|b)", Ask},
		{"echo hi <<< $X", Ask},
		// Assignments and shell state.
		{"X=1 go test", Ask},
		{"PATH=. go test", Ask},
		{"X=1", Ask},
		{"export X=1; go test", Ask},
		{"declare X=1", Ask},
		{"local X=1", Ask},
		{"for i in a b; do go test; done", Ask},
		{"f() { go test; }; f", Ask},
		{"function f { go test; }", Ask},
		{"((x=1))", Ask},
		{"let x=1", Ask},
		{"[[ a -eq b ]] && go test", Ask},
		{"{PATH}>/dev/null go test", Ask},
		{"alias go=rm; go test", Ask},
		{"trap 'rm x' EXIT; go test", Ask},
		{"hash -p /tmp/evil go; go test", Ask},
		{"coproc go test", Ask},
		{"go test &", Ask},
		{"go test & echo hi", Ask},
		// Output redirections.
		{"go test > out.txt", Ask},
		{"go test >> out.txt", Ask},
		{"go test 2> err.txt", Ask},
		{"go test &> out.txt", Ask},
		{"go test &>> out.txt", Ask},
		{"go test >| out.txt", Ask},
		{"go test >& out.txt", Ask},
		{"go test <> out.txt", Ask},
		{"go test > $OUT", Ask},
		{"> out.txt", Ask},
		{"cat <<EOF\nhi\nEOF", Ask},
		{"echo <<'EOF'\nhi\nEOF", Ask},
		// tee writes to its arguments: it needs its own rule.
		{"go test ./... 2>&1 | tee /dev/null", Ask},
		{"go test ./... 2>&1 | tee out.txt", Ask},
		// Unparseable or suspicious input.
		{"go test '", Ask},
		{"go test \"", Ask},
		{"go test )", Ask},
		{"go test\x00; rm -rf /", Ask},
		{"echo a\\\r\nrm -rf /", Ask}, // the parser would join these lines; bash does not
		{"echo a\rb", Ask},
		{"", Ask},
		{"# just a comment", Ask},
		{strings.Repeat("echo x; ", maxCommandLen/8+1), Ask},
	}
	for _, tc := range cases {
		d := p.Decide(ModeAsk, runCmd(tc.line))
		if d.Action != tc.want {
			t.Errorf("%q: got %s (%s), want %s", tc.line, d.Action, d.Reason, tc.want)
		}
	}
}

func TestTeeDevNullWithRule(t *testing.T) {
	p := cmdPolicy(t, allowCmd("go test *"), allowCmd("tee /dev/null"))
	if d := p.Decide(ModeAsk, runCmd("go test ./... 2>&1 | tee /dev/null")); d.Action != Allow {
		t.Errorf("got %s (%s)", d.Action, d.Reason)
	}
	if d := p.Decide(ModeAsk, runCmd("go test ./... 2>&1 | tee out.txt")); d.Action != Ask {
		t.Errorf("tee to a file: got %s", d.Action)
	}
}

func TestAlwaysAskIgnoresAllowRules(t *testing.T) {
	p := cmdPolicy(t, Rule{Action: Allow, Tool: "run_command"}, Rule{Action: Allow, Tool: "*"})
	for _, line := range []string{
		"bash -c 'go test'", "eval ls", "xargs rm", "find . -exec rm {} \\;", "$X", "ls > out", "X=1 ls",
		"sudo ls", "env ls", "go test '", "printf -v PATH x", "read PATH", "mapfile PATH", "ls $(pwd)",
	} {
		d := p.Decide(ModeAsk, runCmd(line))
		if d.Action != Ask {
			t.Errorf("%q: got %s (%s), want ask", line, d.Action, d.Reason)
		}
		if len(d.Remember) != 0 {
			t.Errorf("%q: offered to remember %v", line, d.Remember)
		}
		if d := p.Decide(ModeFull, runCmd(line)); d.Action != Allow {
			t.Errorf("%q in full mode: got %s (%s), want allow", line, d.Action, d.Reason)
		}
		if d := p.Decide(ModePlan, runCmd(line)); d.Action != Deny {
			t.Errorf("%q in plan mode: got %s", line, d.Action)
		}
	}
	if d := p.Decide(ModeAsk, runCmd("ls -la")); d.Action != Allow {
		t.Errorf("plain command under allow-any rule: %s", d.Action)
	}
}

func TestFindWithoutExecFollowsRules(t *testing.T) {
	p := cmdPolicy(t, allowCmd("find *"))
	if d := p.Decide(ModeAsk, runCmd("find . -name '*.go'")); d.Action != Allow {
		t.Errorf("find -name: %s (%s)", d.Action, d.Reason)
	}
	for _, line := range []string{"find . -exec rm {} \\;", "find . -execdir rm {} +", "find . -ok rm {} \\;", "find . -delete", "find . -fprint out"} {
		if d := p.Decide(ModeAsk, runCmd(line)); d.Action != Ask {
			t.Errorf("%q: got %s", line, d.Action)
		}
	}
}

func TestDenyRulesSeeEverySubCommand(t *testing.T) {
	p := cmdPolicy(t, allowCmd("go test *"), denyCmd("rm *"))
	deny := []string{
		"rm -rf /",
		"rm",
		"/bin/rm -rf /",
		`\rm x`,
		`"rm" x`,
		"go test ./... && rm -rf /",
		"go test; rm x",
		"echo x | rm y",
		"echo $(rm x)",
		"echo `rm x`",
		"(rm x)",
		"f() { rm x; }",
		"for f in a; do rm $f; done",
		"sudo rm -rf /",
		"sudo -u root rm -rf /",
		"env FOO=1 rm x",
		"timeout 5 rm x",
		"nohup rm x",
		"command rm x",
		"xargs rm",
		"echo a | xargs -0 rm -f",
		"find . -exec rm {} \\;",
		"find . -execdir /bin/rm -f {} +",
		"bash -c 'rm -rf /'",
		"bash -lc 'rm -rf /'",
		"sh -c 'cd /tmp && rm -rf x'",
		`sudo bash -c "rm -rf /"`,
		`bash -c "bash -c 'rm -rf /'"`,
		"eval 'rm -rf /'",
		"eval rm -rf /",
		"time rm x",
		"go test > /dev/null; rm x",
	}
	for _, line := range deny {
		for _, mode := range []Mode{ModeAsk, ModeAutoEdit, ModeFull} {
			if d := p.Decide(mode, runCmd(line)); d.Action != Deny || !strings.Contains(d.Reason, "rm *") {
				t.Errorf("%q in %s mode: got %s (%s), want deny by rm *", line, mode, d.Action, d.Reason)
			}
		}
	}
	// Parts that cannot be analysed might hide rm: they ask, even in full
	// mode, rather than being denied or allowed.
	for _, line := range []string{"$X -rf /", "$X", "go test '", `bash -c "$CMD"`, "eval $X", "bash -c 'rm \"'"} {
		if d := p.Decide(ModeFull, runCmd(line)); d.Action != Ask {
			t.Errorf("%q in full mode: got %s (%s), want ask", line, d.Action, d.Reason)
		}
	}
	// Words that only mention rm are fine.
	for _, line := range []string{"echo rm", "git rm x", "go test ./... -run rm", "grep -r 'rm -rf' ."} {
		if d := p.Decide(ModeFull, runCmd(line)); d.Action != Allow {
			t.Errorf("%q in full mode: got %s (%s), want allow", line, d.Action, d.Reason)
		}
	}
	// The deny rule also wins over plan mode's reason? No: plan mode comes first.
	if d := p.Decide(ModePlan, runCmd("rm x")); d.Reason != "plan mode is read-only" {
		t.Errorf("plan mode: %s", d.Reason)
	}
}

func TestDenyAnyCommand(t *testing.T) {
	p := cmdPolicy(t, Rule{Action: Deny, Tool: "run_command"})
	for _, line := range []string{"ls", "$X", "go test '", "", "# comment", "bash -c 'x'"} {
		if d := p.Decide(ModeFull, runCmd(line)); d.Action != Deny {
			t.Errorf("%q: got %s", line, d.Action)
		}
	}
}

func TestAskRuleInFullMode(t *testing.T) {
	p := cmdPolicy(t, askCmd("git push *"))
	cases := map[string]Action{
		"git push origin main":       Ask,
		"git status":                 Allow,
		"git status && git push":     Ask,
		"sudo git push":              Ask,
		"$GIT push":                  Ask,
		"bash -c 'git push -f'":      Ask,
		"git commit -m 'no push' -q": Allow,
	}
	wantCommands(t, p, ModeFull, cases)
}

func TestCommandPatterns(t *testing.T) {
	cases := []struct {
		pattern string
		line    string
		want    bool
	}{
		{"go test *", "go test", true},
		{"go test *", "go test -v ./...", true},
		{"go test *", "go tests", false},
		{"go test", "go test", true},
		{"go test", "go test -v", false},
		{"go * ./...", "go vet ./...", true},
		{"go * ./...", "go vet ./x", false},
		{"git log --format=*", "git log --format=%H", true},
		{"cat docs/*", "cat docs/a.md", true},
		{"cat docs/*", "cat docs/a/b.md", false},
		{"rm '*'", "rm '*'", true},
		{"rm '*'", "rm x", false},
		{`rm \*`, "rm x", false},
		{`rm \*`, `rm '*'`, true},
		{`git commit -m "fix bug"`, "git commit -m 'fix bug'", true},
		{`git commit -m "fix bug"`, "git commit -m fix bug", false},
		{"echo 'a b' *", "echo 'a b' c d", true},
		{"npm run *", "npm run build -- --watch", true},
		{"*", "anything at all", true}, // a lone trailing * matches every command
		{"* *", "anything at all", true},
	}
	for _, c := range cases {
		p := cmdPolicy(t, allowCmd(c.pattern))
		got := p.Decide(ModeAsk, runCmd(c.line)).Action == Allow
		if got != c.want {
			t.Errorf("pattern %q vs %q: got %v, want %v", c.pattern, c.line, got, c.want)
		}
	}
}

func TestFormatCommandPatternRoundTrip(t *testing.T) {
	words := [][]string{
		{"go", "test", "./..."},
		{"rm", "*"},
		{"echo", "*"},
		{"ls", "*.go", "[a]", "?"},
		{"git", "commit", "-m", "it's done"},
		{"echo", "", "a b", "line1\nline2", `back\slash`, "$HOME", "`x`", "{a,b}", "~"},
		{"printf", `%s\n`, "x"},
	}
	for _, ws := range words {
		s := formatCommandPattern(ws)
		p, err := compileCommandPattern(s)
		if err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		if p.rest {
			t.Errorf("%q: trailing wildcard", s)
		}
		cw := make([]cmdWord, len(ws))
		for i, w := range ws {
			cw[i] = cmdWord{text: w}
		}
		if !p.matchExact(cw) {
			t.Errorf("%q does not match %q", s, ws)
		}
		longer := append(append([]cmdWord{}, cw...), cmdWord{text: "extra"})
		if p.matchExact(longer) {
			t.Errorf("%q matches %q + extra", s, ws)
		}
		// The pattern, run as a command, yields exactly these words.
		a := analyzeCommand(s)
		if len(a.cmds) != 1 {
			t.Errorf("%q parses to %d commands", s, len(a.cmds))
			continue
		}
		got, ok := a.cmds[0].literalWords()
		if !ok || strings.Join(got, "\x00") != strings.Join(ws, "\x00") {
			t.Errorf("%q evaluates to %q, want %q", s, got, ws)
		}
	}
}
