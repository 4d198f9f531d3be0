//go:build unix

package agent

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// processAlive reports whether pid is a live process (not a zombie).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// killPid kills pid, ignoring errors.
func killPid(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
