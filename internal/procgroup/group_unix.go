//go:build unix

package procgroup

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
)

// sysGroup is the process group whose id is the child's pid.
type sysGroup struct{}

func prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if !cmd.SysProcAttr.Setsid {
		cmd.SysProcAttr.Setpgid = true
		cmd.SysProcAttr.Pgid = 0
	}
}

func (*sysGroup) adopt(*exec.Cmd) error { return nil }

func (*sysGroup) terminate(cmd *exec.Cmd) error {
	err := signalGroup(cmd.Process.Pid, syscall.SIGTERM)
	_ = signalGroup(cmd.Process.Pid, syscall.SIGCONT)
	return err
}

func (*sysGroup) kill(cmd *exec.Cmd) error { return signalGroup(cmd.Process.Pid, syscall.SIGKILL) }

func (*sysGroup) alive(cmd *exec.Cmd) bool {
	pgid := cmd.Process.Pid
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	alive, ok := liveMember(pgid)
	if !ok {
		return true // cannot tell; trust kill(2)
	}
	return alive
}

func (*sysGroup) close() {}

// signalGroup sends sig to process group pgid; a group that no longer exists is
// not an error.
func signalGroup(pgid int, sig syscall.Signal) error {
	err := syscall.Kill(-pgid, sig)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return fmt.Errorf("procgroup: signal process group %d: %w", pgid, err)
}
