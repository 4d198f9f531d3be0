package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"acpd/permissions"
)

// searchProject is a small project with ignored, .git and protected
// (.acpd) files that searches must not show.
func searchProject(t *testing.T) *testEnv {
	e := newTestEnv(t, permissions.ModeAsk)
	e.write(".gitignore", "build/\n*.log\n")
	e.write("main.go", "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	e.write("pkg/util.go", "package pkg\n\n// Hello says hello.\nfunc Hello() string { return \"hello\" }\n")
	e.write("pkg/sub/.gitignore", "gen.go\n")
	e.write("pkg/sub/gen.go", "package sub // hello generated\n")
	e.write("pkg/sub/keep.go", "package sub\n")
	e.write("web/app.ts", "const hello = 1\n")
	e.write("build/out.go", "package build // hello\n")
	e.write("debug.log", "hello\n")
	e.write(".git/config", "hello\n")
	e.write(".acpd/state.go", "package state // hello\n")
	e.write("bin.dat", "hello\x00\x01")
	return e
}

// glob matches at any depth with **, relative to the searched directory,
// and skips what .gitignore ignores, .git and protected directories.
func TestGlob(t *testing.T) {
	t.Parallel()
	e := searchProject(t)
	if got := mustOK(t, e.run(t.Context(), "glob", `{"pattern":"**/*.go"}`)); got != "main.go\npkg/sub/keep.go\npkg/util.go\n" {
		t.Fatalf("**/*.go = %q", got)
	}
	if got := mustOK(t, e.run(t.Context(), "glob", `{"pattern":"*.go","path":"pkg/sub"}`)); got != "keep.go\n" {
		t.Fatalf("in pkg/sub = %q", got)
	}
	if got := mustOK(t, e.run(t.Context(), "glob", `{"pattern":"**/*.rs"}`)); got != "No files match." {
		t.Fatalf("no match = %q", got)
	}
	mustFail(t, e.run(t.Context(), "glob", `{"pattern":"[a"}`), `invalid pattern "[a"`)
	mustFail(t, e.run(t.Context(), "glob", `{"pattern":"*","path":"nope"}`), "searching ")
	if n := len(e.requests()); n != 0 {
		t.Fatalf("searches inside the project asked %d times", n)
	}

	for i := range maxGlobResults + 1 {
		e.write(fmt.Sprintf("many/f%03d.txt", i), "")
	}
	got := mustOK(t, e.run(t.Context(), "glob", `{"pattern":"many/*.txt"}`))
	if lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n"); len(lines) != maxGlobResults+1 || lines[maxGlobResults] != "[stopped after 500 files; narrow the pattern]" {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

// grep prints path:line: text per match (paths relative to the working
// directory), skipping ignored, binary, .git and protected files.
func TestGrep(t *testing.T) {
	t.Parallel()
	e := searchProject(t)
	want := "main.go:4: \tprintln(\"hello\")\npkg/util.go:3: // Hello says hello.\npkg/util.go:4: func Hello() string { return \"hello\" }\nweb/app.ts:1: const hello = 1\n"
	if got := mustOK(t, e.run(t.Context(), "grep", `{"pattern":"hello\\b"}`)); got != want {
		t.Fatalf("grep = %q, want %q", got, want)
	}
	if got := mustOK(t, e.run(t.Context(), "grep", `{"pattern":"(?i)hello","include":"*.go","files_only":true}`)); got != "main.go\npkg/util.go\n" {
		t.Fatalf("files_only = %q", got)
	}
	if got := mustOK(t, e.run(t.Context(), "grep", `{"pattern":"hello","include":"**/*.{ts,tsx}"}`)); got != "web/app.ts:1: const hello = 1\n" {
		t.Fatalf("include braces = %q", got)
	}
	// A path below the root still obeys the .gitignore files above it.
	if got := mustOK(t, e.run(t.Context(), "grep", `{"pattern":"package","path":"pkg/sub"}`)); got != "pkg/sub/keep.go:1: package sub\n" {
		t.Fatalf("in pkg/sub = %q", got)
	}
	// One file.
	if got := mustOK(t, e.run(t.Context(), "grep", `{"pattern":"func","path":"main.go"}`)); got != "main.go:3: func main() {\n" {
		t.Fatalf("one file = %q", got)
	}
	if got := mustOK(t, e.run(t.Context(), "grep", `{"pattern":"zebra"}`)); got != "No matches." {
		t.Fatalf("no match = %q", got)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"pattern":"("}`, "invalid regular expression"},
		{`{"pattern":"a","context":11}`, "context must be between 0 and 10, got 11"},
		{`{"pattern":"a","include":"[x"}`, "invalid include"},
		{`{"pattern":"a","path":"nope"}`, "searching "},
		{`{"pattern":"a","flags":"i"}`, `unknown argument "flags"`},
	} {
		mustFail(t, e.run(t.Context(), "grep", tc.in), tc.want)
	}
}

// With context N, grep shows N lines around each match, groups apart
// separated by "--" and overlapping ones merged; long lines are cut.
func TestGrepContext(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAsk)
	var b strings.Builder
	for i := 1; i <= 12; i++ {
		if i == 3 || i == 5 || i == 11 {
			fmt.Fprintf(&b, "match %d\n", i)
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	e.write("f.txt", b.String())
	want := "f.txt-2- line 2\nf.txt:3: match 3\nf.txt-4- line 4\nf.txt:5: match 5\nf.txt-6- line 6\n--\nf.txt-10- line 10\nf.txt:11: match 11\nf.txt-12- line 12\n"
	if got := mustOK(t, e.run(t.Context(), "grep", `{"pattern":"^match","context":1}`)); got != want {
		t.Fatalf("context = %q, want %q", got, want)
	}
	e.write("long.txt", "x"+strings.Repeat("y", 1000)+"\n")
	got := mustOK(t, e.run(t.Context(), "grep", `{"pattern":"^x","path":"long.txt"}`))
	if !strings.HasSuffix(got, "…\n") || len(got) > maxGrepLine+len("long.txt:1: …\n") {
		t.Fatalf("long line: %d bytes", len(got))
	}

	var many strings.Builder
	for range maxGrepMatches + 1 {
		many.WriteString("m\n")
	}
	e.write("many.txt", many.String())
	got = mustOK(t, e.run(t.Context(), "grep", `{"pattern":"^m$","path":"many.txt"}`))
	if !strings.HasSuffix(got, "[stopped after 200 matches; narrow the pattern or the path]\n") || strings.Count(got, "\n") != maxGrepMatches+1 {
		t.Fatalf("bounded: %d lines, ends %q", strings.Count(got, "\n"), got[len(got)-80:])
	}
}

// A search outside the project asks; refused, nothing is searched.
func TestSearchOutsideAsks(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAsk)
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "secret.txt"), []byte("k3y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.answer = permissions.RejectOnce
	for _, name := range []string{"grep", "glob"} {
		res := e.run(t.Context(), name, input(t, map[string]string{"pattern": "s*", "path": out}))
		mustFail(t, res, "rejected")
		if strings.Contains(res.Text, "secret") {
			t.Fatalf("%s: a refused search showed %q", name, res.Text)
		}
	}
	if asked := e.requests(); len(asked) != 2 || asked[0].req.Kind != "search" || asked[0].req.Paths[0].Inside {
		t.Fatalf("requests %+v", asked)
	}
	e.answer = permissions.AllowOnce
	if got := mustOK(t, e.run(t.Context(), "grep", input(t, map[string]string{"pattern": "k3y", "path": out}))); got != filepath.Join(out, "secret.txt")+":1: k3y\n" {
		t.Fatalf("allowed outside search = %q", got)
	}
}
