//go:build !unix && !windows

package procgroup

import "os/exec"

// sysGroup is only the child where there are neither process groups nor
// job objects.
type sysGroup struct{}

func prepare(*exec.Cmd) {}

func (*sysGroup) adopt(*exec.Cmd) error { return nil }

func (*sysGroup) terminate(cmd *exec.Cmd) error { return cmd.Process.Kill() }

func (*sysGroup) kill(cmd *exec.Cmd) error { _ = cmd.Process.Kill(); return nil }

func (*sysGroup) alive(cmd *exec.Cmd) bool { return cmd.ProcessState == nil }

func (*sysGroup) close() {}
