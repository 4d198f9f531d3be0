//go:build !unix && !windows

package fs

import "os"

// openNonblock is 0 where O_NONBLOCK does not exist.
const openNonblock = 0

// openReadOnly opens path for reading.
func openReadOnly(path string) (*os.File, error) { return os.Open(path) }

// processAlive cannot check liveness on this platform; temp files of other
// processes are swept by age only.
func processAlive(int) (alive, known bool) { return false, false }

// matchOwner is a no-op where file ownership is not POSIX.
func matchOwner(*os.File, os.FileInfo) {}
