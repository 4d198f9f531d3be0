//go:build windows

package fs

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"acpd/internal/testdir"
)

func TestCleanInputWindows(t *testing.T) {
	for in, want := range map[string]string{
		`c:\x\y`:               `C:\x\y`,
		`C:/x/y`:               `C:\x\y`,
		`\\?\C:\x`:             `C:\x`,
		`\\?\UNC\srv\share\x`:  `\\srv\share\x`,
		`\\srv\share\x`:        `\\srv\share\x`,
		`rel\x`:                `rel\x`,
		`..\x`:                 `..\x`,
		`C:\x\..\y`:            `C:\x\..\y`,
		`C:\x\file.txt:stream`: `C:\x\file.txt:stream`,
	} {
		if got, err := cleanInput(in); err != nil || got != want {
			t.Errorf("cleanInput(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`C:x`, `C:`, `\x\y`, `/x`, `\\.\pipe\x`, `\\.\C:\x`, `C:\x.\y`, `C:\x \y`, `C:\x\y...`} {
		if got, err := cleanInput(bad); err == nil {
			t.Errorf("cleanInput(%q) = %q, want an error", bad, got)
		}
	}
}

// TestResolveWindowsSpellings: the same file named with another case, a
// lowercase drive, forward slashes or the \\?\ prefix is inside its root.
func TestResolveWindowsSpellings(t *testing.T) {
	root := testdir.New(t)
	if err := os.MkdirAll(filepath.Join(root, "Sub", "Dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := NewRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	base := r.Cwd()
	for _, p := range []string{
		filepath.Join(base, "Sub", "Dir", "new.txt"),
		strings.ToLower(base[:1]) + base[1:] + `\sub\DIR\new.txt`,
		strings.ReplaceAll(base, `\`, `/`) + `/SUB/dir/new.txt`,
		`\\?\` + base + `\Sub\Dir\new.txt`,
		`Sub\dir\new.txt`,
	} {
		res, err := r.Resolve(p)
		if err != nil {
			t.Errorf("Resolve(%q): %v", p, err)
			continue
		}
		if !res.Inside() || !strings.EqualFold(res.Rel, "Sub/Dir/new.txt") {
			t.Errorf("Resolve(%q) = %+v, want inside as Sub/Dir/new.txt", p, res)
		}
	}
	for _, p := range []string{`C:relative`, `\rooted`} {
		if _, err := r.Resolve(p); err == nil {
			t.Errorf("Resolve(%q) succeeded", p)
		}
	}
}

// TestResolveFollowsJunctions: a junction inside a root that points
// outside makes the path outside.
func TestResolveFollowsJunctions(t *testing.T) {
	root, outside := testdir.New(t), testdir.New(t)
	link := filepath.Join(root, "j")
	if out, err := exec.Command("cmd.exe", "/c", "mklink", "/J", link, outside).CombinedOutput(); err != nil {
		t.Skipf("cannot make a junction here: %v %s", err, out)
	}
	defer os.Remove(link)
	// Wine's mklink makes a plain directory: only a real junction shows
	// the target's files.
	if err := os.WriteFile(filepath.Join(outside, "probe"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(link, "probe")); err != nil {
		t.Skipf("mklink /J made no working junction here: %v", err)
	}
	r, err := NewRoots(root)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Resolve(filepath.Join(link, "x.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Inside() {
		t.Errorf("path through a junction to outside reported inside: %+v", res)
	}
}
