package gitrun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Without any sandbox, the command-line hardening alone keeps a hostile
// repository's filter, fsmonitor, external diff, text conversion and hook
// commands from running, while status and diff still report the change.
func TestHostileRepositoryRunsNothing(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	mark := filepath.Join(t.TempDir(), "ran")
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	git("config", "user.email", "t@example.invalid")
	git("config", "user.name", "t")
	write("a.txt", "one\n")
	git("add", "a.txt")
	git("commit", "-q", "-m", "a")
	evil := "sh -c 'echo ran >> " + mark + "; cat'"
	for _, kv := range [][2]string{
		{"filter.evil.clean", evil}, {"filter.evil.smudge", evil}, {"filter.evil.process", evil},
		{"core.fsmonitor", evil}, {"diff.external", evil}, {"diff.evil.textconv", evil}, {"diff.evil.command", evil},
	} {
		git("config", kv[0], kv[1])
	}
	write(".gitattributes", "* filter=evil diff=evil\n")
	write("a.txt", "two\n")

	r := Runner{Dir: dir, Env: env}
	ctx := context.Background()
	st, err := r.Run(ctx, "status", "--porcelain")
	if err != nil || !strings.Contains(string(st), "a.txt") {
		t.Fatalf("status: %q, %v", st, err)
	}
	d, err := r.Run(ctx, "diff", "HEAD", "--no-ext-diff", "--no-textconv")
	if err != nil || !strings.Contains(string(d), "+two") {
		t.Fatalf("diff: %q, %v", d, err)
	}
	if _, err := r.Run(ctx, "diff", "HEAD"); err != nil {
		t.Fatalf("plain diff: %v", err)
	}
	if b, err := os.ReadFile(mark); err == nil {
		t.Fatalf("a repository command ran: %q", b)
	}
	if _, err := r.Run(ctx, "rev-parse", "--verify", "nosuch"); err == nil || !strings.Contains(err.Error(), "nosuch") && !strings.Contains(err.Error(), "fatal") {
		t.Errorf("a failing git's error: %v", err)
	}
}
