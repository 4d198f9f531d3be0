//go:build unix

package acp

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

var (
	protectMu   sync.Mutex
	protectDone bool
	// origStdout keeps the original os.Stdout reachable: if it were garbage
	// collected, its finalizer would close fd 1, and a later open could then
	// reuse fd 1 for an unrelated file.
	//lint:ignore U1000 only written: holding it is the point.
	origStdout *os.File
)

// ProtectStdout reserves the process's standard output for the protocol.
//
// It returns a new *os.File writing where fd 1 wrote, in non-blocking mode so
// that its writes go through the runtime poller: SetWriteDeadline works and
// Close unblocks a write stuck on a peer that stopped reading. It then points
// fd 1 at standard error (dup2), so that stray writes to fd 1 by any package,
// cgo or child process inheriting it land on stderr instead of corrupting the
// protocol stream, and sets os.Stdout to os.Stderr.
//
// On Linux, when fd 1 is a pipe or a terminal, the returned file is a fresh
// open of /proc/self/fd/1, so non-blocking mode does not leak into the open
// file description shared with the parent (a shell's terminal, say); for
// other kinds of fd 1 (sockets, regular files) or other systems it is a dup
// of fd 1 with O_NONBLOCK set on the shared description.
//
// Call it once, early in main, before other goroutines use os.Stdout; later
// calls fail. The caller owns the returned file (pass it to NewConn, which
// closes it on Close).
func ProtectStdout() (proto *os.File, err error) {
	protectMu.Lock()
	defer protectMu.Unlock()
	if protectDone {
		return nil, errors.New("acp: ProtectStdout called twice")
	}
	fd, err := reopenStdout()
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("acp: setting protocol fd non-blocking: %w", err)
	}
	if err := unix.Dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("acp: redirecting fd 1 to stderr: %w", err)
	}
	protectDone = true
	origStdout = os.Stdout
	os.Stdout = os.Stderr
	// NewFile sees O_NONBLOCK and registers the fd with the poller.
	return os.NewFile(uintptr(fd), "acp-protocol"), nil
}

// reopenStdout returns a new close-on-exec fd writing to fd 1's target.
func reopenStdout() (int, error) {
	var st unix.Stat_t
	if err := unix.Fstat(1, &st); err != nil {
		return -1, fmt.Errorf("acp: stat stdout: %w", err)
	}
	typ := st.Mode & unix.S_IFMT
	if runtime.GOOS == "linux" && (typ == unix.S_IFIFO || typ == unix.S_IFCHR) {
		fd, err := unix.Open("/proc/self/fd/1", unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
		if err == nil {
			return fd, nil
		}
		// Fall back to dup: no /proc, or a pipe whose reader is gone
		// (ENXIO; O_NONBLOCK keeps the open from waiting for one).
	}
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return -1, fmt.Errorf("acp: dup stdout: %w", err)
	}
	return fd, nil
}
