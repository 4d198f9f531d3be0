//go:build unix

package files

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// openNonblock is added to every read-only open so that opening a FIFO
// swapped in for a regular file cannot block; non-regular files are then
// rejected after fstat. It has no effect on regular files.
const openNonblock = syscall.O_NONBLOCK

// openReadOnly opens path for reading with openNonblock.
func openReadOnly(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
}

// checkWritable returns the permission error of opening the existing
// regular file name in d for writing, if any; nothing is written.
func checkWritable(d *os.Root, name string, _ os.FileInfo) error {
	probe, err := d.OpenFile(name, os.O_WRONLY|openNonblock, 0)
	if errors.Is(err, fs.ErrPermission) {
		return err
	}
	if err == nil {
		probe.Close()
	}
	return nil
}

// processAlive reports whether pid names a live process; known is false when
// the check itself failed.
func processAlive(pid int) (alive, known bool) {
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return true, true
	case errors.Is(err, syscall.ESRCH):
		return false, true
	}
	return false, false
}

// matchOwner gives f the owner of old, best effort (it only succeeds for
// privileged processes or when just the group changes to one of ours).
func matchOwner(f *os.File, old os.FileInfo) {
	want, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	fi, err := f.Stat()
	if err != nil {
		return
	}
	have, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || (have.Uid == want.Uid && have.Gid == want.Gid) {
		return
	}
	_ = f.Chown(int(want.Uid), int(want.Gid))
}
