// Package filelock takes exclusive, advisory, whole-file locks between
// processes (flock(2) on unix, LockFileEx on Windows). A lock dies with its
// process, so a crash never leaves a file locked. Used for files several
// acpd processes rewrite (remembered permissions, stored credentials) and,
// through [TryLock], for the session store's session and index locks.
//
// On Windows the lock covers one byte far beyond any content (offset 2^62),
// because LockFileEx locks are mandatory for the range they cover: readers
// of a lock file's content (the session lock's holder record) are never
// blocked.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// The backoff of [Poll]: the first retry after minPoll, doubling up to
// maxPoll.
const (
	minPoll = 50 * time.Microsecond
	maxPoll = 10 * time.Millisecond
)

// ErrTimeout is returned (wrapped) by a wait for a lock that lasted its
// whole timeout.
var ErrTimeout = errors.New("timed out")

// Lock takes an exclusive lock on path (created 0600 if missing), waiting
// at most timeout for another holder. The returned function releases the
// lock.
func Lock(path string, timeout time.Duration) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	return wait(f, path, timeout, writerTry())
}

// RLock takes a shared lock on path, waiting at most timeout for an
// exclusive holder ([Lock]) or a waiting one; shared holders do not exclude
// each other, and they never starve a waiting [Lock]. A missing path is not
// created: no writer has locked it, and the returned function then does
// nothing. Readers take it where an open file would make a writer's
// replacement of the file fail (internal/atomicfile's ReaderLock): holding
// it, a writer that takes [Lock] around its replacement never finds a
// reader's handle open.
func RLock(path string, timeout time.Duration) (unlock func(), err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, err
	}
	return wait(f, path, timeout, tryRLock)
}

// wait takes a lock on f with try, polling until timeout; it closes f
// unless it returns the lock.
func wait(f *os.File, path string, timeout time.Duration, try func(*os.File) (bool, error)) (unlock func(), err error) {
	err = Poll(context.Background(), timeout, func() (bool, error) { return try(f) })
	if err != nil {
		f.Close()
		if errors.Is(err, ErrTimeout) {
			return nil, fmt.Errorf("%w after %v waiting for %s (held by another acpd process)", ErrTimeout, timeout, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { _ = f.Close() }, nil // closing releases the lock
}

// Poll is the one wait for a contended lock: it calls try until try
// reports success (nil) or fails (its error), pausing between calls with
// a backoff from 50µs to 10ms. It gives up with [ErrTimeout] once timeout
// has passed, and with ctx's cause as soon as ctx ends; a try that
// succeeds at once never looks at either.
func Poll(ctx context.Context, timeout time.Duration, try func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var timer *time.Timer
	for delay := minPoll; ; delay = min(2*delay, maxPoll) {
		ok, err := try()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return ErrTimeout
		}
		if timer == nil {
			timer = time.NewTimer(min(delay, left))
			defer timer.Stop()
		} else {
			timer.Reset(min(delay, left))
		}
		select {
		case <-timer.C:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}
