// Package testdir gives tests temporary directories that can also be
// removed under Wine.
//
// Wine 8, which runs acpd's Windows test binaries on Linux, lacks the
// POSIX delete semantics (FileDispositionInformationEx) that os.RemoveAll
// uses on Windows, so t.TempDir's cleanup fails there with "Invalid
// function" unless the binary is built with .ci/test-windows' overlay
// (which `make test-windows` does: plain t.TempDir works there). [New]
// also works without it: it falls back to removing the tree one entry at a
// time with os.Remove (DeleteFile and RemoveDirectory), which Wine has.
package testdir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// New returns a new temporary directory that is removed when t and its
// subtests finish, like t.TempDir, which it is on every system but
// Windows. A failed removal fails the test.
func New(t testing.TB) string {
	t.Helper()
	if runtime.GOOS != "windows" {
		return t.TempDir()
	}
	pattern := strings.Map(func(r rune) rune {
		if strings.ContainsRune(`<>:"/\|?*`, r) || r < ' ' {
			return '_'
		}
		return r
	}, t.Name())
	if len(pattern) > 64 {
		pattern = pattern[:64]
	}
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatalf("testdir: %v", err)
	}
	t.Cleanup(func() {
		if err := RemoveAll(dir); err != nil {
			t.Errorf("testdir: cleanup: %v", err)
		}
	})
	return dir
}

// RemoveAll is os.RemoveAll, falling back, when that fails, to removing
// the entries of path deepest first with os.Remove.
func RemoveAll(path string) error {
	err := os.RemoveAll(path)
	if err == nil {
		return nil
	}
	var paths []string
	walkErr := filepath.WalkDir(path, func(p string, _ fs.DirEntry, err error) error {
		if err == nil || p == path {
			paths = append(paths, p)
		}
		return nil
	})
	if walkErr != nil {
		return errors.Join(err, walkErr)
	}
	for i := len(paths) - 1; i >= 0; i-- {
		if e := os.Remove(paths[i]); e != nil && !errors.Is(e, fs.ErrNotExist) {
			// A read-only file: make it writable and try once more.
			if os.Chmod(paths[i], 0o600) != nil || os.Remove(paths[i]) != nil {
				return errors.Join(err, e)
			}
		}
	}
	return nil
}
