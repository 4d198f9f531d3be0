package review

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Target{
		"":                             {},
		"uncommitted":                  {},
		"focus on errors":              {Focus: "focus on errors"},
		"base main":                    {Kind: Base, Ref: "main"},
		"base origin/main look at sql": {Kind: Base, Ref: "origin/main", Focus: "look at sql"},
		"commit HEAD~1":                {Kind: Commit, Ref: "HEAD~1"},
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"base", "commit", "base --output=/etc/x", "commit -p"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) took it", bad)
		}
	}
}

func TestFindings(t *testing.T) {
	answer := "Here is what I found.\n\n" +
		"- [P0] Nil map write on first use — store/cache.go:42\n  The map is never made.\n" +
		"- **[P2]** Error dropped: `cmd/main.go:7-9`\n" +
		"1. [P1] Race on counter - internal/x/y.go:120\n" +
		"- [P3] no location here\n" +
		"Mentions a.go:3 in prose, which is not a finding.\n" +
		"The change needs work.\n"
	want := []Finding{
		{Priority: "P0", Title: "Nil map write on first use", Path: filepath.FromSlash("store/cache.go"), Line: 42},
		{Priority: "P2", Title: "Error dropped", Path: filepath.FromSlash("cmd/main.go"), Line: 7},
		{Priority: "P1", Title: "Race on counter", Path: filepath.FromSlash("internal/x/y.go"), Line: 120},
	}
	if got := Findings(answer); !reflect.DeepEqual(got, want) {
		t.Fatalf("Findings =\n%+v\nwant\n%+v", got, want)
	}
}

// gitIn runs the real git in dir, as the agent does (without the sandbox).
func gitIn(dir string) Git {
	return func(ctx context.Context, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return out, errors.New(strings.TrimSpace(string(ee.Stderr)))
		}
		return out, err
	}
}

func TestPromptOnARealRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git := gitIn(dir)
	ctx := context.Background()
	run := func(args ...string) {
		t.Helper()
		if out, err := git(ctx, args...); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("init", "-q", "-b", "main")
	run("config", "user.email", "t@example.invalid")
	run("config", "user.name", "t")
	write("a.go", "package a\n\nfunc A() int { return 1 }\n")
	run("add", "a.go")
	run("commit", "-q", "-m", "first")

	if _, err := Prompt(ctx, git, Target{}); !errors.As(err, new(ErrNothing)) {
		t.Fatalf("clean tree: err = %v, want ErrNothing", err)
	}
	write("a.go", "package a\n\nfunc A() int { return 2 }\n")
	write("new.go", "package a\n")
	p, err := Prompt(ctx, git, Target{Focus: "the return value"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"uncommitted changes", "-func A() int { return 1 }", "+func A() int { return 2 }", "Untracked files", "new.go", "focus on: the return value", "[P0]"} {
		if !strings.Contains(p, want) {
			t.Errorf("uncommitted prompt lacks %q:\n%s", want, p)
		}
	}

	run("checkout", "-q", "-b", "topic")
	run("add", "-A")
	run("commit", "-q", "-m", "second: return two")
	p, err = Prompt(ctx, git, Target{Kind: Base, Ref: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p, "against main") || !strings.Contains(p, "+func A() int { return 2 }") {
		t.Errorf("base prompt:\n%s", p)
	}
	p, err = Prompt(ctx, git, Target{Kind: Commit, Ref: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p, "second: return two") || !strings.Contains(p, "new.go") {
		t.Errorf("commit prompt:\n%s", p)
	}
	if _, err := Prompt(ctx, git, Target{Kind: Base, Ref: "nosuch"}); err == nil {
		t.Error("unknown base branch took")
	}
	if _, err := Prompt(ctx, gitIn(t.TempDir()), Target{}); err == nil || !strings.Contains(err.Error(), "git repository") {
		t.Errorf("outside a repository: %v", err)
	}
}
