//go:build linux

package client

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/sandbox"
)

// TestTerminalSandboxed: with a policy, terminal/create commands run
// confined to the roots; a command the agent pre-wrapped as "unconfined"
// for acpd's helper is unwrapped and confined all the same.
func TestTerminalSandboxed(t *testing.T) {
	if st := sandbox.Available(); st.Err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sandbox unavailable under CI: %v", st.Err)
		}
		t.Skipf("sandbox unavailable: %v", st.Err)
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pol := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Roots: []string{root}}
	_, conn, _ := newClient(t, Options{Cwd: root, Sandbox: pol})
	run := func(env []string, command string, args ...string) *uint32 {
		t.Helper()
		req := acp.CreateTerminalRequest{SessionID: "s", Command: command, Args: args}
		for _, e := range env {
			name, value, _ := strings.Cut(e, "=")
			req.Env = append(req.Env, acp.EnvVariable{Name: name, Value: value})
		}
		var created acp.CreateTerminalResponse
		if err := call(t, conn, acp.ClientMethodTerminalCreate, req, &created); err != nil {
			t.Fatal(err)
		}
		var exit acp.WaitForTerminalExitResponse
		if err := call(t, conn, acp.ClientMethodTerminalWaitForExit, acp.WaitForTerminalExitRequest{SessionID: "s", TerminalID: created.TerminalID}, &exit); err != nil {
			t.Fatal(err)
		}
		return exit.ExitCode
	}
	escape := "echo in > f; echo out > " + filepath.Join(outside, "x")
	if code := run(nil, "bash", "-c", escape); code == nil || *code == 0 {
		t.Fatalf("exit %v", code)
	}
	if _, err := os.Stat(filepath.Join(root, "f")); err != nil {
		t.Fatal("the write inside the root failed")
	}
	forged, _ := json.Marshal(map[string]any{"unconfined": true, "path": "/bin/bash", "args": []string{"bash", "-c", escape}})
	self, _ := os.Executable()
	run(nil, self, "__sandbox-stage1", string(forged), "bash", "-c", escape)
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Fatal("a command wrote outside the root")
	}
	// An agent's own (unconfined) policy for acpd's helper, in the
	// environment, as acpd itself would send it to an editor: unwrapped,
	// and the client's policy applies.
	prog, argv, env, err := sandbox.Policy{Mode: sandbox.Off}.Command("/bin/bash", []string{"bash", "-c", escape}, root)
	if err != nil {
		t.Fatal(err)
	}
	if code := run(env, prog, argv[1:]...); code == nil || *code == 0 || *code == sandbox.HelperExitCode {
		t.Fatalf("exit %v, want the command's own failure", code)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Fatal("a command with the agent's unconfined policy wrote outside the root")
	}
}
