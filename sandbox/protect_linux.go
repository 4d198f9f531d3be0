//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// protectPaths makes the plan's protected paths read-only and keeps every
// directory above them that lies in a writable tree from being renamed or
// removed: each such ancestor is bind-mounted onto itself (recursively, so
// the mounts below it stay), shallowest first, and the kernel refuses to
// rename or remove a mount point (EBUSY) of the caller's mount namespace
// (is_local_mountpoint), whoever owns the directory. The read-only binds of
// the protected paths follow (themselves mount points, so they cannot be
// renamed or replaced either). The hidden paths, mounted after, are mount
// points too. The command cannot unmount anything: it holds no
// capabilities.
//
// It also sets GIT_OPTIONAL_LOCKS=0 for the command, so that `git status`
// and `git diff` do not try to refresh the index in the read-only git
// directory.
func protectPaths(pl plan) error {
	for _, a := range pl.locked {
		if _, err := os.Lstat(a); err != nil {
			continue // gone since the plan was made: nothing to rename
		}
		if err := unix.Mount(a, a, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("lock %s: %w", a, err)
		}
	}
	for _, p := range pl.readOnly {
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
			continue
		}
		if err := bindReadOnly(p, p); err != nil {
			return fmt.Errorf("protect %s: %w", p, err)
		}
	}
	return os.Setenv("GIT_OPTIONAL_LOCKS", "0")
}
