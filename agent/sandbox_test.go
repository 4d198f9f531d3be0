//go:build linux

package agent

import (
	"os"
	"path/filepath"
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
// the sandbox; a write outside the project fails there, the model is told
// the sandbox probably denied it, and running it outside the sandbox needs
// an explicit escalation approval, asked every time.
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
	target := filepath.Join(env.outside, "escaped")
	res, isErr, _ := runTools(t, env, c, sid,
		toolCallReq{"run_command", map[string]any{"command": "echo in > inside.txt"}},
		toolCallReq{"run_command", map[string]any{"command": "echo out > " + target}},
		toolCallReq{"run_command", map[string]any{"command": "echo evil > .git/hooks/pre-commit"}},
	)
	if isErr[0] || !fileExists(env.path("inside.txt")) {
		t.Fatalf("command inside the project: %q", res[0])
	}
	for i, f := range []string{target, env.path(".git/hooks/pre-commit")} {
		r := res[i+1]
		if !isErr[i+1] || !strings.Contains(r, "sandbox") || !strings.Contains(r, "probably denied") || !strings.Contains(r, "not approved") {
			t.Errorf("denied command %d: %q", i+1, r)
		}
		if fileExists(f) {
			t.Errorf("%s was written", f)
		}
	}
	reqs := c.permissionRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d permission requests, want the two escalations", len(reqs))
	}
	for _, r := range reqs {
		if r.ToolCall.Title == nil || !strings.HasPrefix(*r.ToolCall.Title, "Run outside the sandbox") {
			t.Errorf("escalation request titled %v", r.ToolCall.Title)
		}
		for _, o := range r.Options {
			if o.Kind == acp.PermissionOptionKindAllowAlways {
				t.Errorf("an escalation offers %q", o.Name)
			}
		}
	}
	// Approved, the command runs outside the sandbox.
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	res, isErr, _ = runTools(t, env, c, sid, toolCallReq{"run_command", map[string]any{"command": "echo out > " + target}})
	if isErr[0] || !strings.Contains(res[0], "approved running the command outside the sandbox") || !fileExists(target) {
		t.Fatalf("escalated command: %q", res[0])
	}
	if len(c.permissionRequests()) != 3 {
		t.Fatalf("the escalation was not asked again")
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
