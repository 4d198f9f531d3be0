package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"acpd/cmd/acpd/internal/run"
	"acpd/internal/testpeers"
)

var (
	resultSchemaOnce sync.Once
	resultSchema     *jsonschema.Schema
	resultSchemaErr  error
)

// checkResult decodes and schema-checks the --output json object.
func checkResult(t *testing.T, line string) run.Result {
	t.Helper()
	resultSchemaOnce.Do(func() {
		raw, err := os.ReadFile(filepath.Join("testdata", "run-result.schema.json"))
		if err != nil {
			resultSchemaErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			resultSchemaErr = err
			return
		}
		c := jsonschema.NewCompiler()
		if err = c.AddResource("file:///run-result.schema.json", doc); err == nil {
			resultSchema, resultSchemaErr = c.Compile("file:///run-result.schema.json")
		} else {
			resultSchemaErr = err
		}
	})
	if resultSchemaErr != nil {
		t.Fatal(resultSchemaErr)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
	if err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, line)
	}
	if err := resultSchema.Validate(inst); err != nil {
		t.Errorf("result does not match its schema: %v\n%s", err, line)
	}
	var res run.Result
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRunOutputJSON: one object on stdout with everything a CI job reads.
func TestRunOutputJSON(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, runScript)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--output", "json", "--yes", "--cwd", project, "--model", "replay/"+script, "write the file")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if strings.Count(stdout, "\n") != 1 {
		t.Fatalf("stdout is not one JSON line:\n%s", stdout)
	}
	res := checkResult(t, stdout)
	if res.StopReason != "end_turn" || res.ExitCode != 0 || res.SessionID == "" || res.Text != "Writing the file.\n\nAll done." {
		t.Errorf("result %+v", res)
	}
	if len(res.ToolCalls) != 2 || res.ToolCalls[0].Status != "completed" || res.ToolCalls[1].Status != "completed" || res.ToolCalls[1].Kind != "execute" {
		t.Errorf("tool calls %+v", res.ToolCalls)
	}
	if want := filepath.Join(project, "out.txt"); len(res.FilesChanged) != 1 || res.FilesChanged[0] != want {
		t.Errorf("files changed %q, want [%s]", res.FilesChanged, want)
	}
	if len(res.Permissions) != 2 || res.Permissions[0].Decision != "allowed" || res.Permissions[0].By != "policy" {
		t.Errorf("permissions %+v", res.Permissions)
	}
	if strings.Contains(stderr, "✓") {
		t.Errorf("--output json summarised on stderr:\n%s", stderr)
	}
}

// TestRunStreamJSONSchema: --json lines are ACP session notifications, then
// the result object.
func TestRunStreamJSONSchema(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t, false)
	iso, project, script := runSetup(t, runScript)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--output", "stream-json", "--yes", "--cwd", project, "--model", "replay/"+script, "write the file")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	for i, l := range lines[:len(lines)-1] {
		if err := schema.validateDef("SessionNotification", json.RawMessage(l)); err != nil {
			t.Errorf("line %d: %v\n%s", i+1, err, l)
		}
	}
	if res := checkResult(t, lines[len(lines)-1]); res.StopReason != "end_turn" {
		t.Errorf("result %+v", res)
	}
}

// TestRunApproveEdits: the edit inside the project is allowed, the command
// is refused (no terminal to ask on).
func TestRunApproveEdits(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, runScript)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--approve", "edits", "--output", "json", "--cwd", project, "--model", "replay/"+script, "write the file")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if got, _ := fileContent(filepath.Join(project, "out.txt")); got != "hello from run\n" {
		t.Errorf("out.txt = %q: the edit was not allowed", got)
	}
	res := checkResult(t, stdout)
	if len(res.ToolCalls) != 2 || res.ToolCalls[0].Status != "completed" || res.ToolCalls[1].Status != "failed" {
		t.Errorf("tool calls %+v, want the write completed and the command failed", res.ToolCalls)
	}
	if len(res.Permissions) != 2 || res.Permissions[0].Decision != "allowed" || res.Permissions[1].Decision != "rejected" || res.Permissions[1].By != "no-terminal" {
		t.Errorf("permissions %+v", res.Permissions)
	}
	if !strings.Contains(stderr, `rejected "echo`) {
		t.Errorf("the refusal is not reported on stderr:\n%s", stderr)
	}
}

// TestRunPolicy: --policy rules decide: the command is allowed by a rule,
// the edit denied by another; --approve none refuses nothing more here.
func TestRunPolicy(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, strings.Replace(runScript, "echo ran-$((40+2))", "echo policy-ok", 1))
	policy := writeFile(t, filepath.Join(t.TempDir(), "policy.toml"), `
[[permissions.rules]]
action = "allow"
tool = "run_command"
match = "echo *"

[[permissions.rules]]
action = "deny"
tool = "edit_file"
`)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--approve", "none", "--policy", policy, "--output", "json", "--cwd", project, "--model", "replay/"+script, "write the file")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if _, ok := fileContent(filepath.Join(project, "out.txt")); ok {
		t.Error("out.txt was written although a rule denies edits")
	}
	res := checkResult(t, stdout)
	if len(res.ToolCalls) != 2 || res.ToolCalls[0].Status != "failed" || res.ToolCalls[1].Status != "completed" {
		t.Errorf("tool calls %+v, want the write failed and the command completed", res.ToolCalls)
	}
	if len(res.Permissions) != 2 || res.Permissions[0].Decision != "rejected" || res.Permissions[1].Decision != "allowed" {
		t.Errorf("permissions %+v", res.Permissions)
	}

	bad := writeFile(t, filepath.Join(t.TempDir(), "bad.toml"), "[[permissions.rules]]\naction = \"maybe\"\ntool = \"x\"\n")
	if _, stderr, code := runCLI(t, iso.Env(), "run", "--policy", bad, "--cwd", project, "hi"); code != 2 || !strings.Contains(stderr, "--policy") {
		t.Errorf("bad policy: exit %d; stderr:\n%s", code, stderr)
	}
}

// TestRunContinue: --continue resumes the latest session of the cwd.
func TestRunContinue(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, twoAnswers)
	if _, stderr, code := runCLI(t, iso.Env(), "run", "--continue", "--cwd", project, "--model", "replay/"+script, "none yet"); code != 1 || !strings.Contains(stderr, "no session") {
		t.Errorf("--continue without a session: exit %d; stderr:\n%s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--cwd", project, "--model", "replay/"+script, "one")
	if code != 0 || stdout != "First answer.\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, iso.Env(), "run", "-c", "--cwd", project, "--model", "replay/"+script, "two")
	if code != 0 || stdout != "Second answer.\n" {
		t.Errorf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
}

// TestRunFollowUp: each --follow-up is the session's next turn, in
// order, once the turn before it ended, with the turns before in its
// request; a turn that does not end normally stops the rest and sets the
// exit status.
func TestRunFollowUp(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, `{"type":"expect","contains":"prompt-alpha"}
{"type":"text","text":"First answer."}
{"type":"finish"}
{"type":"expect","contains":"First answer."}
{"type":"expect","contains":"prompt-beta"}
{"type":"text","text":"Second answer."}
{"type":"finish"}
{"type":"expect","contains":"Second answer."}
{"type":"expect","contains":"prompt-gamma"}
{"type":"finish","finish":"refusal"}
`)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--output", "json", "--cwd", project, "--model", "replay/"+script,
		"--follow-up", "prompt-beta", "--follow-up", "prompt-gamma", "--follow-up", "prompt-delta", "prompt-alpha")
	if code != run.ExitRefusal {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, run.ExitRefusal, stderr)
	}
	res := checkResult(t, stdout)
	if res.Text != "First answer.\n\nSecond answer." || res.StopReason != "refusal" {
		t.Errorf("result %+v", res)
	}
	wantStderr(t, stderr, "follow-up 1 of 3", "follow-up 2 of 3", "1 follow-up(s) not sent")
	if strings.Contains(stderr, "follow-up 3 of 3") {
		t.Errorf("the follow-up after the refusal was sent:\n%s", stderr)
	}
}

// TestRunMCPConfig: a server of a --mcp-config file reaches the model.
func TestRunMCPConfig(t *testing.T) {
	t.Parallel()
	node, entry := testpeers.Everything(t)
	iso, project, script := runSetup(t, `{"type":"tool_done","toolCallId":"call_e","toolName":"mcp__everything__echo","input":{"message":"hi there"}}
{"type":"finish"}
{"type":"expect","contains":"hi there"}
{"type":"text","text":"Echoed."}
{"type":"finish"}
`)
	// A loaded machine may start node slower than the default grace.
	iso.writeUserConfig(t, "[agent]\nmcp_grace_ms = 60000\n")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"everything": map[string]any{"command": node, "args": []string{entry, "stdio"}},
	}})
	file := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"), string(cfg))
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--yes", "--mcp-config", file, "--output", "json", "--cwd", project, "--model", "replay/"+script, "echo")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	res := checkResult(t, stdout)
	if res.Text != "Echoed." || len(res.ToolCalls) != 1 || res.ToolCalls[0].Status != "completed" {
		t.Errorf("result %+v", res)
	}
	bad := writeFile(t, filepath.Join(t.TempDir(), "bad.json"), `{"mcpServers": {"x": {}}}`)
	if _, stderr, code := runCLI(t, iso.Env(), "run", "--mcp-config", bad, "--cwd", project, "hi"); code != 2 || !strings.Contains(stderr, "neither command nor url") {
		t.Errorf("bad --mcp-config: exit %d; stderr:\n%s", code, stderr)
	}
}

// TestRunExitCodes: each way a run ends has its own status.
func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		script string
		args   []string
		code   int
		stop   string
	}{
		{"refusal", `{"type":"finish","finish":"refusal"}`, nil, run.ExitRefusal, "refusal"},
		{"max_tokens", `{"type":"text","text":"partial"}` + "\n" + `{"type":"finish","finish":"max_tokens"}`, nil, run.ExitLimit, "max_tokens"},
		{"max_turn_requests", runScript, []string{"--yes", "--max-turn-requests", "1"}, run.ExitLimit, "max_turn_requests"},
		{"timeout", `{"type":"text","text":"Starting."}` + "\n" + `{"type":"delay","ms":600000}` + "\n" + `{"type":"finish"}`, []string{"--timeout", "3s"}, run.ExitTimeout, "cancelled"}, // long enough for session/new on a loaded machine
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			iso, project, script := runSetup(t, c.script+"\n")
			args := append([]string{"run", "--output", "json", "--cwd", project, "--model", "replay/" + script}, c.args...)
			stdout, stderr, code := runCLI(t, iso.Env(), append(args, "go")...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, c.code, stderr)
			}
			if res := checkResult(t, stdout); res.StopReason != c.stop || res.ExitCode != c.code {
				t.Errorf("result %+v, want stop reason %s", res, c.stop)
			}
		})
	}
	t.Run("crashed", func(t *testing.T) {
		t.Parallel()
		iso, project, _ := runSetup(t, "")
		stdout, stderr, code := runCLI(t, iso.Env(), "run", "--output", "json", "--cwd", project, "--agent", "sh -c 'read line; exit 7'", "go")
		if code != run.ExitCrashed {
			t.Fatalf("exit %d, want %d; stderr:\n%s", code, run.ExitCrashed, stderr)
		}
		if res := checkResult(t, stdout); res.ExitCode != run.ExitCrashed || !strings.Contains(res.Error, "exit") {
			t.Errorf("result %+v", res)
		}
	})
}

// TestRunQuiet: only the answer; no tool call lines or summary.
func TestRunQuiet(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, runScript)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--quiet", "--yes", "--cwd", project, "--model", "replay/"+script, "write the file")
	if code != 0 || stdout != "Writing the file.\nAll done.\n" || stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestRunFailedRunLeavesNoSession: a run that fails before its prompt
// reaches a model (an unusable --model, a --mode the agent lacks) deletes
// the session it created; `acpd sessions list` shows only the run that
// answered.
func TestRunFailedRunLeavesNoSession(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, twoAnswers)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--output", "json", "--cwd", project, "--model", "nope/x", "bad model")
	if code != run.ExitFailed {
		t.Fatalf("--model nope/x: exit %d; stderr:\n%s", code, stderr)
	}
	if res := checkResult(t, stdout); res.SessionID != "" || !strings.Contains(res.Error, "cannot be used") {
		t.Errorf("--model nope/x: result %+v, want no session and the model's error", res)
	}
	if _, stderr, code := runCLI(t, iso.Env(), "run", "--cwd", project, "--model", "replay/"+script, "--mode", "bogus", "bad mode"); code != run.ExitUsage {
		t.Fatalf("--mode bogus: exit %d; stderr:\n%s", code, stderr)
	}
	if stdout, stderr, code := runCLI(t, iso.Env(), "run", "--cwd", project, "--model", "replay/"+script, "good one"); code != 0 || stdout != "First answer.\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	list, stderr, code := runCLI(t, iso.Env(), "sessions", "list")
	if code != 0 {
		t.Fatalf("sessions list: exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(list, "good one") || strings.Contains(list, "bad model") || strings.Contains(list, "bad mode") || strings.Count(list, "\n") != 2 {
		t.Errorf("sessions list shows failed runs' sessions:\n%s", list)
	}
}

// TestRunOutputTokens: the result's tokens are the turn's
// PromptResponse.usage, which acpd's agent sums over the turn's model
// requests; a turn whose responses report no usage has none.
func TestRunOutputTokens(t *testing.T) {
	t.Parallel()
	const script = `{"type":"tool_done","toolCallId":"c1","toolName":"list_dir","input":{"path":"."}}
{"type":"usage","usage":{"inputTokens":100,"outputTokens":10,"cacheReadTokens":40,"reasoningTokens":3}}
{"type":"finish"}
{"type":"text","text":"Listed."}
{"type":"usage","usage":{"inputTokens":120,"outputTokens":5,"cacheReadTokens":100,"cacheWriteTokens":8}}
{"type":"finish"}
`
	iso, project, path := runSetup(t, script)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--output", "json", "--yes", "--cwd", project, "--model", "replay/"+path, "list it")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	res := checkResult(t, stdout)
	tk := res.Tokens
	if tk == nil || tk.Input != 220-140-8 || tk.Output != 15 || tk.Total != 235 ||
		tk.CachedRead == nil || *tk.CachedRead != 140 || tk.CachedWrite == nil || *tk.CachedWrite != 8 || tk.Thought == nil || *tk.Thought != 3 {
		t.Errorf("tokens %s", stdout)
	}

	iso, project, path = runSetup(t, `{"type":"text","text":"Hi."}
{"type":"finish"}
`)
	stdout, stderr, code = runCLI(t, iso.Env(), "run", "--output", "json", "--cwd", project, "--model", "replay/"+path, "hi")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if res := checkResult(t, stdout); res.Tokens != nil {
		t.Errorf("tokens without usage: %s", stdout)
	}
}
