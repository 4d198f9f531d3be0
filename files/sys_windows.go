//go:build windows

package files

import (
	"io/fs"
	"os"

	"acpd/internal/atomicfile"

	"golang.org/x/sys/windows"
)

// openNonblock is 0: Windows has no O_NONBLOCK (named pipes are not opened
// through the file tools' paths, see Resolve).
const openNonblock = 0

// openReadOnly opens path for reading, sharing delete access (os.Open does
// not; os.Root's opens do), so that reading a file never makes an
// editor's atomic save of it fail where Windows renames with POSIX
// semantics (see internal/atomicfile).
func openReadOnly(path string) (*os.File, error) { return atomicfile.Open(path) }

// checkWritable refuses an existing file with the read-only attribute
// (which os.Lstat reports as mode 0444). It opens nothing: under the
// classic rename semantics any open handle to the target, even this
// probe's, makes a concurrent writer's replacement fail.
func checkWritable(_ *os.Root, name string, fi os.FileInfo) error {
	if fi.Mode().Perm()&0o200 == 0 {
		return &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return nil
}

// stillActive is STILL_ACTIVE, the exit code of a running process.
const stillActive = 259

// processAlive reports whether pid names a live process; known is false when
// the check itself failed.
func processAlive(pid int) (alive, known bool) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		if err == windows.ERROR_INVALID_PARAMETER {
			return false, true // no such process
		}
		return false, false
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return false, false
	}
	return code == stillActive, true
}

// matchOwner is a no-op: a replaced file gets the directory's inherited
// ACL, as any new file there does.
func matchOwner(*os.File, os.FileInfo) {}
