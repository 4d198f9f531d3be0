//go:build windows

package atomicfile

import (
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// openShared opens name for reading with FILE_SHARE_DELETE, which os.Open
// does not give.
func openShared(name string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		if err == windows.ERROR_PATH_NOT_FOUND {
			err = syscall.ERROR_FILE_NOT_FOUND // both mean fs.ErrNotExist
		}
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}
