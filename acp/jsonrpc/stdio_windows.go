//go:build windows

package jsonrpc

import (
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// protectStdout duplicates the standard output handle and points
// STD_OUTPUT_HANDLE at standard error (see ProtectStdout).
func protectStdout() (*os.File, error) {
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
	return os.NewFile(uintptr(dup), "acp-protocol"), nil
}
