//go:build !unix && !windows

package procgroup

import (
	"os"
	"os/exec"
)

// sysGroup is only the child where there are neither process groups nor
// job objects.
type sysGroup struct{}

func prepare(*exec.Cmd) {}

func (*sysGroup) adopt(int) error { return nil }

func (*sysGroup) terminate(pid int) (bool, error) { return false, nil }

func (*sysGroup) kill(pid int) error {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
	return nil
}

func (*sysGroup) alive(int) bool { return true }

func (*sysGroup) close() {}
