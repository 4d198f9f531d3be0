package permissions

import (
	"path/filepath"
	"testing"

	"acpd/acp"
	"acpd/internal/testdir"
)

func psCmd(line string) Call {
	return Call{Tool: "run_command", Kind: acp.ToolKindExecute, Command: line, WholeLine: true}
}

// TestWholeLineCommands: a line in a shell the policy cannot parse
// (PowerShell) is never split into sub-commands, so no rule meant for one
// command can allow a longer line, and deny and ask rules make it ask.
func TestWholeLineCommands(t *testing.T) {
	p := cmdPolicy(t, allowCmd("git status"), allowCmd("Get-ChildItem *"))
	for _, line := range []string{
		"git status",                   // a bash rule's words are not the whole line
		"Get-ChildItem; Remove-Item x", // would be allowed sub-command by sub-command
		"Get-ChildItem -Recurse",
	} {
		if d := p.Decide(ModeAsk, psCmd(line)); d.Action != Ask {
			t.Errorf("%q: %s (%s), want Ask", line, d.Action, d.Reason)
		}
	}
	// The same rules still split bash lines.
	if d := p.Decide(ModeAsk, runCmd("git status")); d.Action != Allow {
		t.Errorf("bash git status: %s", d.Action)
	}
	// A rule naming the whole line exactly allows it (rules are bash-quoted
	// words: the line is one word).
	p = cmdPolicy(t, allowCmd(formatCommandPattern([]string{"Get-ChildItem -Recurse"})))
	if d := p.Decide(ModeAsk, psCmd("Get-ChildItem -Recurse")); d.Action != Allow {
		t.Errorf("exact whole-line rule: %s (%s)", d.Action, d.Reason)
	}
	if d := p.Decide(ModeAsk, psCmd("Get-ChildItem -Recurse; Remove-Item x")); d.Action != Ask {
		t.Errorf("longer line under an exact rule: %s", d.Action)
	}
	// Any deny rule of the tool might be hidden in the line: full mode asks.
	p = cmdPolicy(t, denyCmd("rm *"))
	if d := p.Decide(ModeFull, psCmd("Get-Date")); d.Action != Ask {
		t.Errorf("with a deny rule, full mode: %s (%s), want Ask", d.Action, d.Reason)
	}
	p = cmdPolicy(t)
	if d := p.Decide(ModeFull, psCmd("Get-Date")); d.Action != Allow {
		t.Errorf("no rules, full mode: %s", d.Action)
	}
}

// TestWholeLineRemember: what is remembered for a whole line allows that
// line and nothing longer.
func TestWholeLineRemember(t *testing.T) {
	dir := testdir.New(t)
	store, err := OpenStore(filepath.Join(dir, "permissions.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy(PolicyOptions{Tools: testTools, Store: store, Project: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := psCmd("npm test")
	d := p.Decide(ModeAsk, c)
	if d.Action != Ask || len(d.Remember) != 1 {
		t.Fatalf("Decide = %+v", d)
	}
	if err := p.Remember(c, d, true); err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(ModeAsk, c); d.Action != Allow {
		t.Errorf("remembered line: %s (%s)", d.Action, d.Reason)
	}
	for _, line := range []string{"npm test; Remove-Item -Recurse C:\\", "npm test --watch", "npm"} {
		if d := p.Decide(ModeAsk, psCmd(line)); d.Action != Ask {
			t.Errorf("%q after remembering `npm test`: %s", line, d.Action)
		}
	}
}
