//go:build unix

package run

import "golang.org/x/sys/unix"

// cbreak turns off line buffering and echo on the terminal (keeping
// signals and output processing) and returns the function that restores it.
func cbreak(tty *ttyReader) func() {
	fd := int(tty.f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return func() {}
	}
	raw := *old
	raw.Lflag &^= unix.ICANON | unix.ECHO
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if unix.IoctlSetTermios(fd, ioctlSetTermios, &raw) != nil {
		return func() {}
	}
	return func() { _ = unix.IoctlSetTermios(fd, ioctlSetTermios, old) }
}
