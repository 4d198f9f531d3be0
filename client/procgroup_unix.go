//go:build unix

package client

import (
	"errors"
	"os/exec"
	"syscall"
)

// These stand in for internal/procgroup until it exists.

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// setGroup makes the command the leader of a new process group.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group led by pid; a group that is
// gone is no error.
func signalGroup(pid int, sig syscall.Signal) {
	_ = syscall.Kill(-pid, sig)
}

// groupAlive reports whether any process of the group led by pid exists.
func groupAlive(pid int) bool {
	err := syscall.Kill(-pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
