//go:build unix

package main

import (
	"errors"
	"syscall"
)

// pidExists reports whether pid names a process (zombies included).
func pidExists(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// killPid kills pid, ignoring errors.
func killPid(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

// killGroup kills process group pgid, ignoring errors.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
