package atomicfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"acpd/internal/filelock"
)

// entries returns the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFileCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	if err := WriteFile(p, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "two" {
		t.Fatalf("content %q, %v", b, err)
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(p)
		if fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %v, want exactly 0644", fi.Mode().Perm())
		}
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("directory holds %q, want only f.json", names)
	}
}

func TestWriteFileModeIgnoresUmask(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no permission bits")
	}
	p := filepath.Join(t.TempDir(), "f")
	if err := WriteFile(p, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o666 || fi.Size() != 0 {
		t.Errorf("mode %v size %d, %v", fi.Mode().Perm(), fi.Size(), err)
	}
}

func TestWriteFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(sub, []byte("x"), 0o600); err == nil {
		t.Fatal("wrote over a directory")
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), []byte("x"), 0o600); err == nil {
		t.Fatal("wrote into a missing directory")
	}
	if names := entries(t, dir); len(names) != 1 || names[0] != "sub" {
		t.Errorf("temp files left: %q", names)
	}
}

func TestWriteFileReplacesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks:", err)
	}
	if err := WriteFile(link, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("link not replaced by a regular file: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Errorf("target changed to %q", b)
	}
}

// TestWriteFileReadersSeeWholeContent reads while writers replace the file:
// every read sees one complete version, and no replacement fails. Writers
// and readers follow the protocol of acpd's own files: writes under the
// exclusive lock, reads under ReaderLock (which takes it shared only where
// readers would otherwise block a replacement: Windows).
func TestWriteFileReadersSeeWholeContent(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	lock := p + ".lock"
	a, b := bytes.Repeat([]byte("a"), 1<<16), bytes.Repeat([]byte("b"), 1<<16)
	if err := WriteFile(p, a, 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		defer close(stop)
		for i := 0; i < 100; i++ {
			data := a
			if i%2 == 1 {
				data = b
			}
			unlock, err := filelock.Lock(lock, 10*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			err = WriteFile(p, data, 0o600)
			unlock()
			if err != nil {
				t.Error(err)
				return
			}
		}
	})
	for done := false; !done; {
		select {
		case <-stop:
			done = true
		default:
		}
		unlock, err := ReaderLock(lock, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(p)
		unlock()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
			t.Fatalf("read a mixed or partial file of %d bytes", len(got))
		}
	}
	wg.Wait()
}

func TestRetryRenameStopsAtOtherErrors(t *testing.T) {
	calls := 0
	boom := errors.New("boom")
	if err := RetryRename(func() error { calls++; return boom }); err != boom || calls != 1 {
		t.Errorf("RetryRename = %v after %d calls, want boom after 1", err, calls)
	}
}

func TestSyncDirAndRoot(t *testing.T) {
	dir := t.TempDir()
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := SyncRoot(r); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(filepath.Join(dir, "missing")); err == nil && runtime.GOOS != "windows" {
		t.Error("SyncDir of a missing directory succeeded")
	} else if err != nil && !strings.Contains(err.Error(), "missing") {
		t.Errorf("error does not name the directory: %v", err)
	}
}

func TestOpenMissing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "missing"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing file: %v, want fs.ErrNotExist", err)
	}
}
