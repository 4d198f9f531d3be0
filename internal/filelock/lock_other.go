//go:build !unix && !windows

package filelock

import "os"

// TryLock always succeeds where neither flock(2) nor LockFileEx exist:
// concurrent processes may then lose one of two simultaneous updates.
func TryLock(*os.File) (bool, error) { return true, nil }

// TryLockShared always succeeds where neither flock(2) nor LockFileEx exist.
func TryLockShared(*os.File) (bool, error) { return true, nil }

// Unlock does nothing where neither flock(2) nor LockFileEx exist.
func Unlock(*os.File) error { return nil }

func writerTry() func(*os.File) (bool, error) { return TryLock }

func tryRLock(f *os.File) (bool, error) { return TryLockShared(f) }
