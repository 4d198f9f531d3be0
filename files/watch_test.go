package files

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// changes accumulates ChangedSince reports.
type changes struct {
	mu   sync.Mutex
	seen []string
}

func (c *changes) poll(b *Broker) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, b.ChangedSince()...)
	return slices.Clone(c.seen)
}

// saveExternally saves content to path as an editor would and waits until
// b reports the change.
func (c *changes) saveExternally(t *testing.T, b *Broker, path, content string) {
	t.Helper()
	externalSave(t, path, content)
	c.waitFor(t, b, path)
}

func (c *changes) waitFor(t *testing.T, b *Broker, path string) {
	t.Helper()
	waitFor(t, "ChangedSince to report "+path, func() bool { return slices.Contains(c.poll(b), path) })
}

func TestChangedSinceExternalRenameSave(t *testing.T) {
	_, b, p := newReadFile(t, "f.go", "v1")
	ctx := context.Background()
	var c changes
	c.saveExternally(t, b, p, "v2")
	if again := b.ChangedSince(); len(again) != 0 {
		t.Errorf("ChangedSince not drained: %q", again)
	}
	_, _, err := b.WriteFile(ctx, p, "agent")
	wantStale(t, err, "outside the agent")

	// Re-reading clears the state; the agent can write again.
	mustRead(t, b, p)
	if _, _, err := b.WriteFile(ctx, p, "agent"); err != nil {
		t.Fatal(err)
	}
}

// TestStaleAfterRevertedChange covers the A→B→A case: content hashes alone
// cannot see it, the watcher does.
func TestStaleAfterRevertedChange(t *testing.T) {
	_, b, p := newReadFile(t, "f.go", "A")
	ctx := context.Background()
	var c changes
	c.saveExternally(t, b, p, "B")
	externalSave(t, p, "A")
	_, _, err := b.WriteFile(ctx, p, "agent")
	wantStale(t, err, "outside the agent")
}

func TestChangedSinceIgnoresOwnWrites(t *testing.T) {
	f, b := newBrokerFixture(t)
	ctx := context.Background()
	mine := filepath.Join(f.root, "mine")
	theirs := filepath.Join(f.root, "theirs")
	mustTrack(t, b, mine, "1")
	mustTrack(t, b, theirs, "1")
	for _, content := range []string{"2", "3", "4"} {
		if _, _, err := b.WriteFile(ctx, mine, content); err != nil {
			t.Fatal(err)
		}
	}
	// The external save of theirs is queued after our writes' events: once
	// it is reported, ours have been examined.
	var c changes
	c.saveExternally(t, b, theirs, "2")
	if seen := c.poll(b); slices.Contains(seen, mine) {
		t.Errorf("own writes reported as external changes: %q", seen)
	}
	if _, _, err := b.WriteFile(ctx, mine, "5"); err != nil {
		t.Errorf("write after own writes: %v", err)
	}
}

func TestChangedSinceDirectoryRecreated(t *testing.T) {
	f, b := newBrokerFixture(t)
	dir := filepath.Join(f.root, "d")
	p := filepath.Join(dir, "f")
	mustMkdir(t, dir)
	mustWrite(t, p, "1")
	mustRead(t, b, p)
	var c changes
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, b, p)

	// The directory's watch died with it; using the file again re-adds it.
	mustMkdir(t, dir)
	mustWrite(t, p, "2")
	mustRead(t, b, p)
	c = changes{}
	c.saveExternally(t, b, p, "3")
}

// TestRescanAfterOverflow exercises the overflow path: every tracked file
// is rechecked. The watcher is closed first so that only the rescan can
// notice the change.
func TestRescanAfterOverflow(t *testing.T) {
	f, b := newBrokerFixture(t)
	same := filepath.Join(f.root, "same")
	changed := filepath.Join(f.root, "changed")
	mustTrack(t, b, same, "x")
	mustTrack(t, b, changed, "x")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	externalSave(t, changed, "y")
	pending := make(map[string]struct{})
	b.addAllTracked(pending)
	for key := range pending {
		if b.checkTracked(context.Background(), key) {
			t.Errorf("%s: retry requested with no operation in progress", key)
		}
	}
	if got := b.ChangedSince(); !slices.Equal(got, []string{changed}) {
		t.Errorf("ChangedSince = %q, want [%s]", got, changed)
	}
}

func TestCloseIdempotent(t *testing.T) {
	_, b := newBrokerFixture(t)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// Still usable, unwatched.
	if _, _, err := b.WriteFile(context.Background(), "f", "x"); err != nil {
		t.Fatal(err)
	}
}

// inotifyInstances counts this process's inotify instances (Linux only).
func inotifyInstances(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// TestBrokersShareOneWatcher checks that any number of brokers use one
// inotify instance, that each broker hears only about its own files (two
// watching the same directory both hear), that closing one leaves the
// others watching, and that the instance goes with the last broker.
func TestBrokersShareOneWatcher(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts inotify instances")
	}
	before := inotifyInstances(t)
	const n = 8
	var brokers []*Broker
	var paths []string
	for i := range n {
		f := newFixture(t)
		b := NewBroker(BrokerOptions{Roots: f.roots})
		p := filepath.Join(f.root, "f")
		mustWrite(t, p, "1")
		mustRead(t, b, p)
		if i == n-1 { // the last one shares the first one's directory
			p = paths[0]
			mustRead(t, b, p)
		}
		brokers = append(brokers, b)
		paths = append(paths, p)
	}
	if got := inotifyInstances(t) - before; got != 1 {
		t.Errorf("%d brokers use %d inotify instances, want 1", n, got)
	}
	// Close the first; the last still watches its file.
	if err := brokers[0].Close(); err != nil {
		t.Fatal(err)
	}
	var c changes
	c.saveExternally(t, brokers[n-1], paths[0], "2")
	for i := 1; i < n-1; i++ {
		var c changes
		c.saveExternally(t, brokers[i], paths[i], "2")
		if got := brokers[n-1].ChangedSince(); len(got) != 0 {
			t.Errorf("broker %d heard about another broker's file: %q", n-1, got)
		}
	}
	for _, b := range brokers[1:] {
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := inotifyInstances(t) - before; got != 0 {
		t.Errorf("%d inotify instances left after closing every broker", got)
	}
}
