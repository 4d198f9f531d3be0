//go:build windows

package acp

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/windows"
)

var (
	protectMu   sync.Mutex
	protectDone bool
	// origStdout keeps the original os.Stdout reachable so that its
	// finalizer never closes the standard output handle.
	//lint:ignore U1000 only written: holding it is the point.
	origStdout *os.File
)

// ProtectStdout reserves the process's standard output for the protocol.
//
// It returns a new *os.File on a duplicate of the standard output handle,
// then points the process's standard output handle (STD_OUTPUT_HANDLE, what
// children inheriting standard handles get) at standard error and sets
// os.Stdout to os.Stderr, so that stray writes land on stderr instead of
// corrupting the protocol stream.
//
// Windows pipes have no write deadlines; Close still unblocks a write stuck
// on a peer that stopped reading (the runtime cancels pending pipe I/O on
// Close). Call it once, early in main; later calls fail. The caller owns the
// returned file.
func ProtectStdout() (proto *os.File, err error) {
	protectMu.Lock()
	defer protectMu.Unlock()
	if protectDone {
		return nil, errors.New("acp: ProtectStdout called twice")
	}
	out, err := windows.GetStdHandle(windows.STD_OUTPUT_HANDLE)
	if err != nil || out == 0 || out == windows.InvalidHandle {
		return nil, fmt.Errorf("acp: no standard output handle: %v", err)
	}
	self := windows.CurrentProcess()
	var dup windows.Handle
	if err := windows.DuplicateHandle(self, out, self, &dup, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		return nil, fmt.Errorf("acp: duplicating stdout: %w", err)
	}
	errh, err := windows.GetStdHandle(windows.STD_ERROR_HANDLE)
	if err == nil && errh != 0 && errh != windows.InvalidHandle {
		err = windows.SetStdHandle(windows.STD_OUTPUT_HANDLE, errh)
	}
	if err != nil {
		windows.CloseHandle(dup)
		return nil, fmt.Errorf("acp: redirecting stdout to stderr: %w", err)
	}
	protectDone = true
	origStdout = os.Stdout
	os.Stdout = os.Stderr
	return os.NewFile(uintptr(dup), "acp-protocol"), nil
}
