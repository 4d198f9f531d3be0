package mcpclient

import (
	"context"
	"slices"
	"syscall"
	"testing"
)

// TestServerExit checks that a stdio server that dies loses its tools and is
// reaped.
func TestServerExit(t *testing.T) {
	node, entry := everything(t)
	before := children(t)
	changed := make(chan struct{}, 8)
	m := newTestManager(t, Options{BaseEnv: baseEnv(node), OnToolsChanged: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	startOK(t, m, stdioEverything("doomed", node, entry))
	var pid int
	for _, p := range children(t) {
		if !slices.Contains(before, p) {
			pid = p
		}
	}
	if pid == 0 {
		t.Fatal("server process not found")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for len(m.Tools()) > 0 {
		waitChange(t, changed)
	}
	if _, err := m.Call(context.Background(), "mcp__doomed__echo", nil); err == nil {
		t.Error("Call on a dead server succeeded")
	}
	if err := m.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	if after := children(t); !slices.Equal(after, before) {
		t.Errorf("children after exit = %v, want %v", after, before)
	}
}
