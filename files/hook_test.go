package files

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// recHook records what a Broker tells its hook.
type recHook struct {
	mu     sync.Mutex
	events []string
	fail   error
}

func (h *recHook) BeforeChange(ctx context.Context, c Change) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, "before "+filepath.Base(c.Path)+" "+describe(c))
	return h.fail
}

func (h *recHook) AfterChange(c Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, "after "+filepath.Base(c.Path)+" "+describe(c))
}

func describe(c Change) string {
	switch {
	case !c.Exists:
		return "-"
	case c.TooLarge:
		return "too large"
	}
	return string(c.Content)
}

func TestHookSeesEveryChange(t *testing.T) {
	f, b := newBrokerFixture(t)
	ctx := context.Background()
	h := &recHook{}
	b.SetHook(h)
	p := filepath.Join(f.root, "a.txt")
	if _, _, err := b.WriteFile(ctx, p, "one"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.EditFile(ctx, p, func(old string) (string, error) { return old + " two", nil }); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := b.Restore(ctx, p, []byte("back"), true); err != nil {
		t.Fatal(err)
	}
	want := []string{"before a.txt -", "after a.txt one", "before a.txt one", "after a.txt one two", "before a.txt one two", "after a.txt -", "before a.txt -", "after a.txt back"}
	if strings.Join(h.events, "|") != strings.Join(want, "|") {
		t.Errorf("events:\n%q\nwant\n%q", h.events, want)
	}
	// Restore needs no read: the file is the user's choice.
	mustWrite(t, p, "user's")
	if err := b.Restore(ctx, p, nil, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("restored as missing, stat: %v", err)
	}
}

func TestHookErrorAbortsTheChange(t *testing.T) {
	f, b := newBrokerFixture(t)
	ctx := context.Background()
	p := filepath.Join(f.root, "a.txt")
	if _, _, err := b.WriteFile(ctx, p, "one"); err != nil {
		t.Fatal(err)
	}
	h := &recHook{fail: errors.New("no room for a checkpoint")}
	b.SetHook(h)
	if _, _, err := b.WriteFile(ctx, p, "two"); err == nil || !strings.Contains(err.Error(), "no room") {
		t.Fatalf("write: %v", err)
	}
	if _, _, err := b.EditFile(ctx, p, func(string) (string, error) { return "three", nil }); err == nil {
		t.Fatal("edit went through")
	}
	if err := b.Remove(ctx, p); err == nil {
		t.Fatal("remove went through")
	}
	if got := readString(t, p); got != "one" {
		t.Errorf("file changed: %q", got)
	}
	for _, e := range h.events {
		if strings.HasPrefix(e, "after") {
			t.Errorf("after an aborted change: %s", e)
		}
	}
}
