package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/model"
)

// Custom slash commands from the project's .acpd/commands and the user's
// ~/.claude/commands are offered with their hints, expand exactly into
// the user's message, and a file added between prompts is offered from
// the next prompt on.
func TestCustomCommands(t *testing.T) {
	env := newEnv(t, "")
	env.write(".acpd/commands/fix.md", "---\ndescription: Fix an issue\nargument-hint: ISSUE PRIORITY\n---\nFix issue #$1 with priority $2; say $ARGUMENTS back.\n")
	home := filepath.Join(env.base, "home", ".claude", "commands")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "fix.md"), []byte("the user's own fix\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := record(env.script(`{"type":"text","text":"ok"}`, `{"type":"finish"}`, `{"type":"text","text":"ok"}`, `{"type":"finish"}`))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	names := func() []string {
		var last []acp.AvailableCommand
		for _, u := range c.allUpdates(sid) {
			if u.AvailableCommandsUpdate != nil {
				last = u.AvailableCommandsUpdate.AvailableCommands
			}
		}
		var out []string
		for _, a := range last {
			out = append(out, a.Name)
			if a.Name == "fix" && (a.Input == nil || a.Input.Unstructured.Hint != "ISSUE PRIORITY" || a.Description != "Fix an issue") {
				t.Errorf("fix is offered as %+v", a)
			}
		}
		return out
	}
	waitFor(t, "the custom commands in available_commands_update", func() bool { return slices.Contains(names(), "fix") })
	if got := names(); !slices.Equal(got, []string{"compact", "init", "plan", "review", "undo", "rewind", "fork", "fix", "claude-user:fix"}) {
		t.Fatalf("commands offered: %q", got)
	}
	c.mustPrompt(sid, `/fix 123 "very high"`, acp.StopReasonEndTurn)
	last := rec.last(t).Messages
	if got, want := last[len(last)-1].Text(), `Fix issue #123 with priority very high; say 123 "very high" back.`; !strings.Contains(got, want) {
		t.Errorf("the model got %q, want %q", got, want)
	}
	// A command added on disk is offered from the next prompt.
	env.write(".acpd/commands/ship.md", "Ship it.\n")
	c.mustPrompt(sid, "/ship", acp.StopReasonEndTurn)
	if got := rec.last(t).Messages; got[len(got)-1].Role != model.RoleUser || !strings.Contains(got[len(got)-1].Text(), "Ship it.") {
		t.Errorf("the new command did not expand: %q", got[len(got)-1].Text())
	}
	if !slices.Contains(names(), "ship") {
		t.Errorf("the new command is not offered: %q", names())
	}
}

// A skill is listed by name and description in the system prompt; its
// body reaches the model only once used, through the skill tool or the
// user's /name.
func TestSkills(t *testing.T) {
	env := newEnv(t, "")
	env.write(".agents/skills/pdf-forms/SKILL.md", "---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\nRun scripts/fill.py with the form's fields. SECRET-BODY-MARK\n")
	rec := record(toolSeq(toolCallReq{"skill", map[string]any{"name": "pdf-forms"}}))
	env.setModel(mainModel, rec)
	c, sid := env.fullSession()
	c.mustPrompt(sid, "fill the form", acp.StopReasonEndTurn)
	reqs := rec.requests()
	first := reqs[0]
	if !strings.Contains(first.System, "- pdf-forms: Fill in PDF forms.") {
		t.Errorf("the system prompt does not list the skill:\n%s", first.System)
	}
	if strings.Contains(first.System, "SECRET-BODY-MARK") || strings.Contains(messagesText(first.Messages), "SECRET-BODY-MARK") {
		t.Error("the skill's body reached the model before it was used")
	}
	found := false
	for _, d := range first.Tools {
		found = found || d.Name == "skill"
	}
	if !found {
		t.Error("no skill tool offered")
	}
	if res := toolResults(rec.last(t)); len(res) != 1 || !strings.Contains(resultText(res[0]), "SECRET-BODY-MARK") {
		t.Errorf("the skill tool returned %+v", res)
	}
	// The user's /pdf-forms.
	before := len(rec.requests())
	c.mustPrompt(sid, "/pdf-forms the tax form", acp.StopReasonEndTurn)
	msgs := rec.requests()[before].Messages
	if got := msgs[len(msgs)-1].Text(); !strings.Contains(got, "SECRET-BODY-MARK") || !strings.Contains(got, "the tax form") {
		t.Errorf("/pdf-forms sent %q", got)
	}
}

// TestCommandsLiveReload: with the session open and no prompt, a command
// file added, a skill added and a command removed each update the
// editor's command list (the process's one watcher), a new commands
// directory included.
func TestCommandsLiveReload(t *testing.T) {
	env := newEnv(t, "")
	env.write(".acpd/commands/fix.md", "Fix it.\n")
	env.write(".claude/README.md", "Claude Code's directory, without commands yet.\n")
	env.setModel(mainModel, env.script(`{"type":"text","text":"ok"}`, `{"type":"finish"}`))
	c := env.start(nil)
	sid := c.newSession()
	names := func() []string {
		var last []acp.AvailableCommand
		for _, u := range c.allUpdates(sid) {
			if u.AvailableCommandsUpdate != nil {
				last = u.AvailableCommandsUpdate.AvailableCommands
			}
		}
		var out []string
		for _, a := range last {
			out = append(out, a.Name)
		}
		return out
	}
	waitFor(t, "fix offered", func() bool { return slices.Contains(names(), "fix") })
	env.write(".acpd/commands/ship.md", "Ship it.\n")
	waitFor(t, "an added command offered without a prompt", func() bool { return slices.Contains(names(), "ship") })
	env.write(".claude/commands/deploy.md", "Deploy it.\n")
	waitFor(t, "a command of a new directory offered", func() bool { return slices.Contains(names(), "deploy") })
	env.write(".acpd/skills/pdf/SKILL.md", "---\nname: pdf\ndescription: PDFs.\n---\nBody.\n")
	waitFor(t, "an added skill offered", func() bool { return slices.Contains(names(), "pdf") || slices.Contains(names(), "skill:pdf") })
	if err := os.Remove(env.path(".acpd/commands/fix.md")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a removed command withdrawn", func() bool { return !slices.Contains(names(), "fix") })
}

// TestCommandModel: a custom command's model answers its turn (a bare id
// on the session's provider); the next prompt is the session's model's
// again, and a model that is not available is said, the session's model
// answering.
func TestCommandModel(t *testing.T) {
	env := newEnv(t, "")
	env.write(".acpd/commands/quick.md", "---\nmodel: other\n---\nAnswer quickly.\n")
	env.write(".acpd/commands/gone.md", "---\nmodel: nowhere/none\n---\nAnswer.\n")
	main := record(env.script(`{"type":"text","text":"main"}`, `{"type":"finish"}`, `{"type":"text","text":"main"}`, `{"type":"finish"}`, `{"type":"text","text":"main"}`, `{"type":"finish"}`))
	other := record(env.script(`{"type":"text","text":"other"}`, `{"type":"finish"}`))
	env.setModel(mainModel, main)
	env.setModel("test/other", other)
	c := env.start(nil)
	sid := c.newSession()
	c.mustPrompt(sid, "/quick", acp.StopReasonEndTurn)
	if reqs := other.requests(); len(reqs) != 1 || reqs[0].Model != "other" || !strings.Contains(messagesText(reqs[0].Messages), "Answer quickly.") {
		t.Fatalf("the command's model got %d requests", len(reqs))
	}
	if n := len(main.requests()); n != 0 {
		t.Fatalf("the session's model answered the command (%d requests)", n)
	}
	c.mustPrompt(sid, "and now?", acp.StopReasonEndTurn)
	if reqs := main.requests(); len(reqs) != 1 || reqs[0].Model != "main" {
		t.Fatalf("the next prompt went to %d main requests", len(reqs))
	}
	c.mustPrompt(sid, "/gone", acp.StopReasonEndTurn)
	if n := len(main.requests()); n != 2 {
		t.Errorf("an unavailable command model: the session's model got %d requests, want 2", n)
	}
}

// TestExtensionWatchAfterClose: the watch of the extension files that the
// reply to session/new starts is closed at once when session/close ran
// first (the two race), so no watch outlives its session.
func TestExtensionWatchAfterClose(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(nil)
	sid := c.newSession()
	c.agent.mu.Lock()
	s := c.agent.sessions[sid]
	c.agent.mu.Unlock()
	if err := c.call(acp.AgentMethodSessionClose, acp.CloseSessionRequest{SessionID: sid}, &acp.CloseSessionResponse{}); err != nil {
		t.Fatalf("close: %v", err)
	}
	s.watchExtensions() // as a late reply to session/new would
	s.mu.Lock()
	w := s.extWatch
	s.mu.Unlock()
	if w != nil {
		w.Close()
		t.Fatal("a closed session keeps a watch of its extension files")
	}
}
