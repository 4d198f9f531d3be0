//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// privateTmp covers /tmp with an empty tmpfs of the sandbox's own, then
// binds back the paths below /tmp the command must see (keep: the session
// roots and writable trees, the session's temp dir among them, and the
// protected paths, such as a worktree's git directory), so that
// neither other sessions' files nor the sockets of services outside the
// sandbox (tmux, ssh-agent, X) are reachable there, whenever they were
// created. When keep names /tmp itself the tmpfs serves as it (the temp
// dir, private to the command); when keep names an ancestor of /tmp (a
// session rooted at /), /tmp stays as it is.
func privateTmp(keep []string) error {
	tmp, err := filepath.EvalSymlinks("/tmp")
	if err != nil {
		return nil // no /tmp
	}
	var under []string
	for _, k := range keep {
		switch {
		case k == tmp:
		case within(tmp, k):
			return nil
		case within(k, tmp):
			under = append(under, k)
		}
	}
	// One inside another comes with it.
	slices.Sort(under)
	under = slices.Compact(under)
	under = slices.DeleteFunc(slices.Clone(under), func(k string) bool {
		for _, o := range under {
			if o != k && within(k, o) {
				return true
			}
		}
		return false
	})
	fds := make([]int, len(under))
	for i, k := range under {
		fd, err := unix.Open(k, unix.O_PATH|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			fds[i] = -1 // a protected path that does not exist
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		defer unix.Close(fd)
		fds[i] = fd
	}
	if err := unix.Mount("tmpfs", tmp, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("tmpfs on %s: %w", tmp, err)
	}
	for i, k := range under {
		if fds[i] < 0 {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstat(fds[i], &st); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(k), 0o755); err != nil {
			return err
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			err = os.Mkdir(k, 0o755)
		} else {
			// Never truncate: O_EXCL creates the mount point only.
			var f *os.File
			if f, err = os.OpenFile(k, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
				f.Close()
			}
		}
		if err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", fds[i]), k, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", k, err)
		}
	}
	return nil
}

// privateShm covers /dev/shm (POSIX shared memory and semaphores) with a
// tmpfs of the sandbox's own.
func privateShm() error {
	fi, err := os.Stat("/dev/shm")
	if err != nil || !fi.IsDir() {
		return nil
	}
	return unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777")
}
