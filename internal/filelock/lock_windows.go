//go:build windows

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/windows"
)

// lockOffsetHigh places the locked byte at offset 2^62 (see the package
// documentation); the byte after it holds a waiting writer's intent.
const lockOffsetHigh = 1 << 30

// intentOffset is the intent byte's offset from the lock byte.
const intentOffset = 1

// TryLock takes an exclusive lock on the open file f without waiting. It
// reports false (and no error) when another handle holds it. The lock lasts
// until f is closed or the process ends.
func TryLock(f *os.File) (bool, error) { return tryLockFileEx(f, windows.LOCKFILE_EXCLUSIVE_LOCK) }

// writerTry returns the try function of one waiting [Lock]. Readers
// ([RLock]) could hold their shared locks in turn for ever, so a writer
// that does not get the lock at once takes the intent byte, which keeps new
// readers out until it has the lock.
func writerTry() func(*os.File) (bool, error) {
	announced := false
	return func(f *os.File) (bool, error) {
		if !announced {
			ok, err := TryLock(f)
			if ok || err != nil {
				return ok, err
			}
			announced, err = tryLockByte(f, intentOffset, windows.LOCKFILE_EXCLUSIVE_LOCK)
			if !announced || err != nil {
				return false, err // another writer waits first
			}
		}
		ok, err := TryLock(f)
		if ok {
			err = unlockByte(f, intentOffset)
		}
		return ok, err
	}
}

// tryRLock is [TryLockShared] that also gives way to a waiting writer.
func tryRLock(f *os.File) (bool, error) {
	if ok, err := tryLockByte(f, intentOffset, 0); !ok || err != nil {
		return false, err
	}
	if err := unlockByte(f, intentOffset); err != nil {
		return false, err
	}
	return TryLockShared(f)
}

// tryLockFileEx takes the lock byte with LockFileEx(flags) without waiting.
func tryLockFileEx(f *os.File, flags uint32) (bool, error) { return tryLockByte(f, 0, flags) }

// tryLockByte takes the byte off after the lock byte with LockFileEx(flags)
// without waiting.
func tryLockByte(f *os.File, off, flags uint32) (bool, error) {
	ol := &windows.Overlapped{Offset: off, OffsetHigh: lockOffsetHigh}
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
func Unlock(f *os.File) error { return unlockByte(f, 0) }

func unlockByte(f *os.File, off uint32) error {
	ol := &windows.Overlapped{Offset: off, OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, ol)
}
