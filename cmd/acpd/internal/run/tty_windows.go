//go:build windows

package run

import (
	"os"

	"golang.org/x/sys/windows"
)

// flushInput discards what was typed on the console f and not read yet.
func flushInput(f *os.File) { _ = windows.FlushConsoleInputBuffer(windows.Handle(f.Fd())) }

// cbreak turns off line input and echo on the console (keeping Ctrl-C
// processing) and returns the function that restores it.
func cbreak(tty *ttyReader) func() {
	h := windows.Handle(tty.f.Fd())
	var old uint32
	if windows.GetConsoleMode(h, &old) != nil {
		return func() {}
	}
	if windows.SetConsoleMode(h, old&^(windows.ENABLE_LINE_INPUT|windows.ENABLE_ECHO_INPUT)) != nil {
		return func() {}
	}
	return func() { _ = windows.SetConsoleMode(h, old) }
}
