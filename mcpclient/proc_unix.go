//go:build unix

package mcpclient

import (
	"os"
	"os/exec"
	"syscall"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// setGroup starts cmd in its own process group so killGroup can reach the
// processes it spawns (npx, uvx and shell wrappers commonly fork the real
// server).
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills whatever is left of cmd's process group after cmd itself
// has been stopped and reaped.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.ProcessState == nil {
		return // never started, or not reaped: the group id may not be ours
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// signalGroup sends sig to cmd's process group (cmd is the group leader and
// has not been reaped yet, so the group id is still ours).
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		_ = cmd.Process.Signal(sig)
	}
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
