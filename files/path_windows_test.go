//go:build windows

package files

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"acpd/internal/testdir"

	"golang.org/x/sys/windows"
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

// TestLexicallyUnderWindowsSpellings: another spelling of a root is that
// root, and a path Resolve refuses counts as under one (fail closed).
func TestLexicallyUnderWindowsSpellings(t *testing.T) {
	f := newFixture(t)
	lower := func(p string) string { return strings.ToLower(p[:1]) + p[1:] }
	for p, want := range map[string]bool{
		lower(f.root) + `\x`:                 true,
		strings.ToUpper(f.root) + `\X`:       true,
		strings.ReplaceAll(f.root, `\`, `/`): true,
		`\\?\` + f.root + `\x`:               true,
		lower(f.outside) + `\..\root\x`:      true,
		`\rooted`:                            true,
		`C:relative`:                         true,
		lower(f.outside) + `\x`:              false,
		strings.ToUpper(f.root) + `X\y`:      false,
		`\\?\` + strings.ToUpper(f.outside):  false,
	} {
		if got := f.roots.lexicallyUnder(p); got != want {
			t.Errorf("lexicallyUnder(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestOpenReadOnlySharesDelete: while the broker reads a file, another
// program can still open it for deletion or replacement (an editor's atomic
// save), which os.Open would refuse.
func TestOpenReadOnlySharesDelete(t *testing.T) {
	p := filepath.Join(testdir.New(t), "f")
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	openDelete := func() error {
		name, _ := windows.UTF16PtrFromString(p)
		h, err := windows.CreateFile(name, windows.DELETE,
			windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
			nil, windows.OPEN_EXISTING, 0, 0)
		if err == nil {
			windows.CloseHandle(h)
		}
		return err
	}
	for _, tc := range []struct {
		name  string
		open  func(string) (*os.File, error)
		share bool
	}{{"openReadOnly", openReadOnly, true}, {"os.Open", os.Open, false}} {
		f, err := tc.open(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := openDelete(); (err == nil) != tc.share {
			t.Errorf("open for delete beside %s: %v, want success %v", tc.name, err, tc.share)
		}
		f.Close()
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
