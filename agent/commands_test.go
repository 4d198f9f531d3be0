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
	if got := names(); !slices.Equal(got, []string{"compact", "init", "plan", "fix", "claude-user:fix"}) {
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
