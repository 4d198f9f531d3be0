//go:build unix

package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"acpd/acp"
)

// A new session's MCP servers start while its log is created; when the
// log cannot be created, session/new fails and the servers it started
// are stopped.
func TestMCPServersStoppedWhenLogFails(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(nil)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	// A stdio server that records its pid and then waits on stdin, as
	// servers do; it exits when acpd closes its stdin or signals it.
	script := filepath.Join(dir, "server.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho $$ > "+pidFile+"\nexec cat >/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(env.store.Dir(), "sessions")
	if err := os.RemoveAll(sessions); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sessions, nil, 0o600); err != nil { // not a directory: no log can be created
		t.Fatal(err)
	}
	srv := acp.McpServer{Stdio: &acp.McpServerStdio{Name: "s", Command: script, Args: []string{}, Env: []acp.EnvVariable{}}}
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{srv}}, &resp); err == nil {
		t.Fatalf("session/new succeeded without a log: %+v", resp)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Logf("the server never ran: %v", err)
		return // the server was stopped before it ran
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pid file %q", b)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the MCP server (pid %d) still runs after session/new failed: %v", pid, err)
	}
}
