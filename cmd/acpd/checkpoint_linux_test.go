//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckpointSurvivesKill: acpd killed (SIGKILL) in the middle of a turn,
// after the turn edited one file and created another and while it waits to
// run a command, leaves a checkpoint that /undo in a new process restores.
func TestCheckpointSurvivesKill(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	file := writeFile(t, filepath.Join(a.project, "a.txt"), "alpha\nbeta\n")
	created := filepath.Join(a.project, "new.txt")
	script := a.script(
		toolCall{"read_file", map[string]any{"path": "a.txt"}},
		toolCall{"edit_file", map[string]any{"path": "a.txt", "old_string": "beta", "new_string": "BETA"}},
		toolCall{"write_file", map[string]any{"path": "new.txt", "content": "new\n"}},
		toolCall{"run_command", map[string]any{"command": "echo never"}},
	)
	p := startProc(t, a.env, "--model", "replay/"+script)
	p.initialize()
	sid := p.newSession(a.project)
	p.mustCall("session/set_mode", map[string]any{"sessionId": sid, "modeId": "auto-edit"}, nil)
	p.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
	for {
		m := decodeMsg(t, p.next())
		if m.isResponse() {
			t.Fatalf("the turn ended before its command asked: %s", m.raw)
		}
		if m.Method == "session/request_permission" {
			break // the command asks: the edits are done
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "alpha\nBETA\n" {
		t.Fatalf("a.txt before the kill: %q", b)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.closed = true
	p.stdin.Close()
	p.drainAndWait()

	p2 := startProc(t, a.env, "--model", "replay/"+script)
	p2.initialize()
	p2.mustCall("session/load", map[string]any{"sessionId": sid, "cwd": a.project, "mcpServers": []any{}}, nil)
	answer := promptAnswering(t, p2, sid, "/undo", "allow_once")
	p2.close()
	if b, _ := os.ReadFile(file); string(b) != "alpha\nbeta\n" {
		t.Errorf("a.txt after /undo: %q (answer %q)", b, answer)
	}
	if a.exists(created) {
		t.Errorf("new.txt survived /undo (answer %q)", answer)
	}
}

// promptAnswering sends the prompt text to session sid on p, answers every
// permission request with the option of kind answer, and returns the
// turn's agent message text. A failed prompt fails the test.
func promptAnswering(t *testing.T, p *proc, sid, text, answer string) string {
	t.Helper()
	id := p.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	var out strings.Builder
	for {
		m := decodeMsg(t, p.next())
		if m.isResponse() && string(m.ID) == id {
			if m.Error != nil {
				t.Fatalf("prompt %q failed: %v", text, m.Error)
			}
			return out.String()
		}
		switch m.Method {
		case "session/request_permission":
			answerPermission(p, m, answer)
		case "session/update":
			var n struct {
				Update struct {
					SessionUpdate string `json:"sessionUpdate"`
					Content       struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"update"`
			}
			json.Unmarshal(m.Params, &n)
			if n.Update.SessionUpdate == "agent_message_chunk" {
				out.WriteString(n.Update.Content.Text)
			}
		}
	}
}

// TestForkAsTheUnstableSchemaSays: initialize advertises
// sessionCapabilities.fork, session/fork's request and answer are valid as
// ACP's unstable schema defines them, and the fork can undo the turn it
// copied.
func TestForkAsTheUnstableSchemaSays(t *testing.T) {
	t.Parallel()
	loadSchema(t, false) // skips (or fails under CI) without the SDK
	unstable, err := compileSchema(filepath.Join(sdkDir, "schema", "v1", "schema.unstable.json"))
	if err != nil {
		t.Fatal(err)
	}
	a := newAttack(t)
	script := a.script(toolCall{"write_file", map[string]any{"path": "new.txt", "content": "new\n"}})
	p := startProc(t, a.env, "--model", "replay/"+script)
	init, rerr := p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if rerr != nil {
		t.Fatal(rerr)
	}
	if err := unstable.validateDef("InitializeResponse", init); err != nil {
		t.Errorf("initialize's answer: %v", err)
	}
	var caps struct {
		AgentCapabilities struct {
			SessionCapabilities struct {
				Fork *struct{} `json:"fork"`
			} `json:"sessionCapabilities"`
		} `json:"agentCapabilities"`
	}
	if json.Unmarshal(init, &caps); caps.AgentCapabilities.SessionCapabilities.Fork == nil {
		t.Fatalf("sessionCapabilities.fork not advertised: %s", init)
	}
	sid := p.newSession(a.project)
	p.mustCall("session/set_mode", map[string]any{"sessionId": sid, "modeId": "full"}, nil)
	promptAnswering(t, p, sid, "go", "reject_once")
	created := filepath.Join(a.project, "new.txt")
	if !a.exists(created) {
		t.Fatal("the turn did not write new.txt")
	}
	params := map[string]any{"sessionId": sid, "cwd": a.project, "mcpServers": []any{}}
	raw, _ := json.Marshal(params)
	if err := unstable.validateDef("ForkSessionRequest", raw); err != nil {
		t.Fatalf("the test's request: %v", err)
	}
	res, rerr := p.call("session/fork", params)
	if rerr != nil {
		t.Fatalf("session/fork: %v", rerr)
	}
	if err := unstable.validateDef("ForkSessionResponse", res); err != nil {
		t.Errorf("session/fork's answer: %v\n%s", err, res)
	}
	var fork struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(res, &fork)
	if fork.SessionID == "" || fork.SessionID == sid {
		t.Fatalf("fork: %s", res)
	}
	if txt := promptAnswering(t, p, fork.SessionID, "/undo", "allow_once"); a.exists(created) {
		t.Errorf("the fork's /undo left new.txt: %q", txt)
	}
	p.close()
}
