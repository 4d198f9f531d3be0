//go:build windows

package jsonrpc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

func TestProtectStdout(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd, stderr := startProtectChild(t, "pipe", w)
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child failed: %v\nstderr:\n%s", err, stderr.String())
	}
	checkProtected(t, out, stderr.String(), "stray via os.Stdout", "stray via the std handle")
}

// runProtectStdoutChild is the child's part; Windows has one kind of
// stdout, a pipe.
func runProtectStdoutChild(string) error {
	proto, err := ProtectStdout()
	if err != nil {
		return err
	}
	if _, err := ProtectStdout(); err == nil {
		return errors.New("second ProtectStdout succeeded")
	}
	if os.Stdout != os.Stderr {
		return errors.New("os.Stdout does not point at stderr")
	}
	fmt.Fprint(os.Stdout, "stray via os.Stdout\n")
	h, err := windows.GetStdHandle(windows.STD_OUTPUT_HANDLE)
	if err != nil {
		return err
	}
	var n uint32
	if err := windows.WriteFile(h, []byte("stray via the std handle\n"), &n, nil); err != nil {
		return err
	}
	if _, err := proto.WriteString(protoLine); err != nil {
		return err
	}
	// The parent reads everything, so this write completes; then Close.
	done := make(chan error, 1)
	go func() {
		_, err := proto.Write(bytes.Repeat([]byte("x"), 1<<16))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return err
		}
	case <-time.After(time.Minute):
		return errors.New("protocol write did not complete")
	}
	return proto.Close()
}
