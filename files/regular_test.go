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

// TestOpenEntryInRefusesSpecialFiles: a FIFO (which would block) and a
// device are refused with ErrNotRegular; directories and regular files open.
func TestOpenEntryInRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.DevNull, filepath.Join(dir, "null")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, name := range []string{"fifo"} {
		if f, err := OpenEntryIn(root, name); !errors.Is(err, ErrNotRegular) {
			if err == nil {
				f.Close()
			}
			t.Errorf("OpenEntryIn(%s) = %v, want ErrNotRegular", name, err)
		}
	}
	for _, name := range []string{".", "sub", "f"} {
		f, err := OpenEntryIn(root, name)
		if err != nil {
			t.Errorf("OpenEntryIn(%s): %v", name, err)
			continue
		}
		f.Close()
	}
}
