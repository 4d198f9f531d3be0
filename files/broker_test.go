package files

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func wantStale(t *testing.T, err error, reason string) {
	t.Helper()
	var se *StaleError
	if !errors.As(err, &se) {
		t.Fatalf("error = %v, want *StaleError", err)
	}
	if !strings.Contains(se.Reason, reason) {
		t.Errorf("Reason = %q, want it to contain %q", se.Reason, reason)
	}
	if !strings.Contains(se.Error(), "read the file again") {
		t.Errorf("message %q does not tell the model to read again", se.Error())
	}
}

func TestStaleWriteAfterExternalSave(t *testing.T) {
	f, b := newBrokerFixture(t)
	ctx := context.Background()
	p := filepath.Join(f.root, "f.go")
	mustWrite(t, p, "v0")
	for i := range *staleLoops {
		mustRead(t, b, p)
		external := fmt.Sprintf("external %d", i)
		externalSave(t, p, external)
		_, _, err := b.WriteFile(ctx, p, "agent")
		wantStale(t, err, "")
		if got := readString(t, p); got != external {
			t.Fatalf("stale write modified the file: %q", got)
		}
	}
}

func TestStaleNeverReadExistingFile(t *testing.T) {
	f, b := newBrokerFixture(t)
	p := filepath.Join(f.root, "f.go")
	mustWrite(t, p, "user content")
	_, existed, err := b.WriteFile(context.Background(), p, "agent")
	wantStale(t, err, "not been read")
	if !existed {
		t.Error("existed = false")
	}
	if got := readString(t, p); got != "user content" {
		t.Errorf("file modified: %q", got)
	}
}

func TestWriteNewFileAndRewrite(t *testing.T) {
	f, b := newBrokerFixture(t)
	ctx := context.Background()
	p := "pkg/sub/new.go" // parents are created
	prev, existed, err := b.WriteFile(ctx, p, "one")
	if err != nil || existed || prev != "" {
		t.Fatalf("WriteFile(new) = %q, %v, %v", prev, existed, err)
	}
	real := filepath.Join(f.root, "pkg", "sub", "new.go")
	if got := readString(t, real); got != "one" {
		t.Fatalf("content = %q", got)
	}
	// Our own write updates the recorded hash: no re-read needed.
	prev, existed, err = b.WriteFile(ctx, p, "two")
	if err != nil || !existed || prev != "one" {
		t.Fatalf("second WriteFile = %q, %v, %v", prev, existed, err)
	}
	if fi, err := os.Stat(real); err != nil || fi.Mode().Perm()&0o600 != 0o600 {
		t.Errorf("mode: %v, %v", fi, err)
	}
}

func TestReadWriteWrite(t *testing.T) {
	f, b := newBrokerFixture(t)
	ctx := context.Background()
	p := filepath.Join(f.extra, "f.txt") // additional roots behave the same
	mustWrite(t, p, "orig")
	if got, err := b.ReadFile(ctx, p); err != nil || got != "orig" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	for i, content := range []string{"first", "second", "third"} {
		prev, existed, err := b.WriteFile(ctx, p, content)
		want := []string{"orig", "first", "second"}[i]
		if err != nil || !existed || prev != want {
			t.Fatalf("WriteFile #%d = %q, %v, %v; want prev %q", i, prev, existed, err, want)
		}
	}
	if got := readString(t, p); got != "third" {
		t.Errorf("content = %q", got)
	}
}

func TestWriteAfterPartialRead(t *testing.T) {
	f, b := newBrokerFixture(t)
	ctx := context.Background()
	p := filepath.Join(f.root, "big.txt")
	var sb strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&sb, "line %d\n", i+1)
	}
	mustWrite(t, p, sb.String())
	if _, err := b.ReadLines(ctx, p, 100, 10); err != nil {
		t.Fatal(err)
	}
	// The windowed read hashed the whole file: the write is not stale.
	prev, _, err := b.WriteFile(ctx, p, "short")
	if err != nil || prev != sb.String() {
		t.Fatalf("WriteFile after ReadLines = %v (prev len %d)", err, len(prev))
	}
	// And a change after a windowed read is caught.
	if _, err := b.ReadLines(ctx, p, 1, 1); err != nil {
		t.Fatal(err)
	}
	externalSave(t, p, "changed")
	_, _, err = b.WriteFile(ctx, p, "agent")
	wantStale(t, err, "")
}

func TestForget(t *testing.T) {
	_, b, p := newReadFile(t, "f", "x")
	ctx := context.Background()
	b.Forget("f")
	_, _, err := b.WriteFile(ctx, p, "y")
	wantStale(t, err, "not been read")
}

func TestReadFileErrors(t *testing.T) {
	f, b := newBrokerFixture(t)
	ctx := context.Background()
	mustMkdir(t, filepath.Join(f.root, "dir"))
	big := filepath.Join(f.root, "huge")
	fh, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Truncate(MaxFileSize + 1); err != nil { // sparse
		t.Fatal(err)
	}
	fh.Close()

	if _, err := b.ReadFile(ctx, "missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, err := b.ReadFile(ctx, "dir"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("dir: %v", err)
	}
	if _, err := b.ReadFile(ctx, "huge"); !errors.Is(err, ErrTooLarge) {
		t.Errorf("huge: %v", err)
	}
	if _, _, err := b.WriteFile(ctx, ".", "x"); err == nil {
		t.Error("WriteFile(root) succeeded")
	}
	if _, _, err := b.WriteFile(ctx, "dir", "x"); err == nil {
		t.Error("WriteFile(dir) succeeded")
	}
	if _, err := b.ReadFile(ctx, "a\x00b"); !errors.Is(err, ErrNULInPath) {
		t.Errorf("NUL: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	mustWrite(t, filepath.Join(f.root, "ok"), "ok")
	if _, err := b.ReadFile(cancelled, "ok"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ReadFile: %v", err)
	}
	if _, _, err := b.WriteFile(cancelled, "ok2", "x"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled WriteFile: %v", err)
	}
}

// TestConcurrentBrokerUse hammers one broker from several goroutines; each
// write either succeeds or is reported stale, and the race detector checks
// the locking.
func TestConcurrentBrokerUse(t *testing.T) {
	f, b := newBrokerFixture(t)
	ctx := context.Background()
	shared := filepath.Join(f.root, "shared")
	mustWrite(t, shared, "start")
	var wg sync.WaitGroup
	errs := make(chan error, 8*20)
	for i := range 8 {
		wg.Go(func() {
			own := fmt.Sprintf("own%d", i)
			for j := range 20 {
				if _, err := b.ReadFile(ctx, shared); err != nil {
					errs <- err
					return
				}
				_, _, err := b.WriteFile(ctx, shared, fmt.Sprintf("%d-%d", i, j))
				var se *StaleError
				if err != nil && !errors.As(err, &se) {
					errs <- err
					return
				}
				if _, _, err := b.WriteFile(ctx, own, fmt.Sprint(j)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range 8 {
		if got := readString(t, filepath.Join(f.root, fmt.Sprintf("own%d", i))); got != "19" {
			t.Errorf("own%d = %q", i, got)
		}
	}
}

// TestSymlinkSwapDuringWrite swaps root/link between a directory and a
// symlink to the outside while the broker writes and reads through it: no
// file may ever land outside, and the outside secret is never returned.
func TestSymlinkSwapDuringWrite(t *testing.T) {
	f := newFixture(t)
	secret := filepath.Join(f.outside, "secret")
	mustWrite(t, secret, "secret")
	link := filepath.Join(f.root, "link")
	b := newTestBroker(t, BrokerOptions{Roots: f.roots})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ctx.Err() == nil; i++ {
			os.RemoveAll(link) // a symlink is removed, not its target
			os.Mkdir(link, 0o755)
			os.WriteFile(filepath.Join(link, "secret"), []byte("decoy"), 0o644)
			os.RemoveAll(link)
			target := f.outside
			if i%2 == 1 {
				target = "../outside"
			}
			os.Symlink(target, link)
		}
	})
	written := 0
	for i := range *swapLoops {
		if _, _, err := b.WriteFile(ctx, "link/f", fmt.Sprint(i)); err == nil {
			written++
		}
		if got, err := b.ReadFile(ctx, "link/secret"); err == nil && got == "secret" {
			t.Errorf("ReadFile followed the swapped symlink out of the root")
		}
		if got, err := b.ReadLines(ctx, filepath.Join(f.root, "link", "secret"), 1, 1); err == nil && len(got.Lines) == 1 && got.Lines[0] == "secret" {
			t.Errorf("ReadLines followed the swapped symlink out of the root")
		}
	}
	cancel()
	wg.Wait()
	ents, err := os.ReadDir(f.outside)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "secret" {
			t.Errorf("file written outside the root: %s", e.Name())
		}
	}
	if got := readString(t, secret); got != "secret" {
		t.Errorf("outside secret modified: %q", got)
	}
	t.Logf("%d of %d writes landed (inside the root)", written, *swapLoops)
}

func TestEditFileStaleAndApply(t *testing.T) {
	dir := t.TempDir()
	roots, err := NewRoots(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBroker(BrokerOptions{Roots: roots})
	defer b.Close()
	ctx := context.Background()
	p := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(p, []byte("hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	up := func(old string) (string, error) { return strings.ToUpper(old), nil }
	if _, _, err := b.EditFile(ctx, p, up); !errors.As(err, new(*StaleError)) {
		t.Fatalf("edit of an unread file: got %v, want StaleError", err)
	}
	mustRead(t, b, p)
	prev, next, err := b.EditFile(ctx, p, up)
	if err != nil || prev != "hello world\n" || next != "HELLO WORLD\n" {
		t.Fatalf("EditFile = %q, %q, %v", prev, next, err)
	}
	if got, _ := os.ReadFile(p); string(got) != "HELLO WORLD\n" {
		t.Fatalf("disk has %q", got)
	}
	// Our own edit keeps the view current; an edit error writes nothing.
	boom := errors.New("boom")
	if _, _, err := b.EditFile(ctx, p, func(string) (string, error) { return "", boom }); !errors.Is(err, boom) {
		t.Fatalf("edit error: got %v", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "HELLO WORLD\n" {
		t.Fatalf("disk changed after a failed edit: %q", got)
	}
	if _, _, err := b.EditFile(ctx, filepath.Join(dir, "missing.txt"), up); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("edit of a missing file: got %v", err)
	}
}
