//go:build !windows

package childenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestLookPath(t *testing.T) {
	p, err := LookPath("sh", "relative/bin::/nonexistent:/bin:/usr/bin")
	if err != nil || (p != "/bin/sh" && p != "/usr/bin/sh") {
		t.Errorf("LookPath(sh) = %q, %v", p, err)
	}
	if p, err := LookPath("./x", ""); p != "./x" || err != nil {
		t.Errorf("LookPath(./x) = %q, %v", p, err)
	}
	if _, err := LookPath("sh", ""); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("LookPath with empty PATH: %v, want ErrNotFound", err)
	}
	// A non-executable file and a directory are not commands; a relative
	// directory never shadows one.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tool"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"tool", "sub"} {
		if p, err := LookPath(c, dir); err == nil {
			t.Errorf("LookPath(%s) = %q", c, p)
		}
	}
	t.Chdir(dir)
	if err := os.Chmod("tool", 0o755); err != nil {
		t.Fatal(err)
	}
	if p, err := LookPath("tool", ".:"+filepath.Base(dir)); err == nil {
		t.Errorf("relative PATH entry used: %q", p)
	}
	if p, err := LookPath("tool", dir); err != nil || p != filepath.Join(dir, "tool") {
		t.Errorf("LookPath(tool) = %q, %v", p, err)
	}
}
