//go:build !unix

package mcpclient

import (
	"os"
	"os/exec"
)

// Without process groups or SIGTERM, both steps of the shutdown ladder kill.
var sigTerm, sigKill = os.Kill, os.Kill

func setGroup(*exec.Cmd) {}

func killGroup(*exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
