package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/internal/syncbuf"
)

// outputScript runs a command that prints eight lines and succeeds, then
// one that prints seven and fails.
const outputScript = `{"type":"tool_done","toolCallId":"call_a","toolName":"run_command","input":{"command":"for i in 1 2 3 4 5 6 7 8; do echo line-$i; done"}}
{"type":"tool_done","toolCallId":"call_b","toolName":"run_command","input":{"command":"for i in 1 2 3 4 5 6 7; do echo fail-$i; done; exit 3"}}
{"type":"finish"}
{"type":"text","text":"Done."}
{"type":"finish"}
`

// TestRunCommandOutput: the plain output (a CI log) shows the last lines of
// a command that succeeded and all of a failed one's; --verbose shows all;
// --output json has each command's output and exit code.
func TestRunCommandOutput(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, outputScript)
	args := []string{"run", "--yes", "--cwd", project, "--model", "replay/" + script}
	_, stderr, code := runCLI(t, iso.Env(), append(args, "go")...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	wantStderr(t, stderr, "  │ … 3 earlier lines (--verbose shows all)\n  │ line-4\n", "  └ line-8\n",
		"✗ for i in 1 2 3 4 5 6 7; do echo fail-$i; done; exit 3\n  │ fail-1\n", "  └ fail-7\n")
	if strings.Contains(stderr, "│ line-3") {
		t.Errorf("a successful command's whole output was shown:\n%s", stderr)
	}

	_, stderr, code = runCLI(t, iso.Env(), append(args, "--verbose", "go")...)
	if code != 0 {
		t.Fatalf("--verbose: exit %d; stderr:\n%s", code, stderr)
	}
	wantStderr(t, stderr, "✓ for i in 1 2 3 4 5 6 7 8; do echo line-$i; done\n  │ line-1\n", "  └ line-8\n")

	stdout, stderr, code := runCLI(t, iso.Env(), append(args, "--output", "json", "go")...)
	if code != 0 {
		t.Fatalf("json: exit %d; stderr:\n%s", code, stderr)
	}
	res := checkResult(t, stdout)
	if len(res.ToolCalls) != 2 {
		t.Fatalf("tool calls %+v", res.ToolCalls)
	}
	a, b := res.ToolCalls[0], res.ToolCalls[1]
	if a.Output != "line-1\nline-2\nline-3\nline-4\nline-5\nline-6\nline-7\nline-8" || a.ExitCode == nil || *a.ExitCode != 0 {
		t.Errorf("the first command's record %+v", a)
	}
	if !strings.HasPrefix(b.Output, "fail-1\n") || !strings.HasSuffix(b.Output, "fail-7") || b.ExitCode == nil || *b.ExitCode != 3 || b.Status != "failed" {
		t.Errorf("the failed command's record %+v", b)
	}
}

// TestRunCommandOutputText: an agent that shows a command's output as the
// call's text content (no terminal) has it shown the same way.
func TestRunCommandOutputText(t *testing.T) {
	t.Parallel()
	iso, project, _ := runSetup(t, "")
	agent, err := filepath.Abs(filepath.Join("testdata", "text_output_agent.py"))
	if err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, iso.Env(), "run", "--cwd", project, "--agent", agent, "go")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	wantStderr(t, stderr, "✗ make test\n  │ text-line-1\n", "  └ text-line-7\n")
	if strings.Contains(stderr, "```") {
		t.Errorf("the fence was shown:\n%s", stderr)
	}
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--cwd", project, "--agent", agent, "--output", "json", "go")
	if code != 0 {
		t.Fatalf("json: exit %d; stderr:\n%s", code, stderr)
	}
	if res := checkResult(t, stdout); len(res.ToolCalls) != 1 || !strings.HasPrefix(res.ToolCalls[0].Output, "text-line-1\n") {
		t.Errorf("result %+v", res)
	}
}

// TestRunStreamJSONCommandOutput: stream-json carries a running command's
// output as it comes (terminal_output) and its end (terminal_exit, with
// the whole text) before the call's final update. The command waits for a
// file the test writes once it has seen the first chunk.
func TestRunStreamJSONCommandOutput(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t, false)
	iso, project, script := runSetup(t, `{"type":"tool_done","toolCallId":"call_s","toolName":"run_command","input":{"command":"echo early; while [ ! -e go.flag ]; do sleep 0.05; done; echo late"}}
{"type":"finish"}
{"type":"text","text":"Done."}
{"type":"finish"}
`)
	cmd := exec.Command(acpdBinary(t), "run", "--yes", "--output", "stream-json", "--cwd", project, "--model", "replay/"+script, "go")
	cmd.Env = iso.Env()
	stderr := &syncbuf.Buffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	type meta struct {
		Output *struct {
			Data string `json:"data"`
		} `json:"terminal_output"`
		Exit *struct {
			ExitCode *int   `json:"exit_code"`
			Output   string `json:"output"`
		} `json:"terminal_exit"`
	}
	var streamed, last string
	sawExit, flagged := false, false
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		last = line
		var n acp.SessionNotification
		if json.Unmarshal([]byte(line), &n) != nil || n.Update.ToolCallUpdate == nil {
			continue
		}
		if err := schema.validateDef("SessionNotification", json.RawMessage(line)); err != nil {
			t.Errorf("%v\n%s", err, line)
		}
		u := n.Update.ToolCallUpdate
		if u.Status != nil && *u.Status == acp.ToolCallStatusCompleted && !sawExit {
			t.Errorf("the call completed before its terminal_exit line")
		}
		raw, _ := json.Marshal(u.Meta)
		var m meta
		json.Unmarshal(raw, &m)
		if m.Output != nil {
			streamed += m.Output.Data
		}
		if !flagged && strings.Contains(streamed, "early") {
			if m.Exit != nil {
				t.Fatalf("the first output came with the end: %s", line)
			}
			flagged = true
			if err := os.WriteFile(filepath.Join(project, "go.flag"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if m.Exit != nil {
			sawExit = true
			if m.Exit.ExitCode == nil || *m.Exit.ExitCode != 0 || m.Exit.Output != "early\nlate" {
				t.Errorf("terminal_exit %s", line)
			}
		}
	}
	if code := exitCode(t, cmd, stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !flagged || !sawExit || !strings.Contains(streamed, "early") || !strings.Contains(streamed, "late") {
		t.Errorf("streamed %q (flag written %v, exit seen %v)", streamed, flagged, sawExit)
	}
	if res := checkResult(t, last); len(res.ToolCalls) != 1 || res.ToolCalls[0].Output != "early\nlate" {
		t.Errorf("result %+v", res)
	}
}
