package permissions

import (
	"os"
	"path/filepath"
	"testing"

	"acpd/acp"
)

// TestCommandWorkingDirectory: run_command's working directory is a path
// like any other: outside the roots or in a protected place it asks in every
// mode, even full, even when an allow rule or a remembered choice covers the
// command line; a deny rule still wins, and inside the roots nothing changes.
func TestCommandWorkingDirectory(t *testing.T) {
	w := newWorkspace(t)
	store := openTestStore(t, t.TempDir())
	link := filepath.Join(w.root, "out-link")
	if err := os.Symlink(w.outside, link); err != nil {
		t.Fatal(err)
	}
	p := w.policy(t, store, allowCmd("ls"), denyCmd("rm *"))
	// A remembered approval of the same line.
	if err := store.add(w.root, []Rule{{Action: Allow, Tool: "run_command", Match: "cat notes.txt"}}); err != nil {
		t.Fatal(err)
	}
	unsafe := map[string]Path{
		"outside":      w.out(w.outside),
		"config dir":   w.out(w.config),
		"state dir":    w.out(w.state),
		".git":         w.in(".git"),
		"symlink out":  w.in("out-link"),
		"not absolute": {Rel: "x", Inside: true},
	}
	for name, cwd := range unsafe {
		for _, mode := range []Mode{ModeAsk, ModeAutoEdit, ModeFull} {
			for _, line := range []string{"ls", "cat notes.txt", "make"} {
				d := p.Decide(mode, Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: line, Paths: []Path{cwd}})
				if d.Action != Ask {
					t.Errorf("%s, %s mode, %q: %s (%s), want ask", name, mode, line, d.Action, d.Reason)
				}
				if len(d.Remember) != 0 {
					t.Errorf("%s, %s mode, %q: offers to remember %v", name, mode, line, d.Remember)
				}
			}
			if d := p.Decide(mode, Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: "rm -rf x", Paths: []Path{cwd}}); d.Action != Deny {
				t.Errorf("%s, %s mode: denied command got %s", name, mode, d.Action)
			}
		}
		if d := p.Decide(ModePlan, Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: "ls", Paths: []Path{cwd}}); d.Action != Deny {
			t.Errorf("%s, plan mode: %s, want deny", name, d.Action)
		}
	}
	for _, tc := range []struct {
		mode Mode
		line string
		want Action
	}{
		{ModeAsk, "ls", Allow},
		{ModeAsk, "cat notes.txt", Allow},
		{ModeAsk, "make", Ask},
		{ModeFull, "make", Allow},
	} {
		if d := p.Decide(tc.mode, Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: tc.line, Paths: []Path{w.in(".")}}); d.Action != tc.want {
			t.Errorf("inside, %s mode, %q: %s (%s), want %s", tc.mode, tc.line, d.Action, d.Reason, tc.want)
		}
	}
}
