//go:build unix

package testproc

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Exists reports whether pid names a process, zombies included.
func Exists(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// Alive reports whether pid is a live process (not a zombie). Without
// /proc (macOS, the BSDs) it cannot tell a zombie and is [Exists].
func Alive(pid int) bool {
	if !Exists(pid) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if _, err := os.Stat("/proc/self/stat"); err != nil {
			return true // no /proc
		}
		return false
	}
	// The state follows the command name in parentheses.
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// Kill kills pid, ignoring errors.
func Kill(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }

// KillGroup kills process group pgid, ignoring errors.
func KillGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
