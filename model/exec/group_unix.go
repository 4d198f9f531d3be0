//go:build unix

package exec

import (
	"os"
	osexec "os/exec"
	"syscall"
)

// setProcessGroup makes the plug-in the leader of a new process group, so
// that stopping it stops what it started.
func setProcessGroup(cmd *osexec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminateGroup asks the plug-in's process group to stop.
func terminateGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGTERM) }

// killGroup kills the plug-in's process group. Errors (the group is gone)
// are ignored.
func killGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }
