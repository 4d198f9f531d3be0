package main

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/charmbracelet/log"
)

// A lazy handler builds its charm logger at the first enabled record, not
// before, and writes what the charm logger would have written itself,
// attributes and groups included.
func TestLazyHandler(t *testing.T) {
	newCharm := func(buf *bytes.Buffer) *log.Logger {
		// Loggers derived by With share the writer but not a lock (as
		// os.Stderr and a log file are shared, whose writes are safe).
		lg := log.NewWithOptions(&lockedWriter{w: buf}, log.Options{Prefix: "acpd"})
		lg.SetFormatter(log.LogfmtFormatter)
		lg.SetLevel(log.InfoLevel)
		return lg
	}
	var lazyOut, eagerOut bytes.Buffer
	builds := 0
	h := newLazyHandler(slog.LevelInfo, func() slog.Handler { builds++; return newCharm(&lazyOut) })
	lazy, eager := slog.New(h), slog.New(newCharm(&eagerOut))
	for _, lg := range []*slog.Logger{lazy, eager} {
		lg.Debug("below the level")
	}
	if h.built() || builds != 0 || lazyOut.Len() != 0 {
		t.Fatalf("a debug record built the handler (%d builds) or wrote %q", builds, lazyOut.String())
	}
	derived := lazy.With("session", "s1").WithGroup("tool")
	if h.built() {
		t.Fatal("With built the handler")
	}
	for _, pair := range [][2]*slog.Logger{
		{derived, eager.With("session", "s1").WithGroup("tool")},
		{lazy, eager},
		{lazy.With("n", 3), eager.With("n", 3)},
	} {
		pair[0].Warn("record", "k", "v")
		pair[1].Warn("record", "k", "v")
	}
	if builds != 1 {
		t.Errorf("%d builds, want 1", builds)
	}
	if lazyOut.String() != eagerOut.String() || lazyOut.Len() == 0 {
		t.Errorf("lazy wrote\n%s\neager wrote\n%s", lazyOut.String(), eagerOut.String())
	}
	var wg sync.WaitGroup
	lazyOut.Reset()
	for range 8 {
		wg.Go(func() { derived.With("g", 1).Info("concurrent") })
	}
	wg.Wait()
	if n := strings.Count(lazyOut.String(), "concurrent"); n != 8 {
		t.Errorf("%d concurrent records written, want 8", n)
	}
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
