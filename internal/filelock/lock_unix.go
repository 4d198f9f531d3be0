//go:build unix

package filelock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// TryLock takes an exclusive lock on the open file f without waiting. It
// reports false (and no error) when another open file holds it. The lock
// lasts until f is closed or the process ends.
func TryLock(f *os.File) (bool, error) { return tryFlock(f, unix.LOCK_EX) }

// tryFlock takes the flock(2) lock how on f without waiting.
func tryFlock(f *os.File, how int) (bool, error) {
	for {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return false, nil
		default:
			return false, err
		}
	}
}

// TryLockShared takes a shared lock on the open file f without waiting: any
// number of shared holders coexist, none with an exclusive one. It reports
// false (and no error) when an exclusive lock is held elsewhere. Release it
// with [Unlock] (or by closing f).
func TryLockShared(f *os.File) (bool, error) { return tryFlock(f, unix.LOCK_SH) }

// Unlock releases the lock f holds, keeping f open.
func Unlock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_UN)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// writerTry returns the try function of one waiting [Lock].
func writerTry() func(*os.File) (bool, error) { return TryLock }

// tryRLock is the try function of [RLock]; flock(2) has no room for a
// writer's intent, and acpd takes RLock only on Windows.
func tryRLock(f *os.File) (bool, error) { return TryLockShared(f) }
