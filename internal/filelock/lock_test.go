package filelock

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func TestLockExcludes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(p, 0); err == nil {
		t.Fatal("second Lock succeeded while the first is held")
	}
	unlock()
	unlock2, err := Lock(p, 0)
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	unlock2()
}

// TestTryLockLeavesContentReadable: the holder's record stays readable by
// others (LockFileEx locks are mandatory for their range on Windows).
func TestTryLockLeavesContentReadable(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ok, err := TryLock(f); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	if _, err := f.WriteString("holder"); err != nil {
		t.Fatal(err)
	}
	g, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if ok, err := TryLock(g); ok || err != nil {
		t.Fatalf("second TryLock = %v, %v; want false, nil", ok, err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "holder" {
		t.Fatalf("content %q, %v", b, err)
	}
}

// TestTryLockShared: shared locks coexist with each other, never with an
// exclusive one, and Unlock releases either kind without closing the file.
func TestTryLockShared(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	open := func() *os.File {
		t.Helper()
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	try := func(name string, lock func(*os.File) (bool, error), f *os.File, want bool) {
		t.Helper()
		if ok, err := lock(f); ok != want || err != nil {
			t.Fatalf("%s = %v, %v; want %v, nil", name, ok, err, want)
		}
	}
	a, b, c := open(), open(), open()
	try("shared a", TryLockShared, a, true)
	try("shared b beside shared a", TryLockShared, b, true)
	try("exclusive c beside shared a, b", TryLock, c, false)
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	try("exclusive c beside shared b", TryLock, c, false)
	if err := Unlock(b); err != nil {
		t.Fatal(err)
	}
	try("exclusive c after Unlock", TryLock, c, true)
	try("shared a beside exclusive c", TryLockShared, a, false)
	if err := Unlock(c); err != nil {
		t.Fatal(err)
	}
	try("shared a after Unlock of c", TryLockShared, a, true)
}

func TestRLockSharesAndExcludesWriters(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	// take runs lock on p and checks that it succeeds exactly when want.
	take := func(name string, lock func(string, time.Duration) (func(), error), want bool) func() {
		t.Helper()
		unlock, err := lock(p, 0)
		if (err == nil) != want {
			t.Fatalf("%s: err = %v, want success %v", name, err, want)
		}
		return unlock
	}
	take("RLock of a missing file", RLock, true)()
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("RLock created the lock file: %v", err)
	}
	w := take("Lock", Lock, true)
	take("RLock beside Lock", RLock, false)
	w()
	r1 := take("RLock", RLock, true)
	r2 := take("RLock beside RLock", RLock, true)
	r1()
	take("Lock beside RLock", Lock, false)
	r2()
	take("Lock after the readers left", Lock, true)()
}

// TestWaitingWriterKeepsNewReadersOut: once a Lock waits for a reader,
// new readers wait behind it, and it gets the lock when that reader leaves.
func TestWaitingWriterKeepsNewReadersOut(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("only on Windows: flock(2) has no room for a writer's intent, and RLock is taken only there")
	}
	p := filepath.Join(t.TempDir(), "x.lock")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := RLock(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		unlock, err := Lock(p, time.Minute)
		if err == nil {
			unlock()
		}
		got <- err
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		unlock, err := RLock(p, 0)
		if err != nil {
			break // the writer announced itself
		}
		unlock()
		if time.Now().After(deadline) {
			t.Fatal("new readers still get in while a writer waits")
		}
	}
	r()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}
