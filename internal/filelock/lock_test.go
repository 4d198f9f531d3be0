package filelock

import (
	"os"
	"path/filepath"
	"testing"
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
