package permissions

import (
	"os"
	"path/filepath"
	"testing"
)

func TestProjectKey(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	deep := filepath.Join(repo, "a", "b")
	wt := filepath.Join(base, "worktree")
	plain := filepath.Join(base, "plain")
	for _, d := range []string{filepath.Join(repo, ".git"), deep, filepath.Join(wt, "sub"), plain} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: /elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		repo:                     repo,
		deep:                     repo,
		deep + "/../b/.":         repo,
		filepath.Join(wt, "sub"): wt,
		plain:                    plain,
	}
	for cwd, want := range cases {
		if got := ProjectKey(cwd); got != want {
			t.Errorf("ProjectKey(%q) = %q, want %q", cwd, got, want)
		}
	}
	// A relative cwd is made absolute.
	t.Chdir(deep)
	if got := ProjectKey("."); got != repo {
		t.Errorf("ProjectKey(.) = %q, want %q", got, repo)
	}
}
