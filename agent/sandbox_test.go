//go:build linux

package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/sandbox"
)

func requireSandbox(t *testing.T) {
	t.Helper()
	if st := sandbox.Available(); st.Err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sandbox unavailable under CI: %v", st.Err)
		}
		t.Skipf("sandbox unavailable: %v", st.Err)
	}
}

// TestSandboxedCommandsInFullMode: in full mode commands run unasked inside
// the sandbox; a write outside the project fails there and the model is
// told how to ask for more, but nothing is asked because of what the
// command printed (a command can print "Read-only file system" itself).
// Running outside the sandbox takes the model's explicit request with a
// justification, shown to the user and asked every time.
func TestSandboxedCommandsInFullMode(t *testing.T) {
	requireSandbox(t)
	env := newEnv(t, "")
	// The temp dir is writable inside the sandbox: keep it apart from
	// "outside".
	tmp := filepath.Join(env.base, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	if err := os.MkdirAll(env.path(".git/hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, sid := env.fullSession()
	// Outside the project and outside /tmp (which the sandbox makes
	// private): a directory commands see but cannot write.
	outside, err := os.MkdirTemp("/var/tmp", "acpd-outside-")
	if err != nil {
		t.Skipf("no directory outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	target := filepath.Join(outside, "escaped")
	res, isErr, _ := runTools(t, env, c, sid,
		toolCallReq{"run_command", map[string]any{"command": "echo in > inside.txt"}},
		toolCallReq{"run_command", map[string]any{"command": "echo out > " + target}},
		toolCallReq{"run_command", map[string]any{"command": "echo evil > .git/hooks/pre-commit"}},
		toolCallReq{"run_command", map[string]any{"command": "echo 'touch: cannot touch x: Read-only file system' >&2; exit 1"}},
	)
	if isErr[0] || !fileExists(env.path("inside.txt")) {
		t.Fatalf("command inside the project: %q", res[0])
	}
	for i, f := range []string{target, env.path(".git/hooks/pre-commit")} {
		r := res[i+1]
		if !isErr[i+1] || !strings.Contains(r, "sandbox") || !strings.Contains(r, "may have denied") || !strings.Contains(r, `"require_escalated"`) {
			t.Errorf("denied command %d: %q", i+1, r)
		}
		if fileExists(f) {
			t.Errorf("%s was written", f)
		}
	}
	if n := len(c.permissionRequests()); n != 0 {
		t.Fatalf("%d permission requests for failed commands, want none (escalation only on request)", n)
	}
	// The model asks, with a justification: asked every time, never
	// remembered; rejected, nothing runs.
	escalate := toolCallReq{"run_command", map[string]any{"command": "echo out > " + target, "sandbox_permissions": "require_escalated", "justification": "write the report next to the project"}}
	c.setPerm(choose(acp.PermissionOptionKindRejectOnce))
	res, isErr, _ = runTools(t, env, c, sid, escalate)
	if !isErr[0] || !strings.Contains(res[0], "not approved") || fileExists(target) {
		t.Fatalf("rejected escalation: %q", res[0])
	}
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	res, isErr, _ = runTools(t, env, c, sid, escalate)
	if isErr[0] || !strings.Contains(res[0], "approved running the command outside the sandbox") || !fileExists(target) {
		t.Fatalf("escalated command: %q", res[0])
	}
	reqs := c.permissionRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d permission requests, want the two escalations", len(reqs))
	}
	for _, r := range reqs {
		if r.ToolCall.Title == nil || !strings.HasPrefix(*r.ToolCall.Title, "Run outside the sandbox") {
			t.Errorf("escalation request titled %v", r.ToolCall.Title)
		}
		shown := ""
		for _, cc := range r.ToolCall.Content {
			if cc.Content != nil && cc.Content.Content.Text != nil {
				shown += cc.Content.Content.Text.Text
			}
		}
		if !strings.Contains(shown, "write the report next to the project") || !strings.Contains(shown, "echo out > "+target) {
			t.Errorf("the escalation request does not show the justification and the command: %q", shown)
		}
		if _, ok := r.ToolCall.Meta["acpd_escalation"]; !ok {
			t.Errorf("the escalation request has no acpd_escalation _meta: %v", r.ToolCall.Meta)
		}
		for _, o := range r.Options {
			if o.Kind == acp.PermissionOptionKindAllowAlways {
				t.Errorf("an escalation offers %q", o.Name)
			}
		}
	}
	// Without a justification the request is refused before anyone is asked.
	res, isErr, _ = runTools(t, env, c, sid, toolCallReq{"run_command", map[string]any{"command": "true", "sandbox_permissions": "require_escalated"}})
	if !isErr[0] || !strings.Contains(res[0], "justification") || len(c.permissionRequests()) != 2 {
		t.Fatalf("escalation without a justification: %q", res[0])
	}
}

// TestCreatedProtectedPathReported: a protected path that did not exist
// (so the sandbox could not mount over it) and that a command creates is
// reported in the result.
func TestCreatedProtectedPathReported(t *testing.T) {
	requireSandbox(t)
	env := newEnv(t, "")
	c, sid := env.fullSession()
	res, _, _ := runTools(t, env, c, sid, toolCallReq{"run_command", map[string]any{"command": "mkdir .acpd && echo 'instructions = \"x\"' > .acpd/config.toml"}})
	if !strings.Contains(res[0], "created .acpd") || !strings.Contains(res[0], "review") {
		t.Fatalf("result %q does not report the created protected path", res[0])
	}
}

// TestGitWritesAskToLeaveTheSandbox: where the sandbox keeps .git
// read-only, a git command that writes the repository asks (in full mode
// too) to run outside the sandbox, saying why; approved, the commit is
// made; rejected, nothing is. Reading git (status, log) runs unasked.
func TestGitWritesAskToLeaveTheSandbox(t *testing.T) {
	requireSandbox(t)
	if !slices.Contains(sandbox.DefaultProtected, ".git") {
		t.Skip("the sandbox does not keep .git read-only as a whole")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	env := newEnv(t, "")
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", env.cwd}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	if err := os.WriteFile(env.path("a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, sid := env.fullSession()
	commitLine := "git add a.txt && git -c user.name=t -c user.email=t@e commit -qm first"
	commit := toolCallReq{"run_command", map[string]any{"command": commitLine}}
	res, isErr, _ := runTools(t, env, c, sid, toolCallReq{"run_command", map[string]any{"command": "git status --short && git log --oneline -1 || true"}})
	if isErr[0] || len(c.permissionRequests()) != 0 {
		t.Fatalf("git status asked or failed: %q", res[0])
	}
	c.setPerm(choose(acp.PermissionOptionKindRejectOnce))
	res, isErr, _ = runTools(t, env, c, sid, commit)
	if !isErr[0] || !strings.Contains(res[0], "git add writes to .git") || !strings.Contains(res[0], "not approved") {
		t.Fatalf("rejected git commit: %q", res[0])
	}
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	res, isErr, _ = runTools(t, env, c, sid, commit)
	if isErr[0] || !strings.Contains(git("log", "--oneline"), "first") {
		t.Fatalf("approved git commit: %q", res[0])
	}
	reqs := c.permissionRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d permission requests, want 2", len(reqs))
	}
	if r := reqs[0]; r.ToolCall.Title == nil || *r.ToolCall.Title != "Run outside the sandbox: "+commitLine {
		t.Errorf("request titled %v", r.ToolCall.Title)
	}
}
