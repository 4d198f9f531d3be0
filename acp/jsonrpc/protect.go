//go:build unix || windows

package jsonrpc

import (
	"errors"
	"os"
	"sync"
)

var (
	protectMu   sync.Mutex
	protectDone bool
	// origStdout keeps the original os.Stdout reachable: if it were garbage
	// collected, its finalizer would close fd 1 (the standard output
	// handle), and a later open could then reuse it for an unrelated file.
	//lint:ignore U1000 only written: holding it is the point.
	origStdout *os.File
)

// ProtectStdout reserves the process's standard output for the protocol.
//
// It returns a new *os.File writing where standard output wrote, then
// points the process's standard output at standard error and sets
// os.Stdout to os.Stderr, so that stray writes land on stderr instead of
// corrupting the protocol stream.
//
// On Unix the returned file writes where fd 1 wrote, in non-blocking mode so
// that its writes go through the runtime poller: SetWriteDeadline works and
// Close unblocks a write stuck on a peer that stopped reading. fd 1 is then
// pointed at standard error (dup2), so that stray writes to fd 1 by any
// package, cgo or child process inheriting it land on stderr. On Linux,
// when fd 1 is a pipe or a terminal, the returned file is a fresh open of
// /proc/self/fd/1, so non-blocking mode does not leak into the open file
// description shared with the parent (a shell's terminal, say); for other
// kinds of fd 1 (sockets, regular files) or other systems it is a dup of
// fd 1 with O_NONBLOCK set on the shared description.
//
// On Windows the returned file is a duplicate of the standard output
// handle, and STD_OUTPUT_HANDLE (what children inheriting standard handles
// get) is pointed at standard error. Windows pipes have no write
// deadlines; Close still unblocks a write stuck on a peer that stopped
// reading (the runtime cancels pending pipe I/O on Close).
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
	proto, err = protectStdout()
	if err != nil {
		return nil, err
	}
	protectDone = true
	origStdout = os.Stdout
	os.Stdout = os.Stderr
	return proto, nil
}
