package files

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeEditor is an in-memory editor: its buffers are what the agent reads
// and writes through the editor channel, independent of the disk.
type fakeEditor struct {
	mu      sync.Mutex
	bufs    map[string]string
	reads   int
	writes  int
	readErr error // returned by every read when set
}

func newFakeEditor() *fakeEditor { return &fakeEditor{bufs: make(map[string]string)} }

func (e *fakeEditor) set(path, content string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.bufs[path] = content
}

func (e *fakeEditor) get(path string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	s, ok := e.bufs[path]
	return s, ok
}

func (e *fakeEditor) ReadTextFile(ctx context.Context, path string, line, limit *int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.reads++
	if e.readErr != nil {
		return "", e.readErr
	}
	s, ok := e.bufs[path]
	if !ok {
		// Like a real client: a JSON-RPC error without a Go error chain.
		return "", fmt.Errorf("jsonrpc2: code -32603 message: file not found: %s", path)
	}
	if line == nil && limit == nil {
		return s, nil
	}
	lines := strings.SplitAfter(s, "\n")
	start := 0
	if line != nil {
		start = min(max(*line-1, 0), len(lines))
	}
	end := len(lines)
	if limit != nil {
		end = min(start+*limit, end)
	}
	return strings.Join(lines[start:end], ""), nil
}

func (e *fakeEditor) WriteTextFile(ctx context.Context, path, content string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.writes++
	e.bufs[path] = content
	return nil
}

func TestEditorChannel(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ed := newFakeEditor()
	b := newTestBroker(t, BrokerOptions{Roots: f.roots, Editor: ed, CanEditorRead: true, CanEditorWrite: true})
	p := filepath.Join(f.root, "main.go")
	mustWrite(t, p, "on disk\n")
	ed.set(p, "unsaved buffer\nline 2\nline 3\n")

	got, err := b.ReadFile(ctx, "main.go")
	if err != nil || got != "unsaved buffer\nline 2\nline 3\n" {
		t.Fatalf("ReadFile = %q, %v; want the editor buffer", got, err)
	}
	lines, err := b.ReadLines(ctx, "main.go", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Lines{Lines: []string{"line 2"}, FirstLine: 2, TotalLines: 3, More: true}); fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Errorf("ReadLines = %+v, want %+v", lines, want)
	}

	prev, existed, err := b.WriteFile(ctx, "main.go", "agent edit\n")
	if err != nil || !existed || prev != "unsaved buffer\nline 2\nline 3\n" {
		t.Fatalf("WriteFile = %q, %v, %v", prev, existed, err)
	}
	if buf, _ := ed.get(p); buf != "agent edit\n" {
		t.Errorf("editor buffer = %q", buf)
	}
	if disk := readString(t, p); disk != "on disk\n" {
		t.Errorf("disk changed to %q; writes must go to the editor", disk)
	}

	// The user edits the buffer: the agent's view is stale.
	ed.set(p, "user typed\n")
	_, _, err = b.WriteFile(ctx, "main.go", "agent again\n")
	wantStale(t, err, "changed since")
	if buf, _ := ed.get(p); buf != "user typed\n" {
		t.Errorf("stale write reached the editor: %q", buf)
	}

	// A new file: the editor errors, the disk has nothing: written to the editor.
	prev, existed, err = b.WriteFile(ctx, "new.go", "package x\n")
	if err != nil || existed || prev != "" {
		t.Fatalf("WriteFile(new) = %q, %v, %v", prev, existed, err)
	}
	if buf, ok := ed.get(filepath.Join(f.root, "new.go")); !ok || buf != "package x\n" {
		t.Errorf("new file buffer = %q, %v", buf, ok)
	}
}

func TestEditorReadErrorFailsClosed(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ed := newFakeEditor()
	ed.readErr = errors.New("editor unavailable")
	b := newTestBroker(t, BrokerOptions{Roots: f.roots, Editor: ed, CanEditorRead: true, CanEditorWrite: true})
	p := filepath.Join(f.root, "exists.go")
	mustWrite(t, p, "x")
	if _, _, err := b.WriteFile(ctx, p, "y"); err == nil || !strings.Contains(err.Error(), "editor unavailable") {
		t.Fatalf("WriteFile = %v, want the editor's error", err)
	}
	if ed.writes != 0 {
		t.Error("wrote although the current content could not be read")
	}
}

func TestEditorWriteOnly(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ed := newFakeEditor()
	b := newTestBroker(t, BrokerOptions{Roots: f.roots, Editor: ed, CanEditorWrite: true})
	p := filepath.Join(f.root, "f")
	mustWrite(t, p, "disk")
	ed.set(p, "buffer")
	if got, err := b.ReadFile(ctx, p); err != nil || got != "disk" {
		t.Fatalf("ReadFile = %q, %v; want disk content", got, err)
	}
	if _, _, err := b.WriteFile(ctx, p, "agent"); err != nil {
		t.Fatal(err)
	}
	if buf, _ := ed.get(p); buf != "agent" {
		t.Errorf("editor buffer = %q", buf)
	}
	if ed.reads != 0 {
		t.Errorf("editor read %d times without the capability", ed.reads)
	}
}

func TestNilEditorIgnoresCapabilities(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	b := newTestBroker(t, BrokerOptions{Roots: f.roots, CanEditorRead: true, CanEditorWrite: true})
	if _, _, err := b.WriteFile(ctx, "f", "disk"); err != nil {
		t.Fatal(err)
	}
	if got, err := b.ReadFile(ctx, "f"); err != nil || got != "disk" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
}
