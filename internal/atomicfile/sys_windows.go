//go:build windows

package atomicfile

import (
	"errors"

	"golang.org/x/sys/windows"
)

// dirSync is whether directories can be fsynced: not on Windows.
const dirSync = false

// busy reports whether a rename failed because another process has the
// target (or the temp file) open without FILE_SHARE_DELETE, which ends when
// it closes the file.
func busy(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) ||
		errors.Is(err, windows.ERROR_SHARING_VIOLATION) ||
		errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}

func unsupportedSync(error) bool { return true }
