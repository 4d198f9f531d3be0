package terminal

import "golang.org/x/sys/unix"

// The termios requests of Linux.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)

// closeRangeCloexec is CLOSE_RANGE_CLOEXEC from <linux/close_range.h>.
const closeRangeCloexec = 1 << 2

// closeOnExecAll marks every descriptor >= 3 of this process close-on-exec
// (see markCloexecIn): close_range(2) where the kernel has it (5.11), else
// a walk of /proc/self/fd.
func closeOnExecAll() error {
	if err := unix.CloseRange(3, ^uint(0), closeRangeCloexec); err == nil {
		return nil
	}
	return markCloexecIn("/proc/self/fd")
}
