//go:build windows

package atomicfile

import (
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
