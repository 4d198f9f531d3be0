//go:build windows

package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

func TestRetryRenameWhileBusy(t *testing.T) {
	calls := 0
	err := RetryRename(func() error {
		calls++
		if calls < 3 {
			return windows.ERROR_SHARING_VIOLATION
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("RetryRename = %v after %d calls, want nil after 3", err, calls)
	}
}

func TestRetryRenameGivesUpSayingWhy(t *testing.T) {
	err := RetryRename(func() error { return windows.ERROR_SHARING_VIOLATION })
	if !errors.Is(err, windows.ERROR_SHARING_VIOLATION) || !strings.Contains(err.Error(), "another program has the file open") {
		t.Errorf("RetryRename = %v, want the sharing violation and why", err)
	}
}

// TestRenameOverOpenReader replaces a file that a reader holds open with
// [Open]. With POSIX rename semantics (Windows 10 1709 and later on NTFS)
// the replacement succeeds at once and the reader keeps the old content;
// Wine 8 has only the classic semantics, where it fails as busy (retried by
// RetryRename), which is what [ReaderLock] exists for.
func TestRenameOverOpenReader(t *testing.T) {
	dir := t.TempDir()
	p, tmp := filepath.Join(dir, "f"), filepath.Join(dir, "f.tmp")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = rename(tmp, p)
	if wine() {
		if !busy(err) {
			t.Fatalf("under Wine: rename over an open file = %v, want a busy error", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("rename over a file open with delete sharing: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("target holds %q, want new", b)
	}
	if b, _ := io.ReadAll(f); string(b) != "old" {
		t.Errorf("the open reader sees %q, want old", b)
	}
}

// wine reports whether this runs under Wine (its ntdll exports
// wine_get_version).
func wine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
