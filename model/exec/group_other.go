//go:build !unix

package exec

import (
	"os"
	osexec "os/exec"
)

// setProcessGroup does nothing: without process groups only the plug-in
// itself is stopped.
func setProcessGroup(*osexec.Cmd) {}

// terminateGroup stops the plug-in; there is no gentler signal.
func terminateGroup(p *os.Process) { _ = p.Kill() }

// killGroup kills the plug-in.
func killGroup(p *os.Process) { _ = p.Kill() }
