//go:build windows

package session

import (
	"errors"

	"golang.org/x/sys/windows"
)

// unlinkOpen is whether a file can be unlinked while open: not on Windows,
// where Go opens files without FILE_SHARE_DELETE.
const unlinkOpen = false

// inUse reports whether a removal failed because another process has the
// file open.
func inUse(err error) bool {
	return errors.Is(err, windows.ERROR_SHARING_VIOLATION) || errors.Is(err, windows.ERROR_ACCESS_DENIED)
}
