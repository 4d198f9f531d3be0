package mcpclient

import (
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestServerExit checks that a stdio server that dies is reaped, keeps its
// tools listed and is restarted on its next use.
func TestServerExit(t *testing.T) {
	node, entry := everything(t)
	before := children(t)
	m := newTestManager(t, Options{BaseEnv: baseEnv(node)})
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
	waitFor(t, "the killed server to restart", func() bool { return statusOf(m, "doomed").State == StateRestarting })
	if st := statusOf(m, "doomed"); !strings.Contains(st.Err, "killed") {
		t.Errorf("status = %+v, want the kill named", st)
	}
	if slices.Contains(children(t), pid) {
		t.Errorf("the killed server %d was not reaped", pid)
	}
	if _, ok := findTool(m.Tools(), "mcp__doomed__echo"); !ok {
		t.Error("tools disappeared while restarting")
	}
	if res := call(t, m, "mcp__doomed__echo", `{"message":"again"}`); res.Text != "Echo: again" {
		t.Errorf("echo after restart = %+v", res)
	}
	if err := m.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	if after := children(t); !slices.Equal(after, before) {
		t.Errorf("children after exit = %v, want %v", after, before)
	}
}
