package fs

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

func (c *changes) waitFor(t *testing.T, b *Broker, path string) {
	t.Helper()
	waitFor(t, "ChangedSince to report "+path, func() bool { return slices.Contains(c.poll(b), path) })
}

func TestChangedSinceExternalRenameSave(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	b := newTestBroker(t, BrokerOptions{Roots: f.roots})
	p := filepath.Join(f.root, "f.go")
	mustWrite(t, p, "v1")
	if _, err := b.ReadFile(ctx, p); err != nil {
		t.Fatal(err)
	}
	var c changes
	externalSave(t, p, "v2")
	c.waitFor(t, b, p)
	if again := b.ChangedSince(); len(again) != 0 {
		t.Errorf("ChangedSince not drained: %q", again)
	}
	_, _, err := b.WriteFile(ctx, p, "agent")
	wantStale(t, err, "outside the agent")

	// Re-reading clears the state; the agent can write again.
	if _, err := b.ReadFile(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.WriteFile(ctx, p, "agent"); err != nil {
		t.Fatal(err)
	}
}

// TestStaleAfterRevertedChange covers the A→B→A case: content hashes alone
// cannot see it, the watcher does.
func TestStaleAfterRevertedChange(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	b := newTestBroker(t, BrokerOptions{Roots: f.roots})
	p := filepath.Join(f.root, "f.go")
	mustWrite(t, p, "A")
	if _, err := b.ReadFile(ctx, p); err != nil {
		t.Fatal(err)
	}
	var c changes
	externalSave(t, p, "B")
	c.waitFor(t, b, p)
	externalSave(t, p, "A")
	_, _, err := b.WriteFile(ctx, p, "agent")
	wantStale(t, err, "outside the agent")
}

func TestChangedSinceIgnoresOwnWrites(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	b := newTestBroker(t, BrokerOptions{Roots: f.roots})
	mine := filepath.Join(f.root, "mine")
	theirs := filepath.Join(f.root, "theirs")
	mustWrite(t, mine, "1")
	mustWrite(t, theirs, "1")
	for _, p := range []string{mine, theirs} {
		if _, err := b.ReadFile(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, content := range []string{"2", "3", "4"} {
		if _, _, err := b.WriteFile(ctx, mine, content); err != nil {
			t.Fatal(err)
		}
	}
	// The external save of theirs is queued after our writes' events: once
	// it is reported, ours have been examined.
	var c changes
	externalSave(t, theirs, "2")
	c.waitFor(t, b, theirs)
	if seen := c.poll(b); slices.Contains(seen, mine) {
		t.Errorf("own writes reported as external changes: %q", seen)
	}
	if _, _, err := b.WriteFile(ctx, mine, "5"); err != nil {
		t.Errorf("write after own writes: %v", err)
	}
}

func TestChangedSinceDirectoryRecreated(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	b := newTestBroker(t, BrokerOptions{Roots: f.roots})
	dir := filepath.Join(f.root, "d")
	p := filepath.Join(dir, "f")
	mustMkdir(t, dir)
	mustWrite(t, p, "1")
	if _, err := b.ReadFile(ctx, p); err != nil {
		t.Fatal(err)
	}
	var c changes
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, b, p)

	// The directory's watch died with it; using the file again re-adds it.
	mustMkdir(t, dir)
	mustWrite(t, p, "2")
	if _, err := b.ReadFile(ctx, p); err != nil {
		t.Fatal(err)
	}
	c = changes{}
	externalSave(t, p, "3")
	c.waitFor(t, b, p)
}

// TestRescanAfterOverflow exercises the overflow path: every tracked file
// is rechecked. The watcher is closed first so that only the rescan can
// notice the change.
func TestRescanAfterOverflow(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	b := newTestBroker(t, BrokerOptions{Roots: f.roots})
	same := filepath.Join(f.root, "same")
	changed := filepath.Join(f.root, "changed")
	mustWrite(t, same, "x")
	mustWrite(t, changed, "x")
	for _, p := range []string{same, changed} {
		if _, err := b.ReadFile(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
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
	f := newFixture(t)
	b := newTestBroker(t, BrokerOptions{Roots: f.roots})
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
	ctx := context.Background()
	const n = 8
	var brokers []*Broker
	var paths []string
	for i := range n {
		f := newFixture(t)
		b := NewBroker(BrokerOptions{Roots: f.roots})
		p := filepath.Join(f.root, "f")
		mustWrite(t, p, "1")
		if _, err := b.ReadFile(ctx, p); err != nil {
			t.Fatal(err)
		}
		if i == n-1 { // the last one shares the first one's directory
			p = paths[0]
			if _, err := b.ReadFile(ctx, p); err != nil {
				t.Fatal(err)
			}
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
	externalSave(t, paths[0], "2")
	c.waitFor(t, brokers[n-1], paths[0])
	for i := 1; i < n-1; i++ {
		var c changes
		externalSave(t, paths[i], "2")
		c.waitFor(t, brokers[i], paths[i])
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
