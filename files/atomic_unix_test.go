//go:build unix

package files

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

const helperEnv = "ACPD_FS_ATOMIC_HELPER_PATH"

// crashContents returns the two 20 MB contents the helper alternates.
func crashContents() (a, b []byte) {
	return bytes.Repeat([]byte("A"), 20<<20), bytes.Repeat([]byte("B"), 20<<20)
}

// TestHelperProcess is not a test: TestKillDuringAtomicWrite runs the test
// binary with this test selected and helperEnv set. It atomically rewrites
// the file forever, alternating two contents, prints "ready" after the
// first complete write, and exits when its stdin closes (so it cannot
// outlive the parent).
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("helper process for TestKillDuringAtomicWrite")
	}
	go func() {
		buf := make([]byte, 1)
		os.Stdin.Read(buf)
		os.Exit(0)
	}()
	a, b := crashContents()
	for i := 0; ; i++ {
		data := a
		if i%2 == 1 {
			data = b
		}
		if err := WriteFileAtomic(path, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(2)
		}
		if i == 0 {
			fmt.Println("ready")
		}
	}
}

func TestKillDuringAtomicWrite(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "big")
	a, b := crashContents()
	midWrite := 0
	for i := range *crashLoops {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), helperEnv+"="+target)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := false
		for sc := bufio.NewScanner(stdout); sc.Scan(); {
			if sc.Text() == "ready" {
				ready = true
				break
			}
		}
		if !ready {
			stdin.Close()
			cmd.Wait()
			t.Fatalf("helper did not become ready: %s", stderr.String())
		}
		time.Sleep(rand.N(150 * time.Millisecond))
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		stdin.Close()
		cmd.Wait() // reaps the helper: its pid is dead from now on

		got, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("kill %d: file is neither A nor B (len %d)", i, len(got))
		}
		if len(tempFiles(t, dir)) > 0 {
			midWrite++
		}
		if err := WriteFileAtomic(filepath.Join(dir, "other"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if left := tempFiles(t, dir); len(left) != 0 {
			t.Fatalf("kill %d: temp files not swept: %q", i, left)
		}
	}
	t.Logf("%d of %d kills interrupted a write in progress", midWrite, *crashLoops)
}

func TestWriteFileAtomicNewFileMode(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	dir := t.TempDir()
	p := filepath.Join(dir, "new")
	if err := WriteFileAtomic(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 (0644 minus umask 027)", fi.Mode().Perm())
	}
}

func TestWriteFileAtomicKeepsSpecialBits(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	mustWrite(t, p, "x")
	if err := os.Chmod(p, 0o755|os.ModeSetgid); err != nil {
		t.Skip("cannot set setgid here:", err)
	}
	if fi, _ := os.Stat(p); fi.Mode()&os.ModeSetgid == 0 {
		t.Skip("filesystem dropped setgid")
	}
	if err := WriteFileAtomic(p, []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&(os.ModePerm|os.ModeSetgid) != 0o755|os.ModeSetgid {
		t.Errorf("mode = %v", fi.Mode())
	}
}
