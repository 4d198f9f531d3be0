package run

import (
	"os"

	"golang.org/x/sys/unix"
)

// The termios requests of Linux.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)

// flushInput discards what was typed on the terminal f and not read yet.
func flushInput(f *os.File) { _ = unix.IoctlSetInt(int(f.Fd()), unix.TCFLSH, unix.TCIFLUSH) }
