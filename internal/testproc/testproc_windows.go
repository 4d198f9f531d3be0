//go:build windows

package testproc

import (
	"os"

	"golang.org/x/sys/windows"
)

// Exists reports whether pid names a process that has not exited.
func Exists(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

// Alive is Exists: Windows has no zombies.
func Alive(pid int) bool { return Exists(pid) }

// Kill kills pid, ignoring errors.
func Kill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// KillGroup kills the process pgid (Windows has no process groups to
// signal; job objects are acpd's business).
func KillGroup(pgid int) { Kill(pgid) }
