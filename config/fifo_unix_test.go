//go:build unix

package config

import (
	"path/filepath"
	"syscall"
	"testing"
)

func TestProjectFileFIFODoesNotBlock(t *testing.T) {
	e := testEnv(t)
	root := project(t, "")
	writeFile(t, filepath.Join(root, ".acpd", "placeholder"), "")
	if err := syscall.Mkfifo(filepath.Join(root, ".acpd", "config.toml"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := mustLoader(t, Overrides{}, e).ForProject(root)
	wantErr(t, err, "not a regular file")
}
