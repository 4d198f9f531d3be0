//go:build windows

package childenv

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestLookPathPathExt(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tool.cmd"), []byte("@echo off\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATHEXT", ".EXE;.CMD")
	if p, err := LookPath("tool", `relative;`+dir); err != nil || !strings.EqualFold(p, filepath.Join(dir, "tool.cmd")) {
		t.Errorf("LookPath(tool) = %q, %v", p, err)
	}
	if _, err := LookPath("missing", dir); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("LookPath(missing): %v", err)
	}
}
