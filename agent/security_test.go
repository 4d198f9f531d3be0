package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"acpd/acp"
)

// TestSearchSkipsProtectedDirs: grep and glob of a root that contains acpd's
// configuration and state directories (a session opened in the home
// directory) never read or list what is in them, in any mode: the
// permission check covers only the searched path, and those places always
// ask.
func TestSearchSkipsProtectedDirs(t *testing.T) {
	env := newEnv(t, "")
	const marker = "sk-test-0123456789"
	for _, f := range []string{
		filepath.Join(env.base, "config", "acpd", "credentials.json"),
		filepath.Join(env.store.Dir(), "leak.jsonl"),
	} {
		if err := os.WriteFile(f, []byte(`{"key":"`+marker+`"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env.write("notes.txt", "the "+marker+" is not a secret here\n")
	c := env.start(nil)
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.base, McpServers: []acp.McpServer{}}, &resp); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	sid := resp.SessionID
	for _, mode := range []string{modeAsk, modeFull} {
		c.mustMode(sid, mode)
		res, isErr, _ := runTools(t, env, c, sid,
			toolCallReq{"grep", map[string]any{"pattern": marker}},
			toolCallReq{"glob", map[string]any{"pattern": "**/*.json*"}},
			toolCallReq{"grep", map[string]any{"pattern": marker, "path": "config"}},
		)
		if isErr[0] || !strings.Contains(res[0], "notes.txt") || strings.Count(res[0], marker) != 1 {
			t.Errorf("%s mode: grep = %q, want only project/notes.txt", mode, res[0])
		}
		if isErr[1] || res[1] != "No files match." {
			t.Errorf("%s mode: glob = %q, want no files", mode, res[1])
		}
		if isErr[2] || res[2] != "No matches." {
			t.Errorf("%s mode: grep of the config's parent = %q, want no matches", mode, res[2])
		}
	}
	if n := len(c.permissionRequests()); n != 0 {
		t.Errorf("%d permission requests, want none", n)
	}
}

// TestRunCommandCwdOutsideAsks: run_command in a directory outside the
// roots, in .git or in acpd's state asks even in full mode, and a rejected
// command does not run.
func TestRunCommandCwdOutsideAsks(t *testing.T) {
	env := newEnv(t, "")
	if err := os.MkdirAll(env.path(".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, sid := env.fullSession()
	dirs := []string{env.outside, ".git", env.store.Dir()}
	var calls []toolCallReq
	for _, d := range dirs {
		calls = append(calls, toolCallReq{"run_command", map[string]any{"command": "touch ran", "cwd": d}})
	}
	res, isErr, _ := runTools(t, env, c, sid, calls...)
	for i, d := range dirs {
		if !isErr[i] || !strings.Contains(res[i], "rejected") {
			t.Errorf("cwd %s: %q, want a rejection", d, res[i])
		}
	}
	if n := len(c.permissionRequests()); n != len(dirs) {
		t.Errorf("%d permission requests, want %d", n, len(dirs))
	}
	for _, d := range []string{env.outside, env.path(".git"), env.store.Dir()} {
		if fileExists(filepath.Join(d, "ran")) {
			t.Errorf("the rejected command ran in %s", d)
		}
	}
	// Inside the project full mode still runs without asking.
	res, isErr, _ = runTools(t, env, c, sid, toolCallReq{"run_command", map[string]any{"command": "touch ran"}})
	if isErr[0] || !fileExists(env.path("ran")) {
		t.Errorf("command in the project: %q", res[0])
	}
	if n := len(c.permissionRequests()); n != len(dirs) {
		t.Errorf("%d permission requests, want %d", n, len(dirs))
	}
}

// TestProviderKeyEnvNotInherited: a provider's api_key_env is a secret
// whatever its name (here an ordinary-looking one): commands do not inherit
// it unless [env] allow names it.
func TestProviderKeyEnvNotInherited(t *testing.T) {
	t.Setenv("WORK_CFG", "cfg-value-1234")
	t.Setenv("PLAIN_SETTING", "plain-value")
	for _, allow := range []bool{false, true} {
		conf := "[providers.work]\ndialect = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\napi_key_env = \"WORK_CFG\"\n"
		if allow {
			conf += "[env]\nallow = [\"WORK_*\"]\n"
		}
		env := newEnv(t, conf)
		c, sid := env.fullSession()
		res, isErr, _ := runTools(t, env, c, sid, toolCallReq{"run_command", map[string]any{"command": "env"}})
		if isErr[0] || !strings.Contains(res[0], "PLAIN_SETTING=plain-value") {
			t.Fatalf("env: %q", res[0])
		}
		if got := strings.Contains(res[0], "cfg-value-1234"); got != allow {
			t.Errorf("allow %v: the command sees the provider's key: %v", allow, got)
		}
		c.close()
	}
}
