//go:build unix

package jsonrpc

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// protectStdout opens the protocol file on fd 1's target and points fd 1
// at standard error (see ProtectStdout).
func protectStdout() (*os.File, error) {
	fd, err := reopenStdout()
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("acp: setting protocol fd non-blocking: %w", err)
	}
	if err := unix.Dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("acp: redirecting fd 1 to stderr: %w", err)
	}
	// NewFile sees O_NONBLOCK and registers the fd with the poller.
	return os.NewFile(uintptr(fd), "acp-protocol"), nil
}

// reopenStdout returns a new close-on-exec fd writing to fd 1's target.
func reopenStdout() (int, error) {
	var st unix.Stat_t
	if err := unix.Fstat(1, &st); err != nil {
		return -1, fmt.Errorf("acp: stat stdout: %w", err)
	}
	typ := st.Mode & unix.S_IFMT
	if runtime.GOOS == "linux" && (typ == unix.S_IFIFO || typ == unix.S_IFCHR) {
		fd, err := unix.Open("/proc/self/fd/1", unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
		if err == nil {
			return fd, nil
		}
		// Fall back to dup: no /proc, or a pipe whose reader is gone
		// (ENXIO; O_NONBLOCK keeps the open from waiting for one).
	}
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return -1, fmt.Errorf("acp: dup stdout: %w", err)
	}
	return fd, nil
}
