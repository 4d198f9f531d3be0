//go:build windows

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffsetHigh places the locked byte at offset 2^62 (see the package
// documentation).
const lockOffsetHigh = 1 << 30

// TryLock takes an exclusive lock on the open file f without waiting. It
// reports false (and no error) when another handle holds it. The lock lasts
// until f is closed or the process ends.
func TryLock(f *os.File) (bool, error) { return tryLockFileEx(f, windows.LOCKFILE_EXCLUSIVE_LOCK) }

// tryLockFileEx takes the lock byte with LockFileEx(flags) without waiting.
func tryLockFileEx(f *os.File, flags uint32) (bool, error) {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return false, nil
	default:
		return false, err
	}
}

// TryLockShared takes a shared lock on the open file f without waiting: any
// number of shared holders coexist, none with an exclusive one. It reports
// false (and no error) when an exclusive lock is held elsewhere. Release it
// with [Unlock] (or by closing f).
func TryLockShared(f *os.File) (bool, error) { return tryLockFileEx(f, 0) }

// Unlock releases the lock f holds, keeping f open.
func Unlock(f *os.File) error {
	ol := &windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}
