package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestTightenNeverLoosens(t *testing.T) {
	on, off := true, false
	base := Policy{Mode: WorkspaceWrite, Network: true, Writable: []string{"/a", "/b"}}
	if got := base.Tighten(ReadOnly, &off, []string{"/b", "/c"}); got.Mode != ReadOnly || got.Network || !slices.Equal(got.Writable, []string{"/b"}) {
		t.Fatalf("tightened: %+v", got)
	}
	strict := Policy{Mode: ReadOnly}
	if got := strict.Tighten(Off, &on, []string{"/x"}); got.Mode != ReadOnly || got.Network || len(got.Writable) != 0 {
		t.Fatalf("loosened: %+v", got)
	}
	if got := (Policy{Mode: WorkspaceWrite}).Tighten(Off, nil, nil); got.Mode != WorkspaceWrite {
		t.Fatalf("a project turned the sandbox off: %+v", got)
	}
	if got := (Policy{Mode: Off}).Tighten(WorkspaceWrite, nil, nil); got.Mode != WorkspaceWrite {
		t.Fatalf("a project could not turn the sandbox on: %+v", got)
	}
}

func TestResolve(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "root")
	hidden := filepath.Join(base, "hidden")
	for _, d := range []string{filepath.Join(root, ".git", "hooks"), hidden} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(hidden, "f"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	p := Policy{Mode: WorkspaceWrite, Roots: []string{link}, Writable: []string{filepath.Join(base, "missing"), filepath.Join(hidden, "sub")}, Hidden: []string{filepath.Join(hidden, "f"), hidden}}
	pl, err := p.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pl.writable, []string{root}) {
		t.Errorf("writable %q", pl.writable)
	}
	want := []string{filepath.Join(root, ".git"), filepath.Join(root, ".acpd")}
	if !slices.Equal(pl.readOnly, want) {
		t.Errorf("read-only %q, want %q", pl.readOnly, want)
	}
	// The root itself is the only writable ancestor of its protected paths
	// (the hidden dir is not in a writable tree).
	if !slices.Equal(pl.locked, []string{root}) {
		t.Errorf("locked %q", pl.locked)
	}
	if !slices.Equal(pl.hidden, []string{hidden}) {
		t.Errorf("hidden %q", pl.hidden)
	}
	if _, err := (Policy{Mode: WorkspaceWrite, Roots: []string{"rel"}}).resolve(); err == nil {
		t.Error("relative root accepted")
	}
	if _, err := (Policy{Mode: "bogus"}).resolve(); err == nil {
		t.Error("unknown mode accepted")
	}
}

// TestGitPaths: every git indirection is found from a root's .git: a
// worktree's gitdir file and commondir, submodules' .git files, included
// configuration and a hooks path in the work tree.
func TestGitPaths(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	main := filepath.Join(base, "main")
	wt := filepath.Join(base, "wt")
	gd := filepath.Join(main, ".git", "worktrees", "wt")
	files := map[string]string{
		filepath.Join(wt, ".git"):                 "gitdir: " + gd + "\n",
		filepath.Join(gd, "commondir"):            "../..\n",
		filepath.Join(gd, "HEAD"):                 "ref: refs/heads/wt\n",
		filepath.Join(main, ".git", "config"):     "[core]\n\thooksPath = .husky\n[include]\n\tpath = ../shared.inc\n[core]\n\tfsmonitor = tools/fsmon --fast\n",
		filepath.Join(main, "shared.inc"):         "",
		filepath.Join(wt, ".husky", "pre-commit"): "",
		filepath.Join(wt, "tools", "fsmon"):       "",
		filepath.Join(wt, ".gitmodules"):          "[submodule \"lib\"]\n\tpath = lib\n[submodule \"evil\"]\n\tpath = ../../etc\n",
		filepath.Join(wt, "lib", ".git"):          "gitdir: ../.git/modules/lib\n",
	}
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := gitPaths(filepath.Join(wt, ".git"))
	for _, want := range []string{
		filepath.Join(wt, ".git"), gd, filepath.Join(main, ".git"),
		filepath.Join(main, "shared.inc"), filepath.Join(wt, ".husky"), filepath.Join(wt, "tools", "fsmon"),
		filepath.Join(wt, "lib", ".git"),
	} {
		if !slices.Contains(got, want) {
			t.Errorf("gitPaths misses %s: %q", want, got)
		}
	}
	for _, p := range got {
		if strings.HasPrefix(p, "/etc") {
			t.Errorf("a .gitmodules path escaped: %s", p)
		}
	}
	// A session rooted in the worktree resolves (it used to fail with
	// "not a directory") and protects all of them.
	pl, err := (Policy{Mode: WorkspaceWrite, Roots: []string{wt}}).resolve()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{filepath.Join(wt, ".git"), gd, filepath.Join(main, ".git")} {
		if !slices.Contains(pl.readOnly, want) {
			t.Errorf("read-only misses %s: %q", want, pl.readOnly)
		}
	}
}

// TestNestedRepositoriesProtected: the .git of repositories inside a root
// (a session rooted at a home folder) are protected, shallow ones first,
// and the search does not enter .git directories.
func TestNestedRepositoriesProtected(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"src/a/.git/modules/x/.git", "b/.git", "deep/1/2/3/4/.git"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "src", "wt.git"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := nestedGits(base)
	want := []string{filepath.Join(base, "b", ".git"), filepath.Join(base, "src", "a", ".git")}
	if !slices.Equal(got, want) {
		t.Fatalf("nested %q, want %q", got, want)
	}
	pl, err := (Policy{Mode: WorkspaceWrite, Roots: []string{base}}).resolve()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if !slices.Contains(pl.readOnly, w) {
			t.Errorf("%s not read-only: %q", w, pl.readOnly)
		}
	}
	if !slices.Contains(pl.locked, filepath.Join(base, "src", "a")) || !slices.Contains(pl.locked, filepath.Join(base, "src")) {
		t.Errorf("the ancestors of a nested .git are not locked: %q", pl.locked)
	}
}
