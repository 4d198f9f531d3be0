package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"acpd/internal/testproc"
)

// waitUpdate reads messages until a session/update for which match returns
// true; other messages go to the backlog.
func (p *proc) waitUpdate(what string, match func(kind string, update json.RawMessage) bool) {
	p.tb.Helper()
	for {
		l := p.read()
		m := decodeMsg(p.tb, l)
		if m.Method == "session/update" {
			var n struct {
				Update json.RawMessage `json:"update"`
			}
			var k struct {
				Kind string `json:"sessionUpdate"`
			}
			if json.Unmarshal(m.Params, &n) == nil && json.Unmarshal(n.Update, &k) == nil && match(k.Kind, n.Update) {
				return
			}
		}
		p.backlog = append(p.backlog, l)
	}
}

// processGone polls (bounded by the reply wait) until pid no longer exists.
func processGone(pid int) bool {
	deadline := time.Now().Add(*flagReplyWait)
	for time.Now().Before(deadline) {
		if !testproc.Exists(pid) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// TestExitWhileACommandRuns closes acpd's stdin while a run_command (in full
// mode, no permission needed) is running on acpd's PTY: acpd stops the
// command and exits 0, long before the command would have ended.
func TestExitWhileACommandRuns(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t, true)
	iso := newIsolation(t)
	project := t.TempDir()
	pidFile := filepath.Join(project, "pid.txt")
	script := writeFile(t, filepath.Join(t.TempDir(), "busy.jsonl"),
		`{"type":"tool_done","toolCallId":"call_sleep","toolName":"run_command","input":{"command":"`+recordPid+` > pid.txt; exec sleep 300"}}`+"\n"+
			`{"type":"finish"}`+"\n")
	p := startProc(t, iso.Env(), "--model", "replay/"+script)
	p.initialize()
	promptID := p.promptCommand(project)
	pid := readPid(t, p, pidFile)
	p.close() // fails unless acpd exits 0 within the reply wait
	if !pid.gone() {
		t.Errorf("the command (pid %d) outlived acpd", pid.pid)
	}
	p.wantCancelled(promptID)
	p.validate(schema, true)
}

// TestSIGTERMWhilePermissionPending sends SIGTERM while a permission request
// is unanswered: acpd exits 0 promptly with a clean log.
func TestSIGTERMWhilePermissionPending(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t, true)
	iso := newIsolation(t)
	project := t.TempDir()
	script := writeFile(t, filepath.Join(t.TempDir(), "ask.jsonl"),
		`{"type":"tool_done","toolCallId":"call_write","toolName":"write_file","input":{"path":"x.txt","content":"x"}}`+"\n"+
			`{"type":"finish"}`+"\n")
	p := startProc(t, iso.Env(), "--model", "replay/"+script)
	p.initialize()
	sid := p.newSession(project)
	p.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "write"}}})
	for {
		m := decodeMsg(t, p.next())
		if m.Method == "session/request_permission" {
			break
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.close()
	if _, err := os.Stat(filepath.Join(project, "x.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the unanswered write ran: %v", err)
	}
	p.validate(schema, false)
}
