package mcpclient

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestStatelessStdio: a Go SDK server restricted to 2026-07-28 over stdio
// is reached with server/discover through acpd's stdio transport, and its
// tools/list_changed (through subscriptions/listen) is followed.
func TestStatelessStdio(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go tool unavailable: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "statelessserver")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, gobin, "build", "-o", bin, "./internal/statelessserver").CombinedOutput(); err != nil {
		t.Fatalf("building statelessserver: %v\n%s", err, out)
	}
	changed := make(chan struct{}, 8)
	m := newTestManager(t, Options{StateDir: t.TempDir(), OnToolsChanged: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	startOK(t, m, Server{Name: "new", Command: bin})
	if st := m.Status(); len(st) != 1 || st[0].ProtocolVersion != ProtocolStateless {
		t.Fatalf("status = %+v, want protocol %s", st, ProtocolStateless)
	}
	if res := call(t, m, "mcp__new__hello", `{}`); res.Text != "hello from 2026-07-28" {
		t.Errorf("hello = %+v", res)
	}
	call(t, m, "mcp__new__add", `{}`)
	deadline := time.After(30 * time.Second)
	for {
		if _, ok := findTool(m.Tools(), "mcp__new__added"); ok {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("tools/list_changed not followed: %v", toolNames(m))
		}
	}
}
