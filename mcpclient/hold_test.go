//go:build unix

package mcpclient

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestHoldDelaysSpawn: with Options.Hold, Add registers the servers as
// starting but spawns none until the hold is closed; then they connect.
func TestHoldDelaysSpawn(t *testing.T) {
	before := children(t)
	s, logFile := badServer(t, "held", "ok")
	hold := make(chan struct{})
	m := NewManager(Options{Logger: testLogger(), Hold: hold})
	if errs := m.Add([]Server{s}); len(errs) > 0 {
		t.Fatal(errs)
	}
	m.Wait(context.Background(), 100*time.Millisecond)
	if st := statusOf(m, "held"); st.State != StateStarting {
		t.Errorf("held before the hold ends = %+v, want starting", st)
	}
	if got := children(t); len(got) != len(before) {
		t.Errorf("children before the hold ends = %v, want %v (nothing spawned)", got, before)
	}
	if got := methods(t, logFile); len(got) > 0 {
		t.Errorf("the held server was sent %v before the hold ended", got)
	}
	close(hold)
	m.Wait(context.Background(), 20*time.Second)
	if st := statusOf(m, "held"); st.State != StateReady || st.Tools != 4 {
		t.Errorf("held after the hold = %+v, want ready with 4 tools", st)
	}
	if err := m.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	noNewChildren(t, before)
}

// TestCloseWhileHeld: a Manager closed while its servers are held spawns
// none of them; they go down with ErrClosed, Wait returns, and nothing is
// left running (goleak checks the goroutines).
func TestCloseWhileHeld(t *testing.T) {
	before := children(t)
	s, logFile := badServer(t, "held", "ok")
	m := NewManager(Options{Logger: testLogger(), Hold: make(chan struct{})})
	if errs := m.Add([]Server{s}); len(errs) > 0 {
		t.Fatal(errs)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m.Wait(context.Background(), 20*time.Second)
	st := statusOf(m, "held")
	if st.State != StateDown || st.Err != ErrClosed.Error() {
		t.Errorf("held after Close = %+v, want down with %v", st, ErrClosed)
	}
	if got := methods(t, logFile); len(got) > 0 {
		t.Errorf("the held server was sent %v", got)
	}
	if _, err := m.Call(context.Background(), "mcp__held__echo", nil); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Call after Close = %v, want an error at once", err)
	}
	noNewChildren(t, before)
}
