//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package run

import (
	"os"

	"golang.org/x/sys/unix"
)

// The termios requests of macOS and the BSDs.
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)

// fread is FREAD from <sys/fcntl.h>: TIOCFLUSH's "input" queue.
const fread = 1

// flushInput discards what was typed on the terminal f and not read yet.
func flushInput(f *os.File) { _ = unix.IoctlSetPointerInt(int(f.Fd()), unix.TIOCFLUSH, fread) }
