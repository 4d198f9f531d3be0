package main

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// hardenProcess runs at start-up, before any child exists:
//
//   - Every descriptor >= 3 that acpd inherited becomes close-on-exec, so
//     no child (MCP servers, model plug-ins, commands) inherits what the
//     editor leaked to acpd; os/exec clears the flag on the descriptors it
//     passes on purpose.
//   - acpd becomes non-dumpable: processes of the same user (the model's
//     commands among them) can no longer read /proc/<acpd>/environ or
//     /proc/<acpd>/mem, nor ptrace acpd. This does not stop root; under
//     root only the sandbox does (Landlock denies ptrace-mode access to
//     processes outside it, and its user namespace holds no capability over
//     acpd). Children are dumpable again after their exec.
func hardenProcess() error {
	if err := closeOnExecFrom3(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE): %w", err)
	}
	return nil
}

// closeRangeCloexec is CLOSE_RANGE_CLOEXEC from <linux/close_range.h>.
const closeRangeCloexec = 1 << 2

func closeOnExecFrom3() error {
	if err := unix.CloseRange(3, ^uint(0), closeRangeCloexec); err == nil {
		return nil
	}
	// Kernels before 5.11: walk /proc/self/fd.
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("mark descriptors close-on-exec: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("mark descriptors close-on-exec: %w", err)
	}
	for _, n := range names {
		if fd, err := strconv.Atoi(n); err == nil && fd >= 3 {
			unix.CloseOnExec(fd)
		}
	}
	return nil
}
