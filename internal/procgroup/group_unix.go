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

func (*sysGroup) adopt(int) error { return nil }

func (*sysGroup) terminate(pgid int) (bool, error) {
	err := signalGroup(pgid, syscall.SIGTERM)
	_ = signalGroup(pgid, syscall.SIGCONT)
	return err == nil, err
}

func (*sysGroup) kill(pgid int) error { return signalGroup(pgid, syscall.SIGKILL) }

func (*sysGroup) alive(pgid int) bool {
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
