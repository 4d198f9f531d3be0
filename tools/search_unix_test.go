//go:build unix

package tools

import (
	"syscall"
	"testing"

	"acpd/permissions"
)

// grep refuses a FIFO named as its path (reading it would block) and
// skips FIFOs in a tree.
func TestGrepFIFO(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAsk)
	e.write("a.txt", "hello\n")
	if err := syscall.Mkfifo(e.path("pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustFail(t, e.run(t.Context(), "grep", `{"pattern":"x","path":"pipe"}`), "pipe is not a regular file")
	if got := mustOK(t, e.run(t.Context(), "grep", `{"pattern":"hello"}`)); got != "a.txt:1: hello\n" {
		t.Fatalf("tree with a FIFO = %q", got)
	}
	// read_file does not block on it either.
	if res := e.run(t.Context(), "read_file", `{"path":"pipe"}`); !res.IsError {
		t.Fatalf("read_file of a FIFO: %+v", res)
	}
}
