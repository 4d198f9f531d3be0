//go:build !unix

package client

import (
	"os"
	"os/exec"
	"syscall"
)

const (
	sigTerm = syscall.Signal(0xf)
	sigKill = syscall.Signal(0x9)
)

// setGroup does nothing where process groups are not available.
func setGroup(cmd *exec.Cmd) {}

// signalGroup kills the process itself: there is no group to signal.
func signalGroup(pid int, sig syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

func groupAlive(pid int) bool { return false }
