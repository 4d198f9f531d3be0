package files

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestDirWatch: a change in a watched directory is reported once per
// burst, a directory created later is seen after Set, and Close stops it.
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

// TestDirWatchIdle: a watch that sees no change holds no goroutine (an
// idle session costs no stack), and one that saw a burst holds none once
// its onChange returned.
func TestDirWatchIdle(t *testing.T) {
	dir := t.TempDir()
	// The hub's own goroutine (the process's watcher) exists once any
	// directory is watched: start it before taking the baseline.
	w0, err := WatchDirs([]string{dir}, func() {})
	if err != nil {
		t.Fatal(err)
	}
	defer w0.Close()
	base := goleak.IgnoreCurrent()
	changed := make(chan struct{}, 1)
	w, err := WatchDirs([]string{dir}, func() { changed <- struct{}{} })
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := goleak.Find(base); err != nil {
		t.Fatalf("an idle watch runs a goroutine: %v", err)
	}
	mustWrite(t, filepath.Join(dir, "a.md"), "x")
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no change reported")
	}
	// goleak.Find retries for a while: the timer's goroutine returns
	// right after onChange.
	if err := goleak.Find(base); err != nil {
		t.Fatalf("a watch runs a goroutine after its change: %v", err)
	}
}

// TestDirWatchSerial: onChange never runs concurrently with itself; the
// bursts that came while it ran are reported once after it; Close waits
// for a running onChange and lets no further one start.
func TestDirWatchSerial(t *testing.T) {
	dir := t.TempDir()
	var running, calls atomic.Int32
	release := make(chan struct{})
	entered := make(chan struct{}, 64)
	w, err := WatchDirs([]string{dir}, func() {
		if running.Add(1) != 1 {
			t.Error("onChange runs concurrently with itself")
		}
		calls.Add(1)
		entered <- struct{}{}
		<-release
		running.Add(-1)
	})
	if err != nil {
		t.Fatal(err)
	}
	next := func(what string) {
		t.Helper()
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatalf("no change reported after %s", what)
		}
	}
	mustWrite(t, filepath.Join(dir, "a.md"), "0")
	next("a write")
	for i := range 5 {
		mustWrite(t, filepath.Join(dir, "a.md"), strconv.Itoa(i))
		time.Sleep(dirWatchDebounce)
	}
	release <- struct{}{}
	next("five bursts during the first onChange")
	mustWrite(t, filepath.Join(dir, "a.md"), "last")
	closed := make(chan error, 1)
	go func() { closed <- w.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while onChange ran", err)
	case <-time.After(2 * dirWatchDebounce):
	}
	release <- struct{}{}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("onChange ran %d times, want 2 (the bursts while it ran are one)", n)
	}
}
