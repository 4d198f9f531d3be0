package testdir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNewRemovesTree(t *testing.T) {
	var dir string
	t.Run("use", func(t *testing.T) {
		dir = New(t)
		if err := os.MkdirAll(filepath.Join(dir, "a", "b"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"f", "a/g", "a/b/h"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(filepath.Join(dir, "a", "g"), 0o444); err != nil {
			t.Fatal(err)
		}
		if New(t) == dir {
			t.Error("two calls returned one directory")
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("directory left behind: %v", err)
	}
}

func TestRemoveAllMissing(t *testing.T) {
	if err := RemoveAll(filepath.Join(New(t), "missing")); err != nil {
		t.Fatal(err)
	}
}
