package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"acpd/acp"
	"acpd/compact"
	"acpd/model"
)

// The tests in this file check what the model receives: the tool results,
// tool definitions and system prompt in the request body.

// TestReadFileLongFile: a 2,500-line file is read in windows that never
// drop lines: each window ends at a whole line within about 50 KB, its
// footer names the last line shown and the next offset, and following the
// footers reads every line exactly once.
func TestReadFileLongFile(t *testing.T) {
	env := newEnv(t, "")
	var b strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&b, "line %04d %s\n", i, strings.Repeat("x", 50))
	}
	env.write("long.txt", b.String())
	c := env.start(nil)
	sid := c.newSession()
	seen := map[int]int{}
	offset := 1
	for round := 0; offset > 0 && round < 10; round++ {
		res, isErr, _ := runTools(t, env, c, sid, toolCallReq{"read_file", map[string]any{"path": "long.txt", "offset": offset}})
		if isErr[0] {
			t.Fatalf("read at %d: %s", offset, res[0])
		}
		if len(res[0]) > 51_000 {
			t.Fatalf("window of %d bytes", len(res[0]))
		}
		rows := strings.Split(strings.TrimSuffix(res[0], "\n"), "\n")
		last := 0
		for _, r := range rows {
			var n int
			if _, err := fmt.Sscanf(r, "%d\tline %d", &n, new(int)); err == nil && strings.Contains(r, "\tline ") {
				seen[n]++
				last = n
				if !strings.HasSuffix(r, strings.Repeat("x", 50)) {
					t.Fatalf("line %d shown cut: %q", n, r)
				}
			}
		}
		footer := rows[len(rows)-1]
		offset = 0
		if strings.HasPrefix(footer, "(showing lines") {
			var from, to, total int
			if _, err := fmt.Sscanf(footer, "(showing lines %d-%d of %d", &from, &to, &total); err != nil || to != last || total != 2500 {
				t.Fatalf("footer %q does not name the last line shown (%d)", footer, last)
			}
			if !strings.HasSuffix(footer, fmt.Sprintf("read on with offset %d)", last+1)) {
				t.Fatalf("footer %q: wrong next offset", footer)
			}
			offset = last + 1
		}
	}
	for i := 1; i <= 2500; i++ {
		if seen[i] != 1 {
			t.Fatalf("line %d was shown %d times", i, seen[i])
		}
	}
}

func TestReadFileBinaryAndDirectory(t *testing.T) {
	env := newEnv(t, "")
	env.write("img.bin", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	env.write("sub/a.txt", "a\n")
	c := env.start(nil)
	sid := c.newSession()
	res, isErr, _ := runTools(t, env, c, sid,
		toolCallReq{"read_file", map[string]any{"path": "img.bin"}},
		toolCallReq{"read_file", map[string]any{"path": "sub"}},
	)
	if !isErr[0] || !strings.Contains(res[0], "img.bin is a binary file") || strings.ContainsRune(res[0], 0) {
		t.Errorf("binary read: %q", res[0])
	}
	if !isErr[1] || res[1] != "sub is a directory; use list_dir to see its entries" {
		t.Errorf("directory read: %q", res[1])
	}
}

// TestEditFileCRLFAndWhitespace: edits the model's copy of the text cannot
// match byte for byte still apply, keep the file's line endings, and say
// which matcher was used; a failed edit shows the closest lines.
func TestEditFileCRLFAndWhitespace(t *testing.T) {
	env := newEnv(t, "")
	env.write("w.txt", "one\r\ntwo\r\nthree\r\n")
	env.write("g.go", "func f() {\n\t\tif x {   \n\t\t\ty()\n\t\t}\n}\n")
	c, sid := env.allowingSession()
	res, isErr, _ := runTools(t, env, c, sid,
		toolCallReq{"read_file", map[string]any{"path": "w.txt"}},
		toolCallReq{"edit_file", map[string]any{"path": "w.txt", "old_string": "one\ntwo", "new_string": "1\n2"}},
		toolCallReq{"read_file", map[string]any{"path": "g.go"}},
		toolCallReq{"edit_file", map[string]any{"path": "g.go", "old_string": "if x {\n\ty()\n}", "new_string": "if x {\n\tz()\n}"}},
		toolCallReq{"edit_file", map[string]any{"file_path": "g.go", "old_string": "func g() {\n\t\tif x {", "new_string": "q"}},
	)
	if isErr[1] || !strings.Contains(res[1], "(lines 1-2)") || !strings.Contains(res[1], "     1\t1\n     2\t2\n     3\tthree\n") {
		t.Errorf("CRLF edit: %q", res[1])
	}
	if data, _ := os.ReadFile(env.path("w.txt")); string(data) != "1\r\n2\r\nthree\r\n" {
		t.Errorf("w.txt = %q", data)
	}
	if isErr[3] || !strings.Contains(res[3], "matched ignoring indentation") {
		t.Errorf("indentation edit: %q", res[3])
	}
	if data, _ := os.ReadFile(env.path("g.go")); string(data) != "func f() {\n\t\tif x {\n\t\t\tz()\n\t\t}\n}\n" {
		t.Errorf("g.go = %q", data)
	}
	want := "g.go: old_string was not found in the file. The closest lines (1 of 2 lines of old_string similar) are:\n     1\tfunc f() {\n     2\t\t\tif x {\n     3\t\t\t\tz()\nRead the file again"
	if !isErr[4] || !strings.HasPrefix(res[4], want) {
		t.Errorf("failed edit:\n%q\nwant prefix\n%q", res[4], want)
	}
}

func TestMultiEditAndApplyPatch(t *testing.T) {
	env := newEnv(t, "")
	env.write("m.txt", "a\nb\nc\n")
	env.write("p.txt", "keep\nold\n")
	env.write("gone.txt", "bye\n")
	c, sid := env.allowingSession()
	patchText := "*** Begin Patch\n*** Add File: new/n.txt\n+fresh\n*** Update File: p.txt\n*** Move to: q.txt\n@@\n keep\n-old\n+new\n*** Delete File: gone.txt\n*** End Patch"
	res, isErr, _ := runTools(t, env, c, sid,
		toolCallReq{"read_file", map[string]any{"path": "m.txt"}},
		toolCallReq{"multi_edit", map[string]any{"path": "m.txt", "edits": []map[string]any{{"old_string": "a", "new_string": "A"}, {"old_string": "zzz", "new_string": "Z"}}}},
		toolCallReq{"multi_edit", map[string]any{"path": "m.txt", "edits": []map[string]any{{"old_string": "a", "new_string": "A"}, {"old_string": "A\nb", "new_string": "AB"}}}},
		toolCallReq{"apply_patch", map[string]any{"input": patchText}},
		toolCallReq{"read_file", map[string]any{"path": "p.txt"}},
		toolCallReq{"read_file", map[string]any{"path": "gone.txt"}},
		toolCallReq{"apply_patch", map[string]any{"input": patchText}},
		toolCallReq{"apply_patch", map[string]any{"input": "*** Begin Patch\n*** Update File: q.txt\n@@\n keep\n-nothing like it\n+x\n*** End Patch"}},
	)
	if !isErr[1] || !strings.Contains(res[1], "edit 2 of 2: old_string was not found") || !strings.Contains(res[1], "no edit was applied") {
		t.Errorf("failing multi_edit: %q", res[1])
	}
	if isErr[2] || !strings.Contains(res[2], "Edited m.txt with 2 edits:\nedit 1 replaced 1 occurrence(s) (line 1).\nedit 2 replaced 1 occurrence(s) (line 1).") {
		t.Errorf("multi_edit: %q", res[2])
	}
	if data, _ := os.ReadFile(env.path("m.txt")); string(data) != "AB\nc\n" {
		t.Errorf("m.txt = %q", data)
	}
	// The patch's update and delete need the files read first (the
	// edit tools' stale-write rule): nothing is written.
	if !isErr[3] || !strings.Contains(res[3], "nothing changed") || !strings.Contains(res[3], "read the file again") {
		t.Errorf("patch of unread files: %q", res[3])
	}
	if isErr[6] || res[6] != "Applied the patch:\nA new/n.txt\nA q.txt\nD p.txt\nD gone.txt\n" {
		t.Errorf("patch: %q", res[6])
	}
	for name, want := range map[string]string{"new/n.txt": "fresh\n", "q.txt": "keep\nnew\n"} {
		if data, err := os.ReadFile(env.path(name)); err != nil || string(data) != want {
			t.Errorf("%s = %q, %v", name, data, err)
		}
	}
	for _, name := range []string{"p.txt", "gone.txt"} {
		if _, err := os.Stat(env.path(name)); err == nil {
			t.Errorf("%s still exists", name)
		}
	}
	if !isErr[7] || !strings.Contains(res[7], "could not find the lines to change") || !strings.Contains(res[7], "     1\tkeep") {
		t.Errorf("mismatched patch: %q", res[7])
	}
}

// TestToolArgumentSlips: file_path is taken for path; an unknown argument
// is named with the expected ones.
func TestToolArgumentSlips(t *testing.T) {
	env := newEnv(t, "")
	env.write("a.txt", "a\n")
	c := env.start(nil)
	sid := c.newSession()
	res, isErr, _ := runTools(t, env, c, sid,
		toolCallReq{"read_file", map[string]any{"file_path": "a.txt"}},
		toolCallReq{"read_file", map[string]any{"path": "a.txt", "lines": 3}},
	)
	if isErr[0] || res[0] != "     1\ta\n" {
		t.Errorf("file_path: %q", res[0])
	}
	if !isErr[1] || res[1] != `invalid read_file arguments: unknown argument "lines"; the arguments are path, offset, limit` {
		t.Errorf("unknown argument: %q", res[1])
	}
}

func toolNames(req model.Request) []string {
	var names []string
	for _, d := range req.Tools {
		names = append(names, d.Name)
	}
	return names
}

// TestOfferedTools: apply_patch goes to the model families trained on it;
// plan mode offers only the tools it allows.
func TestOfferedTools(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(nil)
	sid := c.newSession()
	rec := record(toolSeq())
	env.setModel(mainModel, rec)
	env.setModel("test/gpt-5", rec)
	c.mustPrompt(sid, "hi", acp.StopReasonEndTurn)
	names := toolNames(rec.last(t))
	want := []string{"ask_user", "edit_file", "glob", "grep", "job_output", "job_stop", "list_dir", "multi_edit", "read_file", "run_command", "task", "update_plan", "web_fetch", "write_file"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	if _, err := c.setConfig(sid, "model", "test/gpt-5"); err != nil {
		t.Fatal(err)
	}
	c.mustPrompt(sid, "hi", acp.StopReasonEndTurn)
	if names := toolNames(rec.last(t)); !slices.Contains(names, "apply_patch") {
		t.Errorf("gpt-5 tools %v lack apply_patch", names)
	}
	c.mustMode(sid, "plan")
	c.mustPrompt(sid, "hi", acp.StopReasonEndTurn)
	if names, want := toolNames(rec.last(t)), []string{"ask_user", "glob", "grep", "job_output", "list_dir", "read_file", "task", "update_plan"}; !slices.Equal(names, want) {
		t.Errorf("plan-mode tools %v, want %v", names, want)
	}
}

// TestPlanShapes: update_plan takes acpd's entries and Codex's
// {plan:[{step,status}]}, priority defaulting to medium; a plan with two
// steps in progress, or without steps, is refused with a clear error.
func TestPlanShapes(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(nil)
	sid := c.newSession()
	res, isErr, ups := runTools(t, env, c, sid,
		toolCallReq{"update_plan", map[string]any{"entries": []map[string]any{{"content": "Read", "status": "completed"}, {"content": "Fix", "status": "in_progress", "priority": "high"}}}},
		toolCallReq{"update_plan", map[string]any{"explanation": "codex", "plan": []map[string]any{{"step": "Write the test", "status": "in_progress"}, {"step": "Run it", "status": "pending"}}}},
		toolCallReq{"update_plan", map[string]any{"plan": []map[string]any{{"step": "A", "status": "in_progress"}, {"step": "B", "status": "in_progress"}}}},
		toolCallReq{"update_plan", map[string]any{"steps": []string{"a"}}},
	)
	if isErr[0] || res[0] != "Plan updated:\n1. [completed] Read\n2. [in_progress] Fix\n" {
		t.Errorf("entries: %q", res[0])
	}
	if isErr[1] || res[1] != "Plan updated:\n1. [in_progress] Write the test\n2. [pending] Run it\n" {
		t.Errorf("codex shape: %q", res[1])
	}
	var plans []*acp.Plan
	for _, u := range ups {
		if u.Plan != nil {
			plans = append(plans, u.Plan)
		}
	}
	if len(plans) != 2 || plans[1].Entries[0].Priority != acp.PlanEntryPriorityMedium || plans[0].Entries[1].Priority != acp.PlanEntryPriorityHigh {
		t.Errorf("plans sent: %+v", plans)
	}
	if !isErr[2] || !strings.Contains(res[2], "at most one step is in progress") {
		t.Errorf("two in progress: %q", res[2])
	}
	if !isErr[3] || !strings.Contains(res[3], `unknown argument "steps"; the arguments are entries, plan, explanation`) {
		t.Errorf("wrong shape: %q", res[3])
	}
}

// TestRequestCapLastRequest: the last request a turn may make offers no
// tools, carries no tool blocks, and asks for a closing summary; the turn
// ends with max_turn_requests and that summary.
func TestRequestCapLastRequest(t *testing.T) {
	env := newEnv(t, "[agent]\nmax_turn_requests = 3\n")
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		if len(req.Tools) == 0 {
			_ = yield(model.Event{Type: model.EventText, Text: "Summary: listed the directory twice; nothing remains."}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
			return
		}
		id := fmt.Sprintf("call_%d", len(req.Messages))
		_ = yield(model.Event{Type: model.EventToolDone, ToolCallID: id, ToolName: "list_dir", Input: json.RawMessage(fmt.Sprintf(`{"path":".","x":%d}`, len(req.Messages)))}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
	}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	c.mustPrompt(sid, "loop forever", acp.StopReasonMaxTurnRequests)
	reqs := rec.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	last := reqs[2]
	if len(last.Tools) != 0 {
		t.Errorf("the last request offers %d tools", len(last.Tools))
	}
	for _, m := range last.Messages {
		for _, p := range m.Parts {
			if p.Type == model.PartToolUse || p.Type == model.PartToolResult {
				t.Errorf("the last request has a %s block", p.Type)
			}
		}
	}
	if m := last.Messages[len(last.Messages)-1]; m.Role != model.RoleUser || !strings.Contains(m.Text(), "what was done, what remains, and how to continue") {
		t.Errorf("the last request ends with %s %q", m.Role, m.Text())
	}
	if msg := chunkText(c.allUpdates(sid)); !strings.Contains(msg, "Summary: listed") {
		t.Errorf("agent message %q", msg)
	}
}

// gitInit makes dir a git repository on branch trunk with one committed
// file and one untracked file.
func gitInit(t *testing.T, env *testEnv) {
	t.Helper()
	env.write("committed.txt", "c\n")
	for _, args := range [][]string{
		{"init", "-q", "-b", "trunk"},
		{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "add", "committed.txt"},
		{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "init"},
	} {
		cmd := exec.Command("git", append([]string{"-C", env.cwd}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+env.base, "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	env.write("untracked.txt", "u\n")
}

// TestSystemPrompt: the system prompt states how to work, the environment
// (OS, shell, date, cwd, git repository, branch, changed files) and what
// the mode allows; outside a repository it says so.
func TestSystemPrompt(t *testing.T) {
	env := newEnv(t, "")
	gitInit(t, env)
	rec := record(okBackend)
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	c.mustPrompt(sid, "hi", acp.StopReasonEndTurn)
	sys := rec.last(t).System
	for _, want := range []string{
		"Keep going until the task is fully resolved",
		"Never guess what a file contains",
		"independent reads run in parallel",
		"check that the project already uses it",
		"smallest change",
		"narrowest first",
		"Never revert, reset, commit, push",
		"path:line",
		"secrets",
		"Operating system: " + runtime.GOOS + "/" + runtime.GOARCH,
		"Shell of run_command: ",
		"Date at the session's start: " + time.Now().Format("2006-01-02"),
		"Working directory: " + env.cwd,
		"Git repository: yes, branch trunk, 1 changed or untracked files",
		"Mode: ask: ",
	} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	c.mustMode(sid, "plan")
	c.mustPrompt(sid, "hi", acp.StopReasonEndTurn)
	if sys := rec.last(t).System; !strings.Contains(sys, "Mode: plan: read-only. Edits and commands are refused") {
		t.Errorf("plan mode is not explained:\n%s", sys)
	}

	env2 := newEnv(t, "")
	rec2 := record(okBackend)
	env2.setModel(mainModel, rec2)
	c2 := env2.start(nil)
	c2.mustPrompt(c2.newSession(), "hi", acp.StopReasonEndTurn)
	if sys := rec2.last(t).System; !strings.Contains(sys, "Git repository: no (not a git repository)") {
		t.Errorf("outside a repository:\n%s", sys)
	}
}

// TestSystemPromptStable: the system prompt is byte-identical across the
// requests of a session while the settings stay the same, even when the
// model's own command changes a file it read; that change reaches the
// model as a reminder attached to the newest tool result.
func TestSystemPromptStable(t *testing.T) {
	env := newEnv(t, "")
	gitInit(t, env)
	env.write("main.go", "package main\n")
	rec := record(toolSeq(
		toolCallReq{"read_file", map[string]any{"path": "main.go"}},
		toolCallReq{"run_command", map[string]any{"command": "echo '// x' >> main.go"}},
		// The file watcher reports the change within its debounce.
		toolCallReq{"run_command", map[string]any{"command": "sleep 1"}},
		toolCallReq{"list_dir", map[string]any{"path": "sub"}},
	))
	env.write("sub/f", "")
	env.setModel(mainModel, rec)
	c, sid := env.fullSession()
	c.mustPrompt(sid, "go", acp.StopReasonEndTurn)
	reqs := rec.requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs[1:] {
		if r.System != reqs[0].System {
			t.Fatalf("request %d changed the system prompt", i+2)
		}
	}
	reminded := false
	for _, p := range toolResults(reqs[len(reqs)-1]) {
		if strings.Contains(resultText(p), "changed outside the file tools") && strings.Contains(resultText(p), env.path("main.go")) {
			reminded = true
		}
	}
	if !reminded {
		t.Error("the command's change to main.go was not announced in a tool result")
	}
}

// TestProjectInstructionsOnce: AGENTS.md reached under several names
// (CLAUDE.md a symbolic link to it) is included once, and the precedence
// of the files is stated.
func TestProjectInstructionsOnce(t *testing.T) {
	env := newEnv(t, "")
	if err := os.MkdirAll(filepath.Join(env.cwd, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	env.write("AGENTS.md", "ROOT-RULE: use tabs.\n")
	if err := os.Symlink("AGENTS.md", env.path("CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	env.write("sub/AGENTS.md", "SUB-RULE: short functions.\n")
	if err := os.Link(env.path("sub/AGENTS.md"), env.path("sub/GEMINI.md")); err != nil {
		t.Fatal(err)
	}
	rec := record(okBackend)
	env.setModel(mainModel, rec)
	c := env.start(nil)
	c.mustPrompt(c.sessionIn(env.path("sub")), "hi", acp.StopReasonEndTurn)
	sys := rec.last(t).System
	if n := strings.Count(sys, "ROOT-RULE"); n != 1 {
		t.Errorf("the root's instructions appear %d times", n)
	}
	if n := strings.Count(sys, "SUB-RULE"); n != 1 {
		t.Errorf("the subdirectory's instructions appear %d times", n)
	}
	for _, want := range []string{"A file in a deeper directory wins", "the user's own requests win", "check it for an AGENTS.md"} {
		if !strings.Contains(sys, want) {
			t.Errorf("precedence not stated: lacks %q", want)
		}
	}
}

// compactingModel reads files f0.txt … f<n-1>.txt one call per response,
// reporting usage from usage(step) (step: tool results so far), then
// answers "done"; a summarisation request gets a structured summary.
func compactingModel(n int, usage func(step int) int64) backendFunc {
	return func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		if isSummaryRequest(req) {
			_ = yield(model.Event{Type: model.EventText, Text: "## Goal\nRead the files.\n## Next step\nRead the rest."}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
			return
		}
		step := len(toolResults(*req))
		u := &model.Usage{InputTokens: usage(step), OutputTokens: 10}
		if step >= n || strings.Contains(req.Messages[0].Text(), "## Goal\nRead the files.") {
			_ = yield(model.Event{Type: model.EventText, Text: "done"}, nil) &&
				yield(model.Event{Type: model.EventUsage, Usage: u}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
			return
		}
		id := fmt.Sprintf("call_%d", step)
		_ = yield(model.Event{Type: model.EventToolDone, ToolCallID: id, ToolName: "read_file", Input: json.RawMessage(fmt.Sprintf(`{"path":"f%d.txt"}`, step))}, nil) &&
			yield(model.Event{Type: model.EventUsage, Usage: u}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
	}
}

// TestCompactionOneLongPrompt: compaction in the middle of the only turn
// keeps the user's request verbatim, first, with the structured summary
// after it and the latest exchange, and the request ends with a user
// message (not an assistant acknowledgement).
func TestCompactionOneLongPrompt(t *testing.T) {
	env := newEnv(t, "")
	for i := range 3 {
		env.write(fmt.Sprintf("f%d.txt", i), fmt.Sprintf("file %d\n", i))
	}
	prompt := "Refactor the parser. Constraints: keep the public API; use tabs. " + strings.Repeat("Details of the task. ", 100)
	rec := record(compactingModel(3, func(step int) int64 {
		if step == 2 {
			return 900
		}
		return 100
	}))
	env.setModel(mainModel, rec)
	c := env.startWith(nil, func(info *model.ModelInfo) { info.ContextWindow = 1000 }, nil)
	sid := c.newSession()
	c.mustPrompt(sid, prompt, acp.StopReasonEndTurn)
	reqs := rec.requests()
	var sumAt = -1
	for i := range reqs {
		if isSummaryRequest(&reqs[i]) {
			sumAt = i
		}
	}
	if sumAt < 0 || sumAt+1 >= len(reqs) {
		t.Fatalf("no summarisation request among %d", len(reqs))
	}
	if !strings.Contains(lastUserText(&reqs[sumAt]), "## Constraints\nEvery instruction, preference and constraint the user gave, quoted verbatim.") {
		t.Error("the summary is not asked for in a structured form")
	}
	next := reqs[sumAt+1]
	head := next.Messages[0]
	if head.Role != model.RoleUser || head.Parts[0].Text != prompt {
		t.Fatalf("the request after compaction does not start with the prompt verbatim: %+v", head)
	}
	if !strings.Contains(head.Text(), "## Goal\nRead the files.") {
		t.Errorf("the summary is not in the first message: %q", head.Text())
	}
	if last := next.Messages[len(next.Messages)-1]; last.Role != model.RoleUser {
		t.Errorf("the request ends with a %s message", last.Role)
	}
	for _, m := range next.Messages {
		if m.Role == model.RoleAssistant && strings.Contains(m.Text(), "Understood") {
			t.Error("an acknowledgement was invented inside the turn")
		}
	}
	if p := transcriptProblems(next.Messages); len(p) > 0 {
		t.Errorf("transcript: %v", p)
	}
}

// TestCompactionClearsOldOutputsFirst: when clearing old tool outputs is
// enough, no summary is asked for; the most recent outputs stay.
func TestCompactionClearsOldOutputsFirst(t *testing.T) {
	env := newEnv(t, "")
	const n = 12
	for i := range n {
		env.write(fmt.Sprintf("f%d.txt", i), strings.Repeat(fmt.Sprintf("content of file %d\n", i), 150))
	}
	rec := record(compactingModel(n, func(step int) int64 {
		if step == n-1 {
			return 8500
		}
		return 100
	}))
	env.setModel(mainModel, rec)
	c := env.startWith(nil, func(info *model.ModelInfo) { info.ContextWindow = 10000 }, nil)
	sid := c.newSession()
	c.mustPrompt(sid, "read them all", acp.StopReasonEndTurn)
	for _, r := range rec.requests() {
		if isSummaryRequest(&r) {
			t.Fatal("a summary was asked for although clearing outputs was enough")
		}
	}
	res := toolResults(rec.last(t))
	if len(res) != n {
		t.Fatalf("%d tool results, want %d", len(res), n)
	}
	cleared := 0
	for i, p := range res {
		text := resultText(p)
		switch {
		case text == compact.ClearedNote:
			cleared++
			if i >= n-compact.KeepResults {
				t.Errorf("recent result %d was cleared", i)
			}
		case !strings.Contains(text, fmt.Sprintf("content of file %d", i)):
			t.Errorf("result %d: %q", i, text)
		}
	}
	if cleared != n-compact.KeepResults {
		t.Errorf("%d results cleared, want %d", cleared, n-compact.KeepResults)
	}
	if first := rec.last(t).Messages[0]; first.Text() != "read them all" {
		t.Errorf("the prompt changed: %q", first.Text())
	}
}

// TestGrepOptions: grep's files-only and context options, and its
// documentation of the syntax, format and caps.
func TestGrepOptions(t *testing.T) {
	env := newEnv(t, "")
	env.write("a.go", "one\ntwo\nNeedle here\nthree\nfour\nfive\nsix\nneedle again\nseven\n")
	env.write("b.go", "no match\n")
	env.write("c.go", "needle\n")
	c := env.start(nil)
	sid := c.newSession()
	res, isErr, _ := runTools(t, env, c, sid,
		toolCallReq{"grep", map[string]any{"pattern": "(?i)needle", "files_only": true}},
		toolCallReq{"grep", map[string]any{"pattern": "(?i)needle", "path": "a.go", "context": 1}},
	)
	if isErr[0] || res[0] != "a.go\nc.go\n" {
		t.Errorf("files_only: %q", res[0])
	}
	want := "a.go-2- two\na.go:3: Needle here\na.go-4- three\n--\na.go-7- six\na.go:8: needle again\na.go-9- seven\n"
	if isErr[1] || res[1] != want {
		t.Errorf("context:\n%q\nwant\n%q", res[1], want)
	}
	rec := record(okBackend)
	env.setModel(mainModel, rec)
	c.mustPrompt(sid, "hi", acp.StopReasonEndTurn)
	for _, d := range rec.last(t).Tools {
		switch d.Name {
		case "grep":
			for _, w := range []string{"RE2", "(?i)", "path:line: text", "at most 200 matches", "files_only", "context"} {
				if !strings.Contains(d.Description, w) {
					t.Errorf("grep's description lacks %q", w)
				}
			}
		case "write_file":
			if !strings.Contains(d.Description, "parent directories are created") {
				t.Errorf("write_file's description: %q", d.Description)
			}
		}
	}
}

// TestReadFileImage: an image file reaches a model that reads images as an
// image part of the tool result; a text-only model gets a note instead.
func TestReadFileImage(t *testing.T) {
	var buf bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	for _, images := range []bool{true, false} {
		t.Run(fmt.Sprintf("images=%v", images), func(t *testing.T) {
			env := newEnv(t, "")
			env.write("dot.png", buf.String())
			rec := record(toolSeq(toolCallReq{"read_file", map[string]any{"path": "dot.png"}}))
			env.setModel(mainModel, rec)
			c := env.startWith(nil, func(info *model.ModelInfo) { info.Images = images }, nil)
			c.mustPrompt(c.newSession(), "look", acp.StopReasonEndTurn)
			res := toolResults(rec.last(t))
			if len(res) != 1 || res[0].IsError || len(res[0].Content) != 2 {
				t.Fatalf("result: %+v", res)
			}
			got := res[0].Content[1]
			switch {
			case images && (got.Type != model.PartImage || got.MimeType != "image/png" || got.Data != base64.StdEncoding.EncodeToString(buf.Bytes())):
				t.Errorf("image part: %+v", got)
			case !images && (got.Type != model.PartText || !strings.Contains(got.Text, "cannot read images")):
				t.Errorf("text-only model got %+v", got)
			}
		})
	}
}

// TestWebFetch: web_fetch asks permission (ask mode), then gives the model
// a page's text; HTML is converted.
func TestWebFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><script>x()</script></head><body><h2>API</h2><p>Call <b>Parse</b>.</p></body></html>`)
	}))
	defer srv.Close()
	env := newEnv(t, "")
	c, sid := env.allowingSession()
	res, isErr, _ := runTools(t, env, c, sid,
		toolCallReq{"web_fetch", map[string]any{"url": srv.URL}},
		toolCallReq{"web_fetch", map[string]any{"url": "file:///etc/passwd"}},
	)
	if isErr[0] || res[0] != "## API\n\nCall Parse.\n" {
		t.Errorf("fetch: %q", res[0])
	}
	if n := len(c.permissionRequests()); n != 1 {
		t.Errorf("%d permission requests, want 1", n)
	}
	if !isErr[1] || !strings.Contains(res[1], "http or https") {
		t.Errorf("file URL: %q", res[1])
	}
}

// TestWebFetchAlwaysAllowOrigin: the "always allow" option of a fetch names
// the origin it remembers; afterwards that origin is fetched without
// asking, and another origin (another port) asks again. In full mode with
// the sandbox's network off, a fetch asks; refused, the server sees nothing.
func TestWebFetchAlwaysAllowOrigin(t *testing.T) {
	var hits atomic.Int32
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "page "+r.URL.Path)
	})
	srv, other := httptest.NewServer(handler), httptest.NewServer(handler)
	defer srv.Close()
	defer other.Close()
	env := newEnv(t, "[sandbox]\nnetwork = false\n")
	c := env.start(nil)
	c.setPerm(choose(acp.PermissionOptionKindAllowAlways))
	sid := c.newSession()
	res, isErr, _ := runTools(t, env, c, sid, toolCallReq{"web_fetch", map[string]any{"url": srv.URL + "/a"}})
	reqs := c.permissionRequests()
	if isErr[0] || res[0] != "page /a" || len(reqs) != 1 {
		t.Fatalf("first fetch: %q (%d requests)", res[0], len(reqs))
	}
	var always string
	for _, o := range reqs[0].Options {
		if o.Kind == acp.PermissionOptionKindAllowAlways {
			always = o.Name
		}
	}
	if !strings.HasPrefix(always, "Always allow") || !strings.Contains(always, srv.URL) {
		t.Errorf("the always option does not name the origin: %q", always)
	}
	c.setPerm(choose(acp.PermissionOptionKindRejectOnce))
	c.mustMode(sid, modeFull)
	res, isErr, _ = runTools(t, env, c, sid,
		toolCallReq{"web_fetch", map[string]any{"url": srv.URL + "/b"}},
		toolCallReq{"web_fetch", map[string]any{"url": other.URL + "/exfil?data=1"}},
	)
	reqs = c.permissionRequests()
	if isErr[0] || res[0] != "page /b" {
		t.Errorf("remembered origin: %q", res[0])
	}
	if !isErr[1] || len(reqs) != 2 || reqs[1].ToolCall.Title == nil || !strings.Contains(*reqs[1].ToolCall.Title, other.URL+"/exfil") {
		t.Errorf("another origin offline in full mode: %q, %d requests", res[1], len(reqs))
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("the servers saw %d requests, want 2 (the refused one must not arrive)", n)
	}
}

// TestTaskSubAgent: task runs a read-only sub-agent with a context of its
// own (read and search tools only, its calls not shown as tool calls of
// their own) and gives its report to the main model.
func TestTaskSubAgent(t *testing.T) {
	env := newEnv(t, "")
	env.write("pkg/parse.go", "package pkg\n\nfunc Parse() {}\n")
	var subReqs []model.Request
	var mu sync.Mutex
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		done := func(text string) {
			_ = yield(model.Event{Type: model.EventText, Text: text}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
		}
		call := func(id, name, in string) {
			_ = yield(model.Event{Type: model.EventToolDone, ToolCallID: id, ToolName: name, Input: json.RawMessage(in)}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
		}
		if strings.HasPrefix(req.System, "You are a read-only exploration sub-agent") {
			mu.Lock()
			subReqs = append(subReqs, *req)
			mu.Unlock()
			switch len(toolResults(*req)) {
			case 0:
				call("s1", "grep", `{"pattern":"func Parse"}`)
			case 1:
				call("s2", "run_command", `{"command":"rm -rf /"}`)
			default:
				done("Parse is defined at pkg/parse.go:3.")
			}
			return
		}
		if len(toolResults(*req)) == 0 {
			call("t1", "task", `{"description":"find Parse","prompt":"Where is Parse defined?"}`)
			return
		}
		done("ok")
	}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	c.mustPrompt(sid, "where is Parse?", acp.StopReasonEndTurn)
	res := toolResults(rec.last(t))
	if len(res) != 1 || res[0].IsError || !strings.Contains(resultText(res[0]), "Parse is defined at pkg/parse.go:3.") {
		t.Fatalf("task result: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(subReqs) != 3 {
		t.Fatalf("%d sub-agent requests", len(subReqs))
	}
	if names := toolNames(subReqs[0]); !slices.Equal(names, []string{"glob", "grep", "list_dir", "read_file"}) {
		t.Errorf("sub-agent tools %v", names)
	}
	if got := resultText(toolResults(subReqs[1])[0]); !strings.Contains(got, "pkg/parse.go:3: func Parse() {}") {
		t.Errorf("the sub-agent's grep: %q", got)
	}
	if r := toolResults(subReqs[2])[1]; !r.IsError || !strings.Contains(resultText(r), "unknown tool \"run_command\"") {
		t.Errorf("the sub-agent ran a command: %+v", r)
	}
	for _, u := range c.allUpdates(sid) {
		if u.ToolCall != nil && u.ToolCall.ToolCallID != "t1" {
			t.Errorf("a sub-agent call was shown as a tool call: %s", u.ToolCall.ToolCallID)
		}
		if u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallID != "t1" {
			t.Errorf("a sub-agent call was updated: %s", u.ToolCallUpdate.ToolCallID)
		}
	}
}
