package permissions

import (
	"strings"
	"testing"

	"acpd/acp"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

var fuzzCommandSeeds = []string{
	"echo hi",
	"echo hi && echo there",
	"echo $(rm -rf /)",
	"echo `rm x`",
	"echo 'a b' \"c\" d\\ e",
	"ec\\ho hi",
	"e'ch'o hi",
	"echo hi > out",
	"echo hi 2>&1 | tee /dev/null",
	"echo {a,b}",
	"echo {}",
	"X=1 echo",
	"f() { echo; }; f",
	"bash -c 'echo hi'",
	"eval echo",
	"find . -exec echo {} \\;",
	"$X",
	"echo '",
	"cat <<EOF\necho\nEOF",
	"if echo; then echo; fi",
	"echo <(rm)",
	"echo hi &",
	"{X}>/dev/null echo",
	"echo\x00; rm",
	"echo a\\\r\nrm -rf /",
	"echo a\rb",
	"echo $'\\x41'",
	"case x in y) rm;; esac",
	"((x=1)); echo",
	"[[ a -eq b ]]",
	"echo ${x:$((y))}",
}

// FuzzDecideCommand checks that arbitrary command lines never panic and that
// whenever the rule allow "echo *" allows a line, every simple command in it
// is echo with literal words (checked independently of the policy's own
// analysis).
func FuzzDecideCommand(f *testing.F) {
	for _, s := range fuzzCommandSeeds {
		f.Add(s)
	}
	p, err := NewPolicy(PolicyOptions{Tools: testTools, Rules: []Rule{allowCmd("echo *"), denyCmd("rm *")}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, mode := range allModes {
			d := p.Decide(mode, runCmd(line))
			switch d.Action {
			case Allow, Ask, Deny:
			default:
				t.Fatalf("%q: action %q", line, d.Action)
			}
			if mode == ModePlan && d.Action != Deny {
				t.Fatalf("%q: plan mode gave %s", line, d.Action)
			}
			if d.Action == Allow && mode != ModeFull {
				assertOnlyLiteralEcho(t, line)
			}
		}
	})
}

// assertOnlyLiteralEcho fails unless line parses and every simple command in
// it is echo with plainly literal words, with nothing else that could run or
// write anything.
func assertOnlyLiteralEcho(t *testing.T, line string) {
	t.Helper()
	if strings.ContainsRune(line, 0) {
		t.Fatalf("%q: allowed a line containing NUL", line)
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		t.Fatalf("%q: allowed but does not parse: %v", line, err)
	}
	calls := 0
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			calls++
			if len(n.Assigns) > 0 || len(n.Args) == 0 {
				t.Fatalf("%q: allowed an assignment", line)
			}
			for i, w := range n.Args {
				v, ok := plainLiteral(w)
				if !ok {
					t.Fatalf("%q: allowed a non-literal word", line)
				}
				if i == 0 && v != "echo" {
					t.Fatalf("%q: allowed command %q", line, v)
				}
			}
		case *syntax.Redirect:
			v, ok := plainLiteral(n.Word)
			switch n.Op {
			case syntax.RdrIn, syntax.WordHdoc:
			case syntax.DplOut, syntax.DplIn:
				if !ok || strings.Trim(v, "0123456789-") != "" {
					t.Fatalf("%q: allowed redirection to %q", line, v)
				}
			default:
				if !ok || v != "/dev/null" {
					t.Fatalf("%q: allowed redirection %s %q", line, n.Op, v)
				}
			}
		case *syntax.FuncDecl, *syntax.ForClause, *syntax.DeclClause, *syntax.ArithmCmd, *syntax.LetClause,
			*syntax.TestClause, *syntax.TimeClause, *syntax.CoprocClause, *syntax.CmdSubst, *syntax.ProcSubst,
			*syntax.ParamExp, *syntax.ArithmExp, *syntax.ExtGlob:
			t.Fatalf("%q: allowed a %T", line, n)
		case *syntax.Stmt:
			if n.Background || n.Coprocess || n.Disown {
				t.Fatalf("%q: allowed a background job", line)
			}
		}
		return true
	})
	if calls == 0 {
		t.Fatalf("%q: allowed a line without commands", line)
	}
}

// plainLiteral evaluates a word made only of literal parts.
func plainLiteral(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			for i := 0; i < len(v); i++ {
				if v[i] == '\\' && i+1 < len(v) {
					i++
				}
				b.WriteByte(v[i])
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// FuzzCommandPatternRoundTrip checks that a remembered command pattern
// matches exactly the words it was made from: words are separated by \x1f.
func FuzzCommandPatternRoundTrip(f *testing.F) {
	for _, s := range []string{"go\x1ftest\x1f./...", "rm\x1f*", "echo\x1f\x1fa b", "x\x1f'\x1f\"\x1f\\", "ls\x1f[a]\x1f?\x1f{a,b}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsAny(s, "\x00\r") || !utf8.ValidString(s) {
			return // lines with these never parse, so are never remembered
		}
		words := strings.Split(s, "\x1f")
		pattern := formatCommandPattern(words)
		p, err := compileCommandPattern(pattern)
		if err != nil {
			t.Fatalf("%q: %v", pattern, err)
		}
		cw := make([]cmdWord, len(words))
		for i, w := range words {
			cw[i] = cmdWord{text: w}
		}
		if !p.matchExact(cw) {
			t.Fatalf("%q does not match %q", pattern, words)
		}
		if p.matchExact(append(cw, cmdWord{text: "x"})) {
			t.Fatalf("%q matches %q plus a word", pattern, words)
		}
		if len(cw) > 1 && p.matchExact(cw[:len(cw)-1]) {
			t.Fatalf("%q matches %q minus a word", pattern, words)
		}
	})
}

// FuzzNewPolicyRule checks that arbitrary rules are either rejected or
// usable without panics.
func FuzzNewPolicyRule(f *testing.F) {
	f.Add("allow", "run_command", "go test *", "go test ./...")
	f.Add("deny", "*", "docs/**", "rm -rf docs")
	f.Add("ask", "mcp__*", "", "x")
	f.Add("allow", "write_file", "[", "")
	f.Fuzz(func(t *testing.T, action, tool, match, line string) {
		p, err := NewPolicy(PolicyOptions{Tools: testTools, Rules: []Rule{{Action: Action(action), Tool: tool, Match: match}}})
		if err != nil {
			return
		}
		for _, c := range []Call{
			runCmd(line),
			{Tool: "write_file", Kind: acp.ToolKindEdit, Paths: []Path{{Abs: "/r/" + line, Rel: line, Inside: true}}},
			{Tool: "mcp__x__" + line},
		} {
			if d := p.Decide(ModeAsk, c); d.Action != Allow && d.Action != Ask && d.Action != Deny {
				t.Fatalf("action %q", d.Action)
			}
		}
	})
}
