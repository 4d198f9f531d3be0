package main

// End-to-end interop tests: the official ACP TypeScript SDK client
// (testdata/node_modules, pinned by testdata/package-lock.json) drives the
// built acpd binary through the scripts in testdata/interop. Each script
// asserts the protocol flow itself and records every line acpd sent; this
// side checks the files on disk and validates each recorded message against
// the ACP JSON schema.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"acpd/internal/syncbuf"
)

var (
	flagNodeTimeout = flag.Duration("interop.timeout", 90*time.Second, "how long one interop script may run before it is killed")
	flagKeep        = flag.String("interop.keep", "", "keep each interop test's records (acpd's output, input and log) in `dir`/<test name>")
)

// interopRun is one run of a node interop script.
type interopRun struct {
	iso     *isolation
	project string
	other   string // a second directory, outside the project
	recDir  string
	replay  map[string]string // replay script name -> path
}

func newInteropRun(t *testing.T) *interopRun {
	t.Helper()
	root := t.TempDir()
	r := &interopRun{
		iso:     newIsolation(t),
		project: filepath.Join(root, "project"),
		other:   filepath.Join(root, "elsewhere"),
		recDir:  filepath.Join(root, "record"),
		replay:  map[string]string{},
	}
	if *flagKeep != "" {
		r.recDir = filepath.Join(*flagKeep, t.Name())
		if err := os.RemoveAll(r.recDir); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{r.project, r.other, r.recDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// addReplay writes a replay script (JSONL lines) and registers it by name.
func (r *interopRun) addReplay(t *testing.T, name string, lines ...string) {
	t.Helper()
	r.replay[name] = writeFile(t, filepath.Join(r.recDir, "replay", name+".jsonl"), strings.Join(lines, "\n")+"\n")
}

// run executes testdata/interop/<script>.mjs and returns its JSON summary.
// On failure it shows node's stderr and every acpd log.
func (r *interopRun) run(t *testing.T, script string, extra map[string]any) map[string]any {
	t.Helper()
	node := requirePeers(t)
	schema := loadSchema(t, false)
	cfg := map[string]any{
		"acpd":      acpdBinary(t),
		"project":   r.project,
		"otherDir":  r.other,
		"recordDir": r.recDir,
		"replay":    r.replay,
	}
	for k, v := range extra {
		cfg[k] = v
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := writeFile(t, filepath.Join(r.recDir, "config.json"), string(b))
	scriptPath, err := filepath.Abs(filepath.Join("..", "..", "testdata", "interop", script+".mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *flagNodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, scriptPath, cfgPath)
	cmd.Env = r.iso.Env()
	cmd.Dir = r.project
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	logs := r.acpdLogs(t)
	if runErr != nil {
		t.Fatalf("node %s: %v\n--- node stderr:\n%s\n--- node stdout:\n%s%s", script, runErr, stderr.String(), stdout.String(), logs)
	}
	if s := stderr.String(); s != "" {
		t.Logf("node %s stderr:\n%s", script, s)
	}
	// Validate everything acpd sent, process by process.
	outs, _ := filepath.Glob(filepath.Join(r.recDir, "acpd-*.out.jsonl"))
	if len(outs) == 0 {
		t.Fatalf("%s recorded no acpd output", script)
	}
	for _, out := range outs {
		base := strings.TrimSuffix(out, ".out.jsonl")
		in := readLines(t, base+".in.jsonl")
		got := readLines(t, out)
		schema.validateConversation(t, filepath.Base(base), in, got, true)
		if errLog, err := os.ReadFile(base + ".stderr"); err == nil {
			checkLog(t, filepath.Base(base), string(errLog))
		}
	}
	if t.Failed() {
		t.Log(logs)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var sum map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("node %s printed no JSON summary: %v\nstdout:\n%s", script, err, stdout.String())
	}
	return sum
}

// acpdLogs formats the stderr of every acpd process of the run.
func (r *interopRun) acpdLogs(t *testing.T) string {
	files, _ := filepath.Glob(filepath.Join(r.recDir, "acpd-*.stderr"))
	sort.Strings(files)
	var b strings.Builder
	for _, f := range files {
		data, _ := os.ReadFile(f)
		fmt.Fprintf(&b, "\n--- %s:\n%s", filepath.Base(f), data)
	}
	return b.String()
}

// readFileString reads a file or fails the test.
func readFileString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestInteropCore drives the session lifecycle across three acpd processes:
// a turn with reasoning, text and a failed call to an unknown tool, a
// cancelled turn, list, load (replay), set_config_option, resume, a turn that
// needs the whole transcript, close and delete.
func TestInteropCore(t *testing.T) {
	t.Parallel()
	r := newInteropRun(t)
	r.addReplay(t, "core",
		`# 1: reasoning, text and a call to a tool that does not exist`,
		`{"type":"reasoning","text":"The user wants the widget frobnicated. "}`,
		`{"type":"reasoning","text":"I will try the frobnicate tool."}`,
		`{"type":"reasoning_done"}`,
		`{"type":"text","text":"Let me frobnicate "}`,
		`{"type":"text","text":"the widget."}`,
		`{"type":"tool_start","toolCallId":"call_frob","toolName":"frobnicate"}`,
		`{"type":"tool_delta","toolCallId":"call_frob","text":"{\"widget\":"}`,
		`{"type":"tool_delta","toolCallId":"call_frob","text":"\"w1\"}"}`,
		`{"type":"tool_done","toolCallId":"call_frob"}`,
		`{"type":"finish","finish":"tool_use"}`,
		`# 2: the model got the failed tool result`,
		`{"type":"expect","contains":"unknown tool \\\"frobnicate\\\""}`,
		`{"type":"expect","contains":"\"isError\":true"}`,
		`{"type":"text","text":"There is no frobnicate tool, so I could not frobnicate the widget."}`,
		`{"type":"finish","finish":"end_turn"}`,
		`# 3: a long answer, cancelled by the client after its first chunk`,
		`{"type":"text","text":"Starting a long answer"}`,
		`{"type":"delay","ms":60000}`,
		`{"type":"text","text":"never sent"}`,
		`{"type":"finish"}`,
		`# 4: in a third process, after resume: the whole transcript is there`,
		`{"type":"expect","contains":"Please frobnicate the widget"}`,
		`{"type":"expect","contains":"There is no frobnicate tool, so I could not frobnicate the widget."}`,
		`{"type":"expect","contains":"Tell me a long story"}`,
		`{"type":"expect","contains":"Starting a long answer"}`,
		`{"type":"expect","contains":"What did we talk about?"}`,
		`{"type":"text","text":"I remember everything."}`,
		`{"type":"finish"}`,
	)
	sum := r.run(t, "core", nil)
	sid, _ := sum["sessionId"].(string)
	if sid == "" {
		t.Fatalf("summary has no sessionId: %v", sum)
	}
	if msg, _ := sum["loadDeletedError"].(string); !strings.Contains(msg, sid) {
		t.Errorf("loading the deleted session: error %q does not name the session", msg)
	}
	// The deleted session is gone from the store, too.
	out, errOut, code := runCLI(t, r.iso.Env(), "sessions", "list", "--json")
	if code != 0 {
		t.Fatalf("acpd sessions list: exit %d: %s", code, errOut)
	}
	if strings.Contains(out, sid) {
		t.Errorf("acpd sessions list still shows the deleted session:\n%s", out)
	}
}

// TestInteropToolsEditor runs read_file, edit_file, run_command and
// update_plan against a client that offers its file system (with an unsaved
// buffer that differs from disk) and its terminals.
func TestInteropToolsEditor(t *testing.T) {
	t.Parallel()
	r := newInteropRun(t)
	const disk = "first line\nthe version on disk\nlast line\n"
	file := writeFile(t, filepath.Join(r.project, "a.txt"), disk)
	r.addReplay(t, "editor",
		`# 1: read a.txt (served from the editor's unsaved buffer)`,
		`{"type":"tool_done","toolCallId":"call_read","toolName":"read_file","input":{"path":"a.txt"}}`,
		`{"type":"finish"}`,
		`# 2: the model saw the buffer, not the disk; edit it`,
		`{"type":"expect","contains":"UNSAVED-BUFFER-MARKER (only in the editor)"}`,
		`{"type":"tool_done","toolCallId":"call_edit","toolName":"edit_file","input":{"path":"a.txt","old_string":"UNSAVED-BUFFER-MARKER","new_string":"EDITED-IN-EDITOR"}}`,
		`{"type":"finish"}`,
		`# 3: run a command in the editor's terminal`,
		`{"type":"expect","contains":"Edited a.txt"}`,
		`{"type":"tool_done","toolCallId":"call_cmd","toolName":"run_command","input":{"command":"echo hi-from-cmd"}}`,
		`{"type":"finish"}`,
		`# 4: the command's output reached the model; update the plan`,
		`{"type":"expect","contains":"hi-from-cmd\\n[exit code 0]"}`,
		`{"type":"tool_done","toolCallId":"call_plan","toolName":"update_plan","input":{"entries":[{"content":"Fix a.txt","status":"completed","priority":"high"},{"content":"Say hi","status":"in_progress","priority":"medium"}]}}`,
		`{"type":"finish"}`,
		`# 5: done`,
		`{"type":"expect","contains":"Plan updated"}`,
		`{"type":"text","text":"All done."}`,
		`{"type":"finish"}`,
	)
	sum := r.run(t, "tools-editor", nil)
	if got := readFileString(t, file); got != disk {
		t.Errorf("a.txt on disk = %q, want it untouched (%q): edits go to the editor's buffer", got, disk)
	}
	if buf, _ := sum["buffer"].(string); !strings.Contains(buf, "EDITED-IN-EDITOR") {
		t.Errorf("the editor's buffer = %q, want the edit", buf)
	}
}

// TestInteropToolsDisk runs the file tools on disk and commands on acpd's own
// PTY for a client without fs and terminal capabilities, and checks that
// rejected, forged and unanswered permission requests keep tools from
// running, and that a prompt sent right after session/cancel streams only
// after the cancelled turn's reply.
func TestInteropToolsDisk(t *testing.T) {
	t.Parallel()
	r := newInteropRun(t)
	fileA := writeFile(t, filepath.Join(r.project, "a.txt"), "alpha\nDISK-MARKER here\nomega\n")
	rejectedWith := func(id, text string) string {
		// The tool result part as the model request encodes it.
		b, _ := json.Marshal(map[string]string{"type": "expect", "contains": `"toolCallId":"` + id + `","content":[{"type":"text","text":"` + text})
		return string(b)
	}
	rejected := func(id string) string { return rejectedWith(id, "The user rejected this edit_file call") }
	r.addReplay(t, "disk",
		`# turn 1`,
		`{"type":"tool_done","toolCallId":"call_read","toolName":"read_file","input":{"path":"a.txt"}}`,
		`{"type":"finish"}`,
		`{"type":"expect","contains":"DISK-MARKER here"}`,
		`{"type":"tool_done","toolCallId":"call_edit","toolName":"edit_file","input":{"path":"a.txt","old_string":"DISK-MARKER","new_string":"DISK-EDITED"}}`,
		`{"type":"finish"}`,
		`{"type":"expect","contains":"Edited a.txt"}`,
		`{"type":"tool_done","toolCallId":"call_write","toolName":"write_file","input":{"path":"new.txt","content":"created by write_file\n"}}`,
		`{"type":"finish"}`,
		`{"type":"expect","contains":"Created new.txt"}`,
		`{"type":"tool_done","toolCallId":"call_cmd","toolName":"run_command","input":{"command":"printf 'a\\nb\\n'; exit 3"}}`,
		`{"type":"finish"}`,
		`{"type":"expect","contains":"a\\nb\\n[exit code 3]"}`,
		`{"type":"text","text":"The command failed with exit code 3."}`,
		`{"type":"finish"}`,
		`# turn 2: rejected, then forged`,
		`{"type":"tool_done","toolCallId":"call_reject","toolName":"edit_file","input":{"path":"a.txt","old_string":"DISK-EDITED","new_string":"REJECTED-EDIT"}}`,
		`{"type":"finish"}`,
		rejected("call_reject"),
		`{"type":"tool_done","toolCallId":"call_forged","toolName":"edit_file","input":{"path":"a.txt","old_string":"DISK-EDITED","new_string":"FORGED-EDIT"}}`,
		`{"type":"finish"}`,
		rejected("call_forged"),
		`{"type":"text","text":"I will not edit it."}`,
		`{"type":"finish"}`,
		`# turn 3: cancelled while the permission request is pending`,
		`{"type":"tool_done","toolCallId":"call_pending","toolName":"edit_file","input":{"path":"a.txt","old_string":"DISK-EDITED","new_string":"CANCELLED-EDIT"}}`,
		`{"type":"finish"}`,
		`# turn 4, sent right after the cancel: the model got the cancellation`,
		rejectedWith("call_pending", "The user cancelled the turn."),
		`{"type":"text","text":"Back again."}`,
		`{"type":"finish"}`,
	)
	sum := r.run(t, "tools-disk", nil)
	if got, want := readFileString(t, fileA), "alpha\nDISK-EDITED here\nomega\n"; got != want {
		t.Errorf("a.txt = %q, want %q (only the allowed edit)", got, want)
	}
	if got, want := readFileString(t, filepath.Join(r.project, "new.txt")), "created by write_file\n"; got != want {
		t.Errorf("new.txt = %q, want %q", got, want)
	}
	if perms, _ := sum["permissions"].([]any); len(perms) != 6 {
		t.Errorf("permission requests = %v, want 6", sum["permissions"])
	}
}

// TestInteropZed drives acpd with a Zed-like client (testdata/interop/zed.mjs:
// fs, terminal and _meta.terminal_output; outside reads are "Resource not
// found"): the permission prompts of edit_file, multi_edit, write_file and
// apply_patch show the proposed diff, run_command's prompt is titled with
// the command verbatim, its terminal stays its content until released
// after the final update, session/load replays it as a display-only
// terminal (fresh id, _meta terminal_info/output/exit) to a client with
// _meta.terminal_output and as fenced text to one without, and approved
// reads and writes outside the editor's worktrees fall back to the disk.
func TestInteropZed(t *testing.T) {
	t.Parallel()
	r := newInteropRun(t)
	writeFile(t, filepath.Join(r.project, "a.txt"), "one\ntwo\nthree\n")
	step := func(id, tool string, input any) []string {
		b, _ := json.Marshal(map[string]any{"type": "tool_done", "toolCallId": id, "toolName": tool, "input": input})
		return []string{string(b), `{"type":"finish"}`}
	}
	var lines []string
	add := func(ls ...string) { lines = append(lines, ls...) }
	add(step("call_read", "read_file", map[string]any{"path": "a.txt"})...)
	add(step("call_edit", "edit_file", map[string]any{"path": "a.txt", "old_string": "two", "new_string": "TWO"})...)
	add(`{"type":"expect","contains":"Edited a.txt"}`)
	add(step("call_multi", "multi_edit", map[string]any{"path": "a.txt", "edits": []map[string]any{{"old_string": "one", "new_string": "ONE"}, {"old_string": "three", "new_string": "three!"}}})...)
	add(`{"type":"expect","contains":"Edited a.txt with 2 edits"}`)
	add(step("call_write", "write_file", map[string]any{"path": "b.txt", "content": "bee\n"})...)
	add(`{"type":"expect","contains":"Created b.txt"}`)
	add(step("call_patch", "apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n ONE\n TWO\n three!\n+four\n*** End Patch"})...)
	add(`{"type":"expect","contains":"Applied the patch"}`)
	// Outside the project: the Zed-like client answers "Resource not
	// found"; after the approval acpd reads and writes the disk.
	outside := writeFile(t, filepath.Join(r.other, "outside.txt"), "OUTSIDE-CONTENT\n")
	add(step("call_outread", "read_file", map[string]any{"path": outside})...)
	add(`{"type":"expect","contains":"OUTSIDE-CONTENT"}`)
	add(step("call_outwrite", "write_file", map[string]any{"path": filepath.Join(r.other, "new.txt"), "content": "written outside\n"})...)
	add(`{"type":"expect","contains":"Created"}`)
	add(step("call_badedit", "edit_file", map[string]any{"path": "a.txt", "old_string": "not there", "new_string": "x"})...)
	add(step("call_cmd", "run_command", map[string]any{"command": "echo one\necho two"})...)
	add(`{"type":"expect","contains":"one\\ntwo\\n[exit code 0]"}`, `{"type":"text","text":"Done."}`, `{"type":"finish"}`)
	r.addReplay(t, "gpt-zed", lines...)
	r.run(t, "zed", map[string]any{"replay": map[string]string{"zed": r.replay["gpt-zed"]}})
	if got, _ := fileContent(filepath.Join(r.other, "new.txt")); got != "written outside\n" {
		t.Errorf("the approved outside write left %q on disk", got)
	}
}

// TestInteropAgentShell drives acpd with an agent-shell-like client
// (testdata/interop/agent-shell.mjs): the model selector is a flat list
// with human names, and a "cancelled" permission outcome ends the turn
// "cancelled" with no further model request, with session/cancel after
// the outcome or before it.
func TestInteropAgentShell(t *testing.T) {
	t.Parallel()
	r := newInteropRun(t)
	const rounds = 3
	var lines []string
	for i := range 2 * rounds {
		b, _ := json.Marshal(map[string]any{"type": "tool_done", "toolCallId": fmt.Sprintf("call_%d", i), "toolName": "write_file",
			"input": map[string]any{"path": fmt.Sprintf("cancelled-%d.txt", i), "content": "x"}})
		// The next request must be the next round's prompt, never a
		// continuation of the cancelled turn.
		lines = append(lines, fmt.Sprintf(`{"type":"expect","contains":"write %d"}`, i), string(b), `{"type":"finish"}`)
	}
	lines = append(lines, `{"type":"expect","contains":"still there?"}`, `{"type":"text","text":"Yes."}`, `{"type":"finish"}`)
	r.addReplay(t, "agent-shell", lines...)
	r.run(t, "agent-shell", map[string]any{"rounds": rounds})
	for i := range 2 * rounds {
		if _, err := os.Stat(filepath.Join(r.project, fmt.Sprintf("cancelled-%d.txt", i))); err == nil {
			t.Errorf("cancelled-%d.txt was written", i)
		}
	}
}

// TestInteropCodeCompanion drives acpd with a CodeCompanion-like client
// (testdata/interop/codecompanion.mjs: fs, no terminal): an empty prompt
// ends the turn without a model request, and a session/cancel sent right
// after a session/prompt cancels it, in every one of many rounds.
func TestInteropCodeCompanion(t *testing.T) {
	t.Parallel()
	r := newInteropRun(t)
	const rounds = 40
	lines := []string{
		`{"type":"expect","contains":"hello after empty"}`,
		`{"type":"text","text":"Hello."}`,
		`{"type":"finish"}`,
	}
	for range rounds {
		lines = append(lines, `{"type":"text","text":"should have stopped"}`, `{"type":"delay","ms":2000}`, `{"type":"finish"}`)
	}
	r.addReplay(t, "codecompanion", lines...)
	r.run(t, "codecompanion", map[string]any{"iterations": rounds})
}
