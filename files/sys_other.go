//go:build !unix && !windows

package files

import (
	"errors"
	"io/fs"
	"os"
)

// openNonblock is 0 where O_NONBLOCK does not exist.
const openNonblock = 0

// openReadOnly opens path for reading.
func openReadOnly(path string) (*os.File, error) { return os.Open(path) }

// checkWritable returns the permission error of opening the existing
// regular file name in d for writing, if any; nothing is written.
func checkWritable(d *os.Root, name string, _ os.FileInfo) error {
	probe, err := d.OpenFile(name, os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrPermission) {
		return err
	}
	if err == nil {
		probe.Close()
	}
	return nil
}

// processAlive cannot check liveness on this platform; temp files of other
// processes are swept by age only.
func processAlive(int) (alive, known bool) { return false, false }

// matchOwner is a no-op where file ownership is not POSIX.
func matchOwner(*os.File, os.FileInfo) {}
