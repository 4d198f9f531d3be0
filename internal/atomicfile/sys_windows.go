//go:build windows

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// dirSync is whether directories can be fsynced: not on Windows.
const dirSync = false

const readersBlockReplace = true

// busy reports whether a rename failed because another handle has the
// target (or the temp file) open, which ends when it closes the file.
func busy(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) ||
		errors.Is(err, windows.ERROR_SHARING_VIOLATION) ||
		errors.Is(err, windows.ERROR_LOCK_VIOLATION)
}

func unsupportedSync(error) bool { return true }

// rename renames within one directory through os.Root, whose Windows
// rename (NtSetInformationFile) asks for FILE_RENAME_POSIX_SEMANTICS with
// FILE_RENAME_REPLACE_IF_EXISTS and falls back to the classic replacing
// rename where the volume or system refuses them; os.Rename (MoveFileEx)
// only ever uses the classic one. Across directories it is os.Rename.
func rename(oldpath, newpath string) error {
	dir := filepath.Dir(oldpath)
	if filepath.Dir(newpath) != dir {
		return os.Rename(oldpath, newpath)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	err = r.Rename(filepath.Base(oldpath), filepath.Base(newpath))
	if le := (*os.LinkError)(nil); errors.As(err, &le) {
		err = &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: le.Err}
	}
	return err
}
