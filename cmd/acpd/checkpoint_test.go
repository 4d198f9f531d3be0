package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"acpd/model"
	"acpd/session"
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
	id := p2.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "/undo"}}})
	var answer strings.Builder
	for {
		m := decodeMsg(t, p2.next())
		if m.isResponse() && string(m.ID) == id {
			if m.Error != nil {
				t.Fatalf("/undo failed: %v", m.Error)
			}
			break
		}
		switch m.Method {
		case "session/request_permission":
			answerPermission(p2, m, "allow_once")
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
				answer.WriteString(n.Update.Content.Text)
			}
		}
	}
	p2.close()
	if b, _ := os.ReadFile(file); string(b) != "alpha\nbeta\n" {
		t.Errorf("a.txt after /undo: %q (answer %q)", b, answer.String())
	}
	if a.exists(created) {
		t.Errorf("new.txt survived /undo (answer %q)", answer.String())
	}
}

// TestSessionsShowHonoursRewinds: `acpd sessions show` prints the
// conversation a rewind left, not the turns it dropped.
func TestSessionsShowHonoursRewinds(t *testing.T) {
	t.Parallel()
	iso := newIsolation(t)
	store, err := session.Open(t.Context(), filepath.Join(iso.State, "acpd"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := store.Create(session.Meta{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	msg := func(text string) session.Record {
		r, err := l.Append("message", model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: text}}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	kept := msg("kept turn")
	msg("dropped turn")
	if _, err := l.Rewind(kept.Seq); err != nil {
		t.Fatal(err)
	}
	msg("after the rewind")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, iso.Env(), "sessions", "show", l.ID())
	if code != 0 {
		t.Fatalf("sessions show: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(out, "kept turn") || !strings.Contains(out, "after the rewind") || strings.Contains(out, "dropped turn") {
		t.Errorf("sessions show:\n%s", out)
	}
}
