//go:build unix

package files

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenRegularRefusesSpecialFiles: FIFOs (which would block), sockets,
// devices and directories are refused with ErrNotRegular; regular files open.
func TestOpenRegularRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, p := range []string{fifo, sock, os.DevNull, dir} {
		f, err := OpenRegular(p)
		if err == nil {
			f.Close()
		}
		if p == sock {
			// Opening a socket fails (ENXIO) before the type check: refused too.
			if err == nil {
				t.Errorf("%s opened", p)
			}
			continue
		}
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("OpenRegular(%s) = %v, want ErrNotRegular", p, err)
		}
	}
	reg := filepath.Join(dir, "f")
	if err := os.WriteFile(reg, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenRegular(reg)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
