//go:build windows

package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// pidExists reports whether pid names a process that has not exited.
func pidExists(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

// killPid kills pid, ignoring errors.
func killPid(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// killGroup kills the process pgid (Windows has no process groups to
// signal; job objects are acpd's business).
func killGroup(pgid int) { killPid(pgid) }
