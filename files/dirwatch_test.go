package files

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDirWatch: a change in a watched directory is reported once per
// burst, a directory created later is seen after Set, and Close stops it
// (goleak checks its goroutine).
func TestDirWatch(t *testing.T) {
	dir := t.TempDir()
	later := filepath.Join(dir, "later")
	changed := make(chan struct{}, 16)
	w, err := WatchDirs([]string{dir, later}, func() { changed <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	wait := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("no change reported after %s", what)
		}
	}
	for i := range 5 {
		if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte{byte(i)}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wait("five writes")
	if err := os.Mkdir(later, 0o755); err != nil {
		t.Fatal(err)
	}
	wait("a new directory")
	if err := w.Set([]string{dir, later}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(later, "b.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The burst before may still be draining: wait until the new file's
	// change is reported.
	wait("a file in the new directory")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
