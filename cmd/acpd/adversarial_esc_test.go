//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAttackFIFOInEveryTool: every tool that opens a path refuses a FIFO at
// once (list_dir on it, read_file of one named like an image, a FIFO where
// a listed directory or a .gitignore was); the turn ends, and listing a
// real directory still works.
func TestAttackFIFOInEveryTool(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	for _, p := range []string{"fifo", "fifo.png", "dir/.gitignore"} {
		if err := os.MkdirAll(filepath.Join(a.project, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(a.project, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(a.project, "dir", "real.txt"), "needle\n")
	script := a.script(
		toolCall{"list_dir", map[string]any{"path": "fifo"}},
		toolCall{"read_file", map[string]any{"path": "fifo.png"}},
		toolCall{"glob", map[string]any{"pattern": "**/*.txt", "path": "dir"}},
		toolCall{"grep", map[string]any{"pattern": "needle", "path": "dir"}},
		toolCall{"list_dir", map[string]any{"path": "dir"}},
	)
	seen, _ := a.turn("", script, nil, "")
	if !strings.Contains(seen, `fifo is not a directory`) {
		t.Errorf("list_dir of the FIFO was not refused:\n%s", seen)
	}
	if !strings.Contains(seen, "not a regular file") {
		t.Errorf("read_file of fifo.png was not refused:\n%s", seen)
	}
	if !strings.Contains(seen, "real.txt") || !strings.Contains(seen, "needle") {
		t.Errorf("glob, grep or list_dir of a real directory holding a FIFO did not work:\n%s", seen)
	}
}
