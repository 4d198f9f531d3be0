package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/internal/testproc"
	"acpd/sandbox"
)

// updateContent reports whether match is true for some content of a
// tool_call_update in ups (with final, only of those carrying the raw
// output: the call's result). match sees every content in order.
func updateContent(ups []acp.SessionUpdate, final bool, match func(acp.ToolCallContent) bool) bool {
	found := false
	for _, u := range ups {
		if u.ToolCallUpdate == nil || final && u.ToolCallUpdate.RawOutput == nil {
			continue
		}
		for _, cc := range u.ToolCallUpdate.Content {
			if match(cc) {
				found = true
			}
		}
	}
	return found
}

// runTools runs one turn that makes the given tool calls and returns the
// tool results the model received, in call order, and the turn's updates.
func runTools(t *testing.T, env *testEnv, c *client, sid acp.SessionID, calls ...toolCallReq) ([]string, []bool, []acp.SessionUpdate) {
	t.Helper()
	rec := record(toolSeq(calls...))
	env.setModel(mainModel, rec)
	mark := len(c.in.messages())
	c.mustPrompt(sid, "use the tools", acp.StopReasonEndTurn)
	all := toolResults(rec.last(t))
	if len(all) < len(calls) {
		t.Fatalf("%d tool results, want %d", len(all), len(calls))
	}
	var texts []string
	var errs []bool
	for _, p := range all[len(all)-len(calls):] {
		texts = append(texts, resultText(p))
		errs = append(errs, p.IsError)
	}
	return texts, errs, c.updatesBetween(sid, mark-1, -1)
}

func TestReadFileWindow(t *testing.T) {
	env := newEnv(t, "")
	var lines []string
	for i := 1; i <= 10; i++ {
		lines = append(lines, fmt.Sprintf("line%d", i))
	}
	env.write("f.txt", strings.Join(lines, "\n")+"\n")
	env.write("empty.txt", "")
	c := env.start(nil)
	sid := c.newSession()
	res, isErr, ups := runTools(t, env, c, sid,
		toolCallReq{"read_file", map[string]any{"path": "f.txt", "offset": 3, "limit": 2}},
		toolCallReq{"read_file", map[string]any{"path": env.path("f.txt"), "offset": 9}},
		toolCallReq{"read_file", map[string]any{"path": "f.txt", "offset": 50}},
		toolCallReq{"read_file", map[string]any{"path": "empty.txt"}},
		toolCallReq{"read_file", map[string]any{"path": "missing.txt"}},
		toolCallReq{"read_file", map[string]any{"path": "f.txt", "offset": "three"}},
	)
	want := []string{
		"     3\tline3\n     4\tline4\n(showing lines 3-4 of 10; read on with offset 5)\n",
		"     9\tline9\n    10\tline10\n",
		"(no lines at offset 50; the file has 10 lines)\n",
		"(the file is empty)\n",
	}
	for i, w := range want {
		if res[i] != w || isErr[i] {
			t.Errorf("read %d = %q (error %v), want %q", i, res[i], isErr[i], w)
		}
	}
	if !isErr[4] || !strings.Contains(res[4], "missing.txt") {
		t.Errorf("missing file: %q", res[4])
	}
	if !isErr[5] || !strings.Contains(res[5], "invalid read_file arguments") {
		t.Errorf("ill-typed argument: %q", res[5])
	}
	if len(c.permissionRequests()) != 0 {
		t.Error("reads inside the project asked for permission")
	}
	// The first read reports where it looked.
	var located bool
	for _, u := range ups {
		if u.ToolCallUpdate != nil {
			for _, l := range u.ToolCallUpdate.Locations {
				if l.Path == env.path("f.txt") && l.Line != nil && *l.Line == 3 {
					located = true
				}
			}
		}
	}
	if !located {
		t.Error("no tool_call_update location for f.txt line 3")
	}
}

func TestWriteFileCreates(t *testing.T) {
	env := newEnv(t, "")
	c, sid := env.allowingSession()
	res, isErr, ups := runTools(t, env, c, sid, writeCall("dir/new.txt", "hello\n"))
	if isErr[0] || !strings.Contains(res[0], "Created") {
		t.Fatalf("write_file: %q", res[0])
	}
	if data, err := os.ReadFile(env.path("dir/new.txt")); err != nil || string(data) != "hello\n" {
		t.Fatalf("file: %q %v", data, err)
	}
	var diff *acp.Diff
	updateContent(ups, false, func(cc acp.ToolCallContent) bool {
		if cc.Diff != nil {
			diff = cc.Diff
		}
		return false
	})
	if diff == nil {
		t.Fatal("no diff content")
	}
	if diff.OldText != nil || diff.NewText != "hello\n" || diff.Path != env.path("dir/new.txt") {
		t.Errorf("diff %+v, want a creation (no oldText) of the absolute path", diff)
	}
	// Overwriting a file the agent never read is refused.
	env.write("old.txt", "precious")
	res, isErr, _ = runTools(t, env, c, sid, writeCall("old.txt", "clobbered"))
	if !isErr[0] || !strings.Contains(res[0], "read the file again") {
		t.Errorf("blind overwrite: %q", res[0])
	}
	if data, _ := os.ReadFile(env.path("old.txt")); string(data) != "precious" {
		t.Error("blind overwrite changed the file")
	}
}

func TestEditFile(t *testing.T) {
	env := newEnv(t, "")
	env.write("a.txt", "foo\nbar\nfoo\n")
	env.write("b.txt", "alpha\nbeta\n")
	c, sid := env.allowingSession()
	res, isErr, _ := runTools(t, env, c, sid,
		toolCallReq{"read_file", map[string]any{"path": "a.txt"}},
		toolCallReq{"edit_file", map[string]any{"path": "a.txt", "old_string": "foo", "new_string": "baz"}},
		toolCallReq{"edit_file", map[string]any{"path": "a.txt", "old_string": "nope", "new_string": "baz"}},
		toolCallReq{"edit_file", map[string]any{"path": "a.txt", "old_string": "bar", "new_string": "BAR"}},
	)
	if !isErr[1] || !strings.Contains(res[1], "occurs 2 times") {
		t.Errorf("ambiguous old_string: %q", res[1])
	}
	if !isErr[2] || !strings.Contains(res[2], "not found") {
		t.Errorf("missing old_string: %q", res[2])
	}
	if isErr[3] || !strings.Contains(res[3], "line 2") {
		t.Errorf("unique edit: %q", res[3])
	}
	if data, _ := os.ReadFile(env.path("a.txt")); string(data) != "foo\nBAR\nfoo\n" {
		t.Errorf("a.txt = %q", data)
	}

	// A file changed on disk after the agent read it: the edit is refused
	// and the model is told to read it again.
	c.setPerm(func(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
		// The user saves the file in another editor while the dialog is up.
		if err := os.WriteFile(env.path("b.txt"), []byte("alpha\nbeta\ngamma\n"), 0o644); err != nil {
			return nil, err
		}
		return choose(acp.PermissionOptionKindAllowOnce)(ctx, req)
	})
	res, isErr, _ = runTools(t, env, c, sid,
		toolCallReq{"read_file", map[string]any{"path": "b.txt"}},
		toolCallReq{"edit_file", map[string]any{"path": "b.txt", "old_string": "beta", "new_string": "BETA"}},
	)
	if !isErr[1] || !strings.Contains(res[1], "read the file again") {
		t.Errorf("stale edit: %q", res[1])
	}
	if data, _ := os.ReadFile(env.path("b.txt")); string(data) != "alpha\nbeta\ngamma\n" {
		t.Errorf("stale edit changed b.txt: %q", data)
	}
}

func TestSearchTools(t *testing.T) {
	env := newEnv(t, "")
	env.write(".gitignore", "vendor/\n*.gen.go\n")
	env.write("a.go", "package a // needle\n")
	env.write("sub/b.go", "package b\nvar needle = 1\n")
	env.write("sub/c.txt", "needle in text\n")
	env.write("sub/x.gen.go", "package b // needle\n")
	env.write("vendor/v.go", "package v // needle\n")
	env.write("deep/er/d.go", "package d\n")
	c := env.start(nil)
	sid := c.newSession()
	res, isErr, _ := runTools(t, env, c, sid,
		toolCallReq{"list_dir", map[string]any{"path": "."}},
		toolCallReq{"glob", map[string]any{"pattern": "**/*.go"}},
		toolCallReq{"grep", map[string]any{"pattern": "needle", "include": "*.go"}},
		toolCallReq{"grep", map[string]any{"pattern": "needle", "path": "sub"}},
		toolCallReq{"glob", map[string]any{"pattern": "*.rs"}},
		toolCallReq{"grep", map[string]any{"pattern": "("}},
	)
	for i, e := range isErr[:5] {
		if e {
			t.Errorf("call %d failed: %q", i, res[i])
		}
	}
	if want := ".gitignore\na.go\ndeep/\nsub/\nvendor/\n"; res[0] != want {
		t.Errorf("list_dir = %q, want %q", res[0], want)
	}
	if want := "a.go\ndeep/er/d.go\nsub/b.go\n"; res[1] != want {
		t.Errorf("glob **/*.go = %q, want %q (ignored files excluded)", res[1], want)
	}
	grepLines := strings.Split(strings.TrimSpace(res[2]), "\n")
	slices.Sort(grepLines)
	if want := []string{"a.go:1: package a // needle", "sub/b.go:2: var needle = 1"}; !slices.Equal(grepLines, want) {
		t.Errorf("grep include *.go = %q, want %q", grepLines, want)
	}
	grepLines = strings.Split(strings.TrimSpace(res[3]), "\n")
	slices.Sort(grepLines)
	if want := []string{"sub/b.go:2: var needle = 1", "sub/c.txt:1: needle in text"}; !slices.Equal(grepLines, want) {
		t.Errorf("grep in sub = %q, want %q", grepLines, want)
	}
	if res[4] != "No files match." {
		t.Errorf("glob *.rs = %q", res[4])
	}
	if !isErr[5] || !strings.Contains(res[5], "regular expression") {
		t.Errorf("bad regexp: %q", res[5])
	}
}

// TestOutsideRootsAlwaysAsks: a path outside the session's roots needs the
// user's approval in every mode, full access included.
func TestOutsideRootsAlwaysAsks(t *testing.T) {
	env := newEnv(t, "")
	secret := filepath.Join(env.outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("top secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := env.start(nil)
	sid := c.newSession()
	for _, mode := range []string{modeAsk, modeAutoEdit, modePlan, modeFull} {
		c.mustMode(sid, mode)
		before := len(c.permissionRequests())
		for _, path := range []string{secret, "../outside/secret.txt"} {
			res, isErr, _ := runTools(t, env, c, sid, toolCallReq{"read_file", map[string]any{"path": path}})
			if !isErr[0] || strings.Contains(res[0], "top secret") {
				t.Errorf("mode %s: rejected read of %s returned %q", mode, path, res[0])
			}
		}
		if n := len(c.permissionRequests()) - before; n != 2 {
			t.Errorf("mode %s: %d permission requests for reads outside the project, want 2", mode, n)
		}
	}
	// Approved, the read goes through.
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	res, isErr, _ := runTools(t, env, c, sid, toolCallReq{"read_file", map[string]any{"path": secret}})
	if isErr[0] || !strings.Contains(res[0], "top secret") {
		t.Errorf("approved outside read: %q", res[0])
	}
}

func TestModes(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(nil)
	sid := c.newSession()

	// plan: writes and commands are refused without asking.
	c.mustMode(sid, modePlan)
	res, isErr, _ := runTools(t, env, c, sid, writeCall("p.txt", "x"), toolCallReq{"run_command", map[string]any{"command": "touch ran.txt"}})
	for i := range res {
		if !isErr[i] || !strings.Contains(res[i], "plan mode") {
			t.Errorf("plan mode call %d: %q", i, res[i])
		}
	}
	if fileExists(env.path("p.txt")) || fileExists(env.path("ran.txt")) || len(c.permissionRequests()) != 0 {
		t.Error("plan mode wrote, ran or asked")
	}

	// auto-edit: edits inside the project run, commands ask.
	c.mustMode(sid, modeAutoEdit)
	res, isErr, _ = runTools(t, env, c, sid, writeCall("auto.txt", "x"), toolCallReq{"run_command", map[string]any{"command": "touch ran.txt"}})
	if isErr[0] || !fileExists(env.path("auto.txt")) {
		t.Errorf("auto-edit write: %q", res[0])
	}
	reqs := c.permissionRequests()
	if len(reqs) != 1 || reqs[0].ToolCall.Kind == nil || *reqs[0].ToolCall.Kind != acp.ToolKindExecute {
		t.Errorf("auto-edit: permission requests %+v, want one for the command", reqs)
	}
	if !isErr[1] || fileExists(env.path("ran.txt")) {
		t.Errorf("rejected command ran: %q", res[1])
	}

	// ask: edits ask too.
	c.mustMode(sid, modeAsk)
	_, isErr, _ = runTools(t, env, c, sid, writeCall("ask.txt", "x"))
	if !isErr[0] || fileExists(env.path("ask.txt")) || len(c.permissionRequests()) != 2 {
		t.Error("ask mode wrote without asking")
	}

	// Protected paths ask even in full mode.
	c.mustMode(sid, modeFull)
	env.write(".git/config", "[core]\n")
	before := len(c.permissionRequests())
	_, isErr, _ = runTools(t, env, c, sid, toolCallReq{"edit_file", map[string]any{"path": ".git/config", "old_string": "core", "new_string": "x"}})
	if !isErr[0] || len(c.permissionRequests()) != before+1 {
		t.Error("full mode edited .git/config without asking")
	}
}

// ---------------------------------------------------------------------------
// run_command on the local PTY.

func TestRunCommandLocal(t *testing.T) {
	env := newEnv(t, "")
	c, sid := env.fullSession()
	res, isErr, ups := runTools(t, env, c, sid,
		toolCallReq{"run_command", map[string]any{"command": "echo hello; echo err >&2; exit 3"}},
		toolCallReq{"run_command", map[string]any{"command": "pwd"}},
		toolCallReq{"run_command", map[string]any{"command": "sleep 30", "timeout_ms": 200}},
		toolCallReq{"run_command", map[string]any{"command": "cat"}},
	)
	if !strings.Contains(res[0], "hello\n") || !strings.Contains(res[0], "err\n") || !strings.Contains(res[0], "[exit code 3]") || !isErr[0] {
		t.Errorf("exit 3: %q (error %v)", res[0], isErr[0])
	}
	if isErr[1] || !strings.Contains(res[1], env.cwd) || !strings.Contains(res[1], "[exit code 0]") {
		t.Errorf("pwd: %q", res[1])
	}
	if !isErr[2] || !strings.Contains(res[2], "timed out after 200ms") {
		t.Errorf("timeout: %q", res[2])
	}
	if isErr[3] || !strings.Contains(res[3], "[exit code 0]") {
		t.Errorf("cat with stdin at EOF: %q", res[3])
	}
	// The client saw the output and the exit status.
	shown := updateContent(ups, true, func(cc acp.ToolCallContent) bool {
		return cc.Content != nil && cc.Content.Content.Text != nil && strings.Contains(cc.Content.Content.Text.Text, "hello")
	})
	if !shown {
		t.Error("the command's output is not in its tool_call_update")
	}
	// Every tool call names its tool (ToolCall.name).
	for _, u := range ups {
		if tc := u.ToolCall; tc != nil && (tc.Name == nil || *tc.Name != "run_command") {
			t.Errorf("tool_call %s names %v, want run_command", tc.ToolCallID, tc.Name)
		}
	}
	// A successful exit is the card's status, not text in it (the model
	// still reads "[exit code 0]").
	if updateContent(ups, true, func(cc acp.ToolCallContent) bool {
		return cc.Content != nil && cc.Content.Content.Text != nil && strings.Contains(cc.Content.Content.Text.Text, "[exit code 0]")
	}) {
		t.Error("a card shows [exit code 0]")
	}
	if !updateContent(ups, true, func(cc acp.ToolCallContent) bool {
		return cc.Content != nil && cc.Content.Content.Text != nil && strings.Contains(cc.Content.Content.Text.Text, "[exit code 3]")
	}) {
		t.Error("the failed command's card does not say its exit code")
	}
}

// cancelledPids prompts a turn of sid (whose model runs a command that
// writes pidFile, see commandPids), cancels it once pidFile exists, fails
// unless the turn stops cancelled, and returns the pids to check.
func cancelledPids(t *testing.T, c *client, sid acp.SessionID, pidFile string) []int {
	t.Helper()
	res := c.promptAsync(sid, "run it")
	waitFor(t, "the command to start", func() bool { return fileExists(pidFile) })
	c.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionID: sid})
	if r := await(t, "the cancelled prompt", res); r.err != nil || r.stop != acp.StopReasonCancelled {
		t.Fatalf("prompt: %v %q, want cancelled", r.err, r.stop)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	return commandPids(t, data)
}

// commandPids reads what a command recorded (pids, then its PID namespace
// as /proc/PID/ns/pid names it) and returns the pids to check: the
// recorded ones when the command ran in this process's PID namespace, or,
// when it had one of its own (the sandbox's, whose pids mean nothing
// here), the processes in that namespace now.
func commandPids(t *testing.T, data []byte) []int {
	t.Helper()
	var pids []int
	ns := ""
	for _, f := range strings.Fields(string(data)) {
		if strings.HasPrefix(f, "pid:[") {
			ns = f
			continue
		}
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid file %q", data)
		}
		pids = append(pids, pid)
	}
	if len(pids) == 0 || ns == "" {
		t.Fatalf("pid file %q lists no pid or no namespace", data)
	}
	if own, _ := os.Readlink("/proc/self/ns/pid"); ns == own {
		return pids
	}
	var in []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, _ := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "pid")); l == ns {
			in = append(in, pid)
		}
	}
	return in
}

// TestRunCommandCancel: cancelling the turn kills the command's process
// group: nothing it started survives.
func TestRunCommandCancel(t *testing.T) {
	env := newEnv(t, "")
	c, sid := env.fullSession()
	n := max(*loops/4, 2)
	for i := range n {
		pidFile := filepath.Join(env.cwd, fmt.Sprintf("pids-%d", i))
		// The shell and a background child record their pids, then wait.
		cmd := fmt.Sprintf("sleep 60 & echo $! > %[1]s.tmp; echo $$ >> %[1]s.tmp; readlink /proc/$$/ns/pid >> %[1]s.tmp; mv %[1]s.tmp %[1]s; wait", pidFile)
		env.setModel(mainModel, toolSeq(toolCallReq{"run_command", map[string]any{"command": cmd}}))
		for _, pid := range cancelledPids(t, c, sid, pidFile) {
			if testproc.Alive(pid) {
				t.Errorf("iteration %d: process %d survived the cancelled turn", i, pid)
				testproc.Kill(pid)
			}
		}
	}
}

// TestTerminalOutputMeta: Zed's terminal extension (no terminal capability,
// clientCapabilities._meta.terminal_output) gets the terminal's id, its
// output and its exit status in tool_call_update _meta.
func TestTerminalOutputMeta(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(&acp.ClientCapabilities{Meta: map[string]any{"terminal_output": true}})
	sid := c.newSession()
	c.mustMode(sid, modeFull)
	for _, tc := range []struct{ command, output string }{
		{"echo hello-meta", "hello-meta\n"},             // done before the first poll
		{"echo one; sleep 0.6; echo two", "one\ntwo\n"}, // streamed across polls
		{"printf abc; sleep 0.3; printf def", "abcdef"}, // no newline at the end
	} {
		_, isErr, ups := runTools(t, env, c, sid, toolCallReq{"run_command", map[string]any{"command": tc.command}})
		if isErr[0] {
			t.Fatalf("%s: failed", tc.command)
		}
		var info, exit map[string]any
		var data strings.Builder
		for _, u := range ups {
			if u.ToolCallUpdate == nil {
				continue
			}
			m := u.ToolCallUpdate.Meta
			if v, ok := m["terminal_info"].(map[string]any); ok {
				info = v
			}
			if v, ok := m["terminal_output"].(map[string]any); ok {
				if info == nil {
					t.Errorf("%s: terminal_output before terminal_info", tc.command)
				}
				if exit != nil {
					t.Errorf("%s: terminal_output after terminal_exit", tc.command)
				}
				d, _ := v["data"].(string)
				data.WriteString(d)
			}
			if v, ok := m["terminal_exit"].(map[string]any); ok {
				exit = v
			}
		}
		if info == nil || info["terminal_id"] == "" {
			t.Fatalf("%s: no terminal_info: %v", tc.command, kinds(ups))
		}
		if data.String() != tc.output {
			t.Errorf("%s: terminal_output data = %q, want %q", tc.command, data.String(), tc.output)
		}
		if exit == nil || exit["exit_code"] != float64(0) || exit["terminal_id"] != info["terminal_id"] {
			t.Errorf("%s: terminal_exit = %v", tc.command, exit)
		}
	}
}

// TestEditorCapabilities: with fs and terminal capabilities, files go
// through the editor (its unsaved buffers, its undo) and commands run in
// its terminal.
func TestEditorCapabilities(t *testing.T) {
	env := newEnv(t, "")
	env.write("buf.txt", "saved on disk\n")
	c := env.start(&acp.ClientCapabilities{Fs: &acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true})
	c.mu.Lock()
	c.buffers[env.path("buf.txt")] = "unsaved in the editor\n"
	c.termOut = "hi from the editor\n"
	c.mu.Unlock()
	sid := c.newSession()
	c.mustMode(sid, modeFull)
	res, isErr, ups := runTools(t, env, c, sid,
		toolCallReq{"read_file", map[string]any{"path": "buf.txt"}},
		writeCall("new.txt", "via editor\n"),
		toolCallReq{"run_command", map[string]any{"command": "echo hi"}},
	)
	if isErr[0] || !strings.Contains(res[0], "unsaved in the editor") {
		t.Errorf("read_file = %q, want the editor's buffer", res[0])
	}
	if isErr[1] || fileExists(env.path("new.txt")) {
		t.Errorf("write_file: %q; on disk: %v (want it in the editor only)", res[1], fileExists(env.path("new.txt")))
	}
	c.mu.Lock()
	writes := slices.Clone(c.fsWrites)
	reads := slices.Clone(c.fsReads)
	calls := slices.Clone(c.termCalls)
	c.mu.Unlock()
	if len(writes) != 1 || writes[0].Path != env.path("new.txt") || writes[0].Content != "via editor\n" || writes[0].SessionID != sid {
		t.Errorf("fs/write_text_file requests %+v", writes)
	}
	if len(reads) == 0 || reads[0].Path != env.path("buf.txt") {
		t.Errorf("fs/read_text_file requests %+v", reads)
	}
	if isErr[2] || !strings.Contains(res[2], "hi from the editor") || !strings.Contains(res[2], "[exit code 0]") {
		t.Errorf("run_command = %q", res[2])
	}
	if len(calls) == 0 || calls[0].method != acp.ClientMethodTerminalCreate {
		t.Fatalf("terminal calls %+v", calls)
	}
	create := calls[0].create
	// The editor runs the command through acpd's sandbox helper, whose
	// command line shows the user's command; the policy is in the
	// environment.
	var policy bool
	for _, e := range create.Env {
		policy = policy || e.Name == sandbox.PolicyEnv && strings.Contains(e.Value, `"plan"`)
	}
	if create.Cwd == nil || *create.Cwd != env.cwd || len(create.Args) < 5 || create.Args[0] != "sandbox" || create.Args[1] != "--policy" || create.Args[3] != "--" || !slices.Equal(create.Args[len(create.Args)-2:], []string{"-c", "echo hi"}) || !policy {
		t.Errorf("terminal/create %+v", create)
	}
	id := calls[0].id
	if last := calls[len(calls)-1]; last.method != acp.ClientMethodTerminalRelease || last.id != id {
		t.Errorf("terminal not released at the end: %+v", calls)
	}
	embedded := updateContent(ups, false, func(cc acp.ToolCallContent) bool { return cc.Terminal != nil && cc.Terminal.TerminalID == id })
	if !embedded {
		t.Error("no tool_call_update embeds the terminal")
	}
}

// TestEditorTerminalTruncated: when the editor's terminal kept only the end
// of the output (truncated), the model is told the beginning is lost; no
// line gets a number, the partial first line is dropped, and what was kept
// is saved with a note saying its line 1 is not the output's.
func TestEditorTerminalTruncated(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(&acp.ClientCapabilities{Terminal: true})
	var b strings.Builder
	b.WriteString("204\n") // the end of line 50204, its start dropped
	for i := 50205; i <= 200000; i++ {
		fmt.Fprintf(&b, "%06d\n", i)
	}
	c.mu.Lock()
	c.termOut, c.termTrunc = b.String(), true
	c.mu.Unlock()
	sid := c.newSession()
	c.mustMode(sid, modeFull)
	res, isErr, _ := runTools(t, env, c, sid, toolCallReq{"run_command", map[string]any{"command": "seq -w 1 200000"}})
	out := res[0]
	first, rest, _ := strings.Cut(out, "\n")
	if isErr[0] || !strings.HasPrefix(first, "[… the beginning of the output is lost: the editor's terminal kept at most its last ") ||
		!strings.Contains(first, "(its line 1 is not the output's line 1)") || regexp.MustCompile(`lines? \d+-\d+`).MatchString(out) {
		t.Fatalf("note %q", first)
	}
	if strings.HasPrefix(rest, "204\n") || !strings.HasSuffix(rest, "199999\n200000\n[exit code 0]\n") || strings.Count(out, "[") != 2 || strings.Contains(out, "truncated") {
		t.Fatalf("output %.60q … %q", rest, rest[max(0, len(rest)-60):])
	}
}
