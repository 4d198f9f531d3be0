package files

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// tempFiles lists the atomic-write temp files in dir.
func tempFiles(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.Contains(e.Name(), tempMarker) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteFileAtomicReplacesContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.txt")
	for _, content := range []string{"one", "", "three\n"} {
		if err := WriteFileAtomic(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := readString(t, p); got != content {
			t.Fatalf("content = %q, want %q", got, content)
		}
	}
	if left := tempFiles(t, dir); len(left) != 0 {
		t.Errorf("temp files left: %q", left)
	}
}

func TestWriteFileAtomicKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "script.sh")
	mustWrite(t, p, "#!/bin/sh\n")
	for _, mode := range []os.FileMode{0o755, 0o600, 0o640} {
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileAtomic(p, []byte("#!/bin/sh\necho hi\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("mode = %v, want %v", fi.Mode().Perm(), mode)
		}
	}
}

func TestWriteFileAtomicThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	link := filepath.Join(dir, "link")
	mustWrite(t, target, "old")
	mustSymlink(t, "target", link)
	if err := WriteFileAtomic(link, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link replaced: %v, %v", fi, err)
	}
	if got := readString(t, target); got != "new" {
		t.Errorf("target = %q", got)
	}
}

func TestWriteFileAtomicErrors(t *testing.T) {
	dir := t.TempDir()
	mustMkdir(t, filepath.Join(dir, "sub"))
	for _, p := range []string{
		filepath.Join(dir, "a\x00b"),
		filepath.Join(dir, "sub"),
		filepath.Join(dir, "missing", "f"),
		dir + "/",
	} {
		if err := WriteFileAtomic(p, []byte("x"), 0o644); err == nil {
			t.Errorf("WriteFileAtomic(%q) succeeded", p)
		}
	}
	if left := tempFiles(t, dir); len(left) != 0 {
		t.Errorf("temp files left: %q", left)
	}
}

func TestWriteFileAtomicLongName(t *testing.T) {
	dir := t.TempDir()
	name := strings.Repeat("é", 127) // 254 bytes: the temp name must be shortened
	if err := WriteFileAtomic(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, filepath.Join(dir, name)); got != "x" {
		t.Errorf("content = %q", got)
	}
}

func TestWriteFileAtomicSweep(t *testing.T) {
	dir := t.TempDir()
	const deadPID = 1 << 30 // above PID_MAX_LIMIT: never a live process
	old := time.Now().Add(-2 * staleTempAge)
	files := map[string]bool{ // name → swept
		fmt.Sprintf(".a%s%d-00", tempMarker, deadPID):      true,  // dead creator
		fmt.Sprintf(".b%s%d-00", tempMarker, os.Getpid()):  true,  // ours, not in flight
		fmt.Sprintf(".c%s%d-00", tempMarker, os.Getppid()): false, // live creator
		fmt.Sprintf(".d%s%d-00", tempMarker, os.Getpid()):  false, // ours, in flight
		".e" + tempMarker + "foreign":                      false, // unknown creator, young
		".f" + tempMarker + "foreign-old":                  true,  // unknown creator, old
		"g" + tempMarker + "1-00":                          false, // not a dot file
		".h.txt":                                           false,
	}
	for name := range files {
		mustWrite(t, filepath.Join(dir, name), "partial")
	}
	if err := os.Chtimes(filepath.Join(dir, ".f"+tempMarker+"foreign-old"), old, old); err != nil {
		t.Fatal(err)
	}
	dirLike := fmt.Sprintf(".i%s%d-00", tempMarker, deadPID)
	mustMkdir(t, filepath.Join(dir, dirLike))
	files[dirLike] = false // directories are never swept

	busy := fmt.Sprintf(".d%s%d-00", tempMarker, os.Getpid())
	defer holdInflight(busy)()

	if err := WriteFileAtomic(filepath.Join(dir, "trigger"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, swept := range files {
		_, err := os.Lstat(filepath.Join(dir, name))
		if gone := os.IsNotExist(err); gone != swept {
			t.Errorf("%s: swept = %v, want %v (err %v)", name, gone, swept, err)
		}
	}
}

// TestWriteFileAtomicConcurrent has several goroutines write the same file
// and others in the same directory: sweeps must not remove the temp files
// of writes in flight, and the result is always one complete content.
func TestWriteFileAtomicConcurrent(t *testing.T) {
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared")
	const writers, rounds = 4, 25
	contents := make([][]byte, writers)
	for i := range contents {
		contents[i] = bytes.Repeat([]byte{byte('a' + i)}, 64<<10)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds*2)
	for i := range writers {
		wg.Go(func() {
			own := filepath.Join(dir, "own"+strconv.Itoa(i))
			for range rounds {
				errs <- WriteFileAtomic(shared, contents[i], 0o644)
				errs <- WriteFileAtomic(own, contents[i], 0o644)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(shared)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(contents, func(c []byte) bool { return bytes.Equal(c, got) }) {
		t.Errorf("shared file is not one writer's content (len %d)", len(got))
	}
	if left := tempFiles(t, dir); len(left) != 0 {
		t.Errorf("temp files left: %q", left)
	}
}

func TestWriteFileAtomicRespectsReadOnly(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write read-only files") // Windows answers -1
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "ro")
	mustWrite(t, p, "keep")
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(p, []byte("x"), 0o644); !os.IsPermission(err) {
		t.Fatalf("WriteFileAtomic(read-only) = %v, want permission error", err)
	}
	if got := readString(t, p); got != "keep" {
		t.Errorf("content = %q", got)
	}
	if left := tempFiles(t, dir); len(left) != 0 {
		t.Errorf("temp files left: %q", left)
	}
}
