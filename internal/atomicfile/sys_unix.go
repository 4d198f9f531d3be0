//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"syscall"
)

// dirSync is whether directories can be fsynced.
const dirSync = true

const readersBlockReplace = false

func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// busy reports whether a rename failed because the target is in use and may
// succeed later; never on Unix, where a rename replaces open files.
func busy(error) bool { return false }

// unsupportedSync reports errors of filesystems that cannot fsync a
// directory.
func unsupportedSync(err error) bool {
	return errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, errors.ErrUnsupported)
}
