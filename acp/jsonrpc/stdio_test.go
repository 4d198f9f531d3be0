//go:build unix

package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestProtectStdout(t *testing.T) {
	for _, kind := range []string{"pipe", "socket"} {
		t.Run(kind, func(t *testing.T) {
			var parentEnd, childEnd *os.File
			switch kind {
			case "pipe":
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				parentEnd, childEnd = r, w
			case "socket":
				fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
				if err != nil {
					t.Fatal(err)
				}
				unix.CloseOnExec(fds[0])
				unix.CloseOnExec(fds[1])
				parentEnd, childEnd = os.NewFile(uintptr(fds[0]), "parent"), os.NewFile(uintptr(fds[1]), "child")
			}
			defer parentEnd.Close()
			cmd, stderr := startProtectChild(t, kind, childEnd)
			// The child fills the stream to prove its write deadline works,
			// so read only after it has exited.
			err := cmd.Wait()
			if err != nil {
				t.Fatalf("child failed: %v\nstderr:\n%s", err, stderr.String())
			}
			out, err := io.ReadAll(parentEnd)
			if err != nil {
				t.Fatal(err)
			}
			checkProtected(t, out, stderr.String(), "stray via os.Stdout", "stray via fd 1")
		})
	}
}

func runProtectStdoutChild(kind string) error {
	// Keep a descriptor on fd 1's original open file description.
	orig, err := unix.Dup(1)
	if err != nil {
		return err
	}
	defer unix.Close(orig)

	proto, err := ProtectStdout()
	if err != nil {
		return err
	}
	defer proto.Close()
	if _, err := ProtectStdout(); err == nil {
		return errors.New("second ProtectStdout succeeded")
	}
	if os.Stdout != os.Stderr {
		return errors.New("os.Stdout does not point at stderr")
	}
	rc, err := proto.SyscallConn()
	if err != nil {
		return err
	}
	protoNonblocking := false
	if err := rc.Control(func(fd uintptr) { protoNonblocking = nonblocking(int(fd)) }); err != nil {
		return err
	}
	if !protoNonblocking {
		return errors.New("protocol fd is blocking")
	}
	if kind == "pipe" && runtime.GOOS == "linux" && nonblocking(orig) {
		return errors.New("O_NONBLOCK leaked into the inherited pipe description")
	}

	fmt.Fprint(os.Stdout, "stray via os.Stdout\n")
	if _, err := unix.Write(1, []byte("stray via fd 1\n")); err != nil {
		return err
	}
	if _, err := proto.WriteString(protoLine); err != nil {
		return err
	}

	// Nobody reads yet: a big write stops at its deadline.
	big := bytes.Repeat([]byte("x"), 16<<20)
	if err := proto.SetWriteDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		return fmt.Errorf("SetWriteDeadline: %w", err)
	}
	if _, err := proto.Write(big); !errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("write past deadline = %v", err)
	}
	// And Close releases a write that is stuck.
	if err := proto.SetWriteDeadline(time.Time{}); err != nil {
		return err
	}
	werr := make(chan error, 1)
	go func() {
		_, err := proto.Write(big)
		werr <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the write block; correctness does not depend on it
	if err := proto.Close(); err != nil {
		return err
	}
	if err := <-werr; !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("stuck write after Close = %v", err)
	}
	return nil
}

func nonblocking(fd int) bool {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	return err == nil && fl&unix.O_NONBLOCK != 0
}
