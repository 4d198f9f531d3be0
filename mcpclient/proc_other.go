//go:build !unix

package mcpclient

import (
	"os"
	"os/exec"
)

func setGroup(*exec.Cmd) {}

func killGroup(*exec.Cmd) {}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}
