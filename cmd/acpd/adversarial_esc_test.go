//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestAttackFIFOInEveryTool: every tool that opens a path refuses a FIFO at
// once (list_dir on it, read_file of one named like an image, a FIFO where
// a listed directory or a .gitignore was); the turn ends, and listing a
// real directory still works.
func TestAttackFIFOInEveryTool(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	for _, p := range []string{"fifo", "fifo.png", "dir/.gitignore"} {
		if err := os.MkdirAll(filepath.Join(a.project, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(a.project, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(a.project, "dir", "real.txt"), "needle\n")
	script := a.script(
		toolCall{"list_dir", map[string]any{"path": "fifo"}},
		toolCall{"read_file", map[string]any{"path": "fifo.png"}},
		toolCall{"glob", map[string]any{"pattern": "**/*.txt", "path": "dir"}},
		toolCall{"grep", map[string]any{"pattern": "needle", "path": "dir"}},
		toolCall{"list_dir", map[string]any{"path": "dir"}},
	)
	seen, _ := a.turn("", script, nil, "")
	if !strings.Contains(seen, `fifo is not a directory`) {
		t.Errorf("list_dir of the FIFO was not refused:\n%s", seen)
	}
	if !strings.Contains(seen, "not a regular file") {
		t.Errorf("read_file of fifo.png was not refused:\n%s", seen)
	}
	if !strings.Contains(seen, "real.txt") || !strings.Contains(seen, "needle") {
		t.Errorf("glob, grep or list_dir of a real directory holding a FIFO did not work:\n%s", seen)
	}
}

// runEscalation runs `acpd run` with args on a script whose commands write
// outside the project: one that prints a sandbox denial itself, then one
// the model explicitly asks to run outside the sandbox. It returns the
// --output json result and stderr.
func runEscalation(t *testing.T, a *attack, args ...string) (res struct {
	Permissions []permRecord `json:"permissions"`
}, stderr string, code int) {
	t.Helper()
	marker := filepath.Join(a.outside, "marker")
	script := a.script(
		toolCall{"run_command", map[string]any{"command": "echo 'touch: cannot touch x: Read-only file system' >&2; exit 1"}},
		toolCall{"run_command", map[string]any{"command": "echo escaped > " + marker, "sandbox_permissions": "require_escalated", "justification": "the report goes next to the project"}},
	)
	args = append([]string{"run", "--output", "json", "--cwd", a.project, "--model", "replay/" + script}, args...)
	stdout, stderr, code := runCLI(t, append(a.env, "ANTHROPIC_API_KEY=sk-ant-adversarial-key"), append(args, "go")...)
	if code == 0 {
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("result %q: %v", stdout, err)
		}
	}
	return res, stderr, code
}

// TestAttackEscalationNeedsAllowEscalation: `acpd run --yes` does not
// approve running a command outside the sandbox: a command's own "Read-only
// file system" asks nothing, and the model's explicit request is refused
// without --allow-escalation (no terminal to ask on). With --yes
// --allow-escalation, or [sandbox] escalate = "allow", the request runs
// outside the sandbox and the summary says so.
func TestAttackEscalationNeedsAllowEscalation(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	a := newAttack(t)
	marker := filepath.Join(a.outside, "marker")
	res, stderr, code := runEscalation(t, a, "--yes")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if a.exists(marker) {
		t.Fatal("--yes ran a command outside the sandbox")
	}
	if esc := escalations(res.Permissions); len(esc) != 1 || esc[0].ToolCallID != "call_1" || esc[0].Decision != "rejected" {
		t.Fatalf("permissions = %+v, want the one explicit escalation, rejected", res.Permissions)
	}
	if !strings.Contains(stderr, "--allow-escalation") {
		t.Errorf("stderr does not say what allows it:\n%s", stderr)
	}

	_, stderr, code = runCLI(t, a.env, "run", "--allow-escalation", "--cwd", a.project, "go")
	if code != exitUsage || !strings.Contains(stderr, "--allow-escalation needs --approve all") {
		t.Errorf("--allow-escalation without --approve all: exit %d:\n%s", code, stderr)
	}

	res, stderr, code = runEscalation(t, a, "--yes", "--allow-escalation")
	if code != 0 || !a.exists(marker) {
		t.Fatalf("--yes --allow-escalation: exit %d, marker %v:\n%s", code, a.exists(marker), stderr)
	}
	if esc := escalations(res.Permissions); len(esc) != 1 || esc[0].ToolCallID != "call_1" || esc[0].Decision != "allowed" {
		t.Fatalf("permissions = %+v, want the one explicit escalation, allowed", res.Permissions)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}

	a.iso.writeUserConfig(t, "[sandbox]\nescalate = \"allow\"\n")
	marker2 := filepath.Join(a.outside, "marker")
	script := a.script(toolCall{"run_command", map[string]any{"command": "echo escaped > " + marker2, "sandbox_permissions": "require_escalated", "justification": "needed"}})
	_, stderr, code = runCLI(t, a.env, "run", "--yes", "--cwd", a.project, "--model", "replay/"+script, "go")
	if code != 0 || !a.exists(marker2) {
		t.Fatalf("escalate = \"allow\" with --yes: exit %d, marker %v:\n%s", code, a.exists(marker2), stderr)
	}
	if !strings.Contains(stderr, "1 command ran OUTSIDE the sandbox") {
		t.Errorf("the summary does not show the escalation:\n%s", stderr)
	}
}

func escalations(ps []permRecord) []permRecord {
	var out []permRecord
	for _, p := range ps {
		if p.Escalation {
			out = append(out, p)
		}
	}
	return out
}
