package files

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"acpd/internal/atomicfile"

	"go.uber.org/goleak"
)

var (
	swapLoops  = flag.Int("fs.swaploops", 200, "iterations of the symlink-swap confinement test")
	crashLoops = flag.Int("fs.crashloops", 10, "SIGKILLs of the atomic-write helper process")
	staleLoops = flag.Int("fs.staleloops", 50, "iterations of the external-save stale-write test")
	bigFile    = flag.Int64("fs.bigfile", 64<<20, "size in bytes of the file used by BenchmarkReadLinesHugeFile")
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { removeBigFixture() }))
}

// fixture is a base directory holding two roots and an outside directory.
type fixture struct {
	base    string // real path of the temp dir
	root    string // the cwd root
	extra   string // an additional root
	outside string // not a root
	roots   *Roots
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		base:    base,
		root:    filepath.Join(base, "root"),
		extra:   filepath.Join(base, "extra"),
		outside: filepath.Join(base, "outside"),
	}
	for _, d := range []string{f.root, f.extra, f.outside} {
		mustMkdir(t, d)
	}
	if f.roots, err = NewRoots(f.root, f.extra); err != nil {
		t.Fatal(err)
	}
	return f
}

func newTestBroker(t testing.TB, opts BrokerOptions) *Broker {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	b := NewBroker(opts)
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

func mustMkdir(t testing.TB, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// newBrokerFixture returns a new fixture and a broker over its roots.
func newBrokerFixture(t testing.TB) (*fixture, *Broker) {
	t.Helper()
	f := newFixture(t)
	return f, newTestBroker(t, BrokerOptions{Roots: f.roots})
}

// newReadFile returns a new fixture, a broker over its roots and the path
// of the file name in the cwd root, which holds content and which the
// broker has read.
func newReadFile(t testing.TB, name, content string) (*fixture, *Broker, string) {
	t.Helper()
	f, b := newBrokerFixture(t)
	p := filepath.Join(f.root, name)
	mustTrack(t, b, p, content)
	return f, b, p
}

// mustTrack writes content to path and has b read it, so that b tracks
// the file.
func mustTrack(t testing.TB, b *Broker, path, content string) {
	t.Helper()
	mustWrite(t, path, content)
	mustRead(t, b, path)
}

// mustRead has b read path, failing t on an error.
func mustRead(t testing.TB, b *Broker, path string) {
	t.Helper()
	if _, err := b.ReadFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func readString(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// externalSave replaces path the way editors save: write a temp file next
// to it, then rename it over the original.
func externalSave(t testing.TB, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".swp")
	mustWrite(t, tmp, content)
	// Retried while the target is open, as editors do on Windows: the
	// broker's watcher may be hashing it, and where renames lack POSIX
	// semantics (Wine) any open handle blocks them.
	if err := atomicfile.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds; it fails the test if that takes
// longer than a generous liveness bound (not a speed assertion).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}
