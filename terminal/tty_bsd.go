//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package terminal

import "golang.org/x/sys/unix"

// The termios requests of macOS and the BSDs.
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)

// closeOnExecAll marks every descriptor >= 3 of this process close-on-exec
// (see markCloexecIn) by walking /dev/fd: macOS has no close_range(2).
func closeOnExecAll() error { return markCloexecIn("/dev/fd") }
