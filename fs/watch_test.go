package fs

import (
	"context"
	"os"
	"path/filepath"
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
