package permissions

import (
	"strings"
	"testing"

	"acpd/acp"
)

// TestUnsandboxedCommandsAskInFull: where no sandbox is available, full
// mode asks before every command (explicit allow rules still allow).
func TestUnsandboxedCommandsAskInFull(t *testing.T) {
	w := newWorkspace(t)
	p := w.policy(t, openTestStore(t, w.state), Rule{Action: Allow, Tool: "run_command", Match: "go test *"})
	cmd := Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: "make build", Unsandboxed: true}
	d := p.Decide(ModeFull, cmd)
	if d.Action != Ask || !strings.Contains(d.Reason, "no OS sandbox") {
		t.Fatalf("unsandboxed command in full mode: %s (%s), want ask", d.Action, d.Reason)
	}
	cmd.Unsandboxed = false
	if d := p.Decide(ModeFull, cmd); d.Action != Allow {
		t.Fatalf("sandboxed command in full mode: %s (%s)", d.Action, d.Reason)
	}
	ruled := Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: "go test ./...", Unsandboxed: true}
	if d := p.Decide(ModeFull, ruled); d.Action != Allow {
		t.Fatalf("an allow rule no longer allows: %s (%s)", d.Action, d.Reason)
	}
	if d := p.Decide(ModePlan, cmd); d.Action != Deny {
		t.Fatalf("plan mode: %s", d.Action)
	}
}

// TestEscalationAlwaysAsks: running outside the sandbox asks in every mode,
// over allow rules, and is never offered to remember; deny rules still deny.
func TestEscalationAlwaysAsks(t *testing.T) {
	w := newWorkspace(t)
	p := w.policy(t, openTestStore(t, w.state), Rule{Action: Allow, Tool: "run_command"}, Rule{Action: Deny, Tool: "run_command", Match: "rm *"})
	for _, mode := range []Mode{ModeAsk, ModeAutoEdit, ModeFull} {
		d := p.Decide(mode, Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: "go build", Escalate: true})
		if d.Action != Ask || len(d.Remember) != 0 {
			t.Errorf("escalation in %s mode: %s, remember %v", mode, d.Action, d.Remember)
		}
	}
	if d := p.Decide(ModeFull, Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: "rm -rf x", Escalate: true}); d.Action != Deny {
		t.Errorf("escalation over a deny rule: %s", d.Action)
	}
}
