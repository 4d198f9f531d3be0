package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"acpd/internal/testproc"
)

// readPid waits (bounded by the reply wait) for path to hold a pid and a
// newline.
func readPid(t *testing.T, p *proc, path string) procRef {
	t.Helper()
	deadline := time.Now().Add(*flagReplyWait)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			f := strings.Fields(string(b))
			if len(f) > 0 {
				if pid, err := strconv.Atoi(f[0]); err == nil && pid > 0 {
					r := procRef{pid: pid}
					if len(f) > 1 {
						r.ns = f[1]
					}
					return r
				}
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s was not written; stderr:\n%s", path, p.stderr.String())
	return procRef{}
}

// recordPid is the shell words that write "PID NS" to a file: the
// shell's pid and, on Linux, its PID namespace (a sandboxed command has
// one of its own, whose pids mean nothing outside it).
const recordPid = `echo $$ $(readlink /proc/$$/ns/pid 2>/dev/null)`

// procRef is a process as it recorded itself (recordPid).
type procRef struct {
	pid int
	ns  string
}

// pids are the processes to look for: the recorded one when it lives in
// this process's PID namespace, or every process of its own namespace.
func (r procRef) pids() []int {
	if own, _ := os.Readlink("/proc/self/ns/pid"); r.ns == "" || r.ns == own {
		return []int{r.pid}
	}
	var in []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, _ := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "pid")); l == r.ns {
			in = append(in, pid)
		}
	}
	return in
}

// gone polls (bounded by the reply wait) until none of r's processes
// exists; otherwise it kills them and returns false.
func (r procRef) gone() bool {
	deadline := time.Now().Add(*flagReplyWait)
	for time.Now().Before(deadline) {
		left := false
		for _, pid := range r.pids() {
			left = left || testproc.Exists(pid)
		}
		if !left {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range r.pids() {
		testproc.Kill(pid)
	}
	return false
}

// promptCommand opens a session on project in full mode (no permission
// asked) and sends a prompt whose model runs a command; it returns the
// prompt's request id once the command runs.
func (p *proc) promptCommand(project string) string {
	p.tb.Helper()
	sid := p.newSession(project)
	p.mustCall("session/set_config_option", map[string]any{"sessionId": sid, "configId": "mode", "value": "full"}, nil)
	promptID := p.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "sleep"}}})
	p.waitUpdate("run_command in progress", func(kind string, u json.RawMessage) bool {
		return kind == "tool_call_update" && strings.Contains(string(u), `"status":"in_progress"`)
	})
	return promptID
}

// wantCancelled checks, once acpd has exited, that the prompt promptID was
// answered, with stopReason cancelled.
func (p *proc) wantCancelled(promptID string) {
	p.tb.Helper()
	found := false
	for _, l := range p.got {
		m := decodeMsg(p.tb, l)
		if m.isResponse() && string(m.ID) == promptID {
			found = true
			if !strings.Contains(string(m.Result), `"cancelled"`) {
				p.tb.Errorf("prompt reply at exit = %s, want stopReason cancelled", m.raw)
			}
		}
	}
	if !found {
		p.tb.Error("the running prompt got no reply before acpd exited")
	}
}

// TestExitWithStubbornChildren closes acpd's stdin while one session runs a
// command that ignores SIGTERM (and has a child that does too) and another
// session's MCP stdio server hangs in the handshake, ignoring both its stdin
// closing and SIGTERM. acpd must stop both (SIGKILL after the grace periods)
// and exit 0: no dying or stubborn child holds the turn or the shutdown.
func TestExitWithStubbornChildren(t *testing.T) {
	t.Parallel()
	iso := newIsolation(t)
	project := t.TempDir()
	cmdPidFile := filepath.Join(project, "cmd.pid")
	mcpPidFile := filepath.Join(project, "mcp.pid")
	script := writeFile(t, filepath.Join(t.TempDir(), "stubborn.jsonl"),
		`{"type":"tool_done","toolCallId":"call_sleep","toolName":"run_command","input":{"command":"trap '' TERM; sleep 300 & `+recordPid+` > cmd.pid; wait; wait"}}`+"\n"+
			`{"type":"finish"}`+"\n")
	p := startProc(t, iso.Env(), "--model", "replay/"+script)
	p.initialize()

	// Session 1: an MCP server that never answers the handshake.
	var r struct {
		SessionID string `json:"sessionId"`
	}
	p.mustCall("session/new", map[string]any{"cwd": project, "mcpServers": []any{map[string]any{
		"name": "stuck", "command": "/bin/sh", "env": []any{},
		"args": []string{"-c", `echo $$ > mcp.pid; trap '' TERM; exec sleep 300`},
	}}}, &r)
	mcpPid := readPid(t, p, mcpPidFile)

	// Session 2: a command that ignores SIGTERM.
	promptID := p.promptCommand(project)
	cmdPid := readPid(t, p, cmdPidFile)

	p.close() // fails unless acpd exits 0 within the reply wait
	for name, r := range map[string]procRef{"command": cmdPid, "MCP server": mcpPid} {
		if !r.gone() {
			t.Errorf("the %s (pid %d) outlived acpd", name, r.pid)
		}
	}
	p.wantCancelled(promptID)
}
