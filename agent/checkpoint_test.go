package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"acpd/acp"
	"acpd/model"
)

// byPrompt is a backend that, in a turn whose prompt is a key of turns,
// makes that key's tool calls one per request, then answers "done."; any
// other prompt is answered "ok." at once.
func byPrompt(turns map[string][]toolCallReq) backendFunc {
	return func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		// The prompt's calls, played as toolSeq plays them.
		toolSeq(turns[strings.TrimSpace(lastUserText(req))]...)(ctx, req, yield)
	}
}

func readCall(path string) toolCallReq {
	return toolCallReq{"read_file", map[string]any{"path": path}}
}

func editCall(path, old, new string) toolCallReq {
	return toolCallReq{"edit_file", map[string]any{"path": path, "old_string": old, "new_string": new}}
}

func patchCall(patch string) toolCallReq {
	return toolCallReq{"apply_patch", map[string]any{"input": patch}}
}

// restorePerms answers the checkpoint commands' permission requests: a
// request whose title contains "changed since" gets overwrite, every other
// one restore; it records the titles and the diffs shown.
type restorePerms struct {
	mu        sync.Mutex
	overwrite bool
	titles    []string
	diffs     map[string]acp.Diff
}

func (r *restorePerms) answer(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	title := ""
	if req.ToolCall.Title != nil {
		title = *req.ToolCall.Title
	}
	r.titles = append(r.titles, title)
	if r.diffs == nil {
		r.diffs = map[string]acp.Diff{}
	}
	for _, c := range req.ToolCall.Content {
		if c.Diff != nil {
			r.diffs[c.Diff.Path] = *c.Diff
		}
	}
	if strings.Contains(title, "changed since") && !r.overwrite {
		return choose(acp.PermissionOptionKindRejectOnce)(ctx, req)
	}
	return choose(acp.PermissionOptionKindAllowOnce)(ctx, req)
}

func (e *testEnv) read(rel string) (string, bool) {
	b, err := os.ReadFile(e.path(rel))
	if err != nil {
		return "", false
	}
	return string(b), true
}

func (e *testEnv) mustContent(rel, want string) {
	e.t.Helper()
	got, ok := e.read(rel)
	if !ok {
		e.t.Fatalf("%s is missing, want %q", rel, want)
	}
	if got != want {
		e.t.Fatalf("%s = %q, want %q", rel, got, want)
	}
}

func (e *testEnv) mustMissing(rel string) {
	e.t.Helper()
	if got, ok := e.read(rel); ok {
		e.t.Fatalf("%s exists (%q), want it missing", rel, got)
	}
}

// editTurns are the tool calls of a turn that changes files through every
// write path of the file tools.
func editTurns() map[string][]toolCallReq {
	return map[string][]toolCallReq{
		"edit": {
			readCall("a.txt"),
			editCall("a.txt", "alpha", "ALPHA"),
			writeCall("new.txt", "brand new\n"),
			readCall("b.txt"),
			readCall("c.txt"),
			patchCall("*** Begin Patch\n*** Update File: b.txt\n@@\n-bravo\n+BRAVO\n*** Delete File: c.txt\n*** Add File: p.txt\n+patched\n*** End Patch"),
		},
	}
}

func TestUndoRestoresEditsWritesAndPatches(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, byPrompt(editTurns()))
	env.write("a.txt", "alpha\r\nline two\n")
	env.write("b.txt", "bravo\nno newline at the end")
	env.write("c.txt", "charlie\n")
	c, sid := env.fullSession()
	perms := &restorePerms{}
	c.setPerm(perms.answer)
	c.mustPrompt(sid, "edit", acp.StopReasonEndTurn)
	env.mustContent("a.txt", "ALPHA\r\nline two\n")
	env.mustContent("p.txt", "patched\n")
	env.mustMissing("c.txt")

	c.mustPrompt(sid, "/undo", acp.StopReasonEndTurn)
	env.mustContent("a.txt", "alpha\r\nline two\n")
	env.mustContent("b.txt", "bravo\nno newline at the end")
	env.mustContent("c.txt", "charlie\n")
	env.mustMissing("new.txt")
	env.mustMissing("p.txt")
	if len(perms.titles) != 1 || !strings.Contains(perms.titles[0], "restore 5 files") {
		t.Fatalf("permission requests: %q", perms.titles)
	}
	d, ok := perms.diffs[env.path("a.txt")]
	if !ok || d.OldText == nil || *d.OldText != "ALPHA\r\nline two\n" || d.NewText != "alpha\r\nline two\n" {
		t.Errorf("diff of a.txt: %+v", d)
	}
	// The undone turn is not undone twice.
	us := c.promptUpdates(sid, "/undo")
	if txt := chunkText(us); !strings.Contains(txt, "Nothing to undo") {
		t.Errorf("second /undo: %q", txt)
	}
}

func TestUndoKeepsTheUsersChanges(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, byPrompt(editTurns()))
	env.write("a.txt", "alpha\n")
	env.write("b.txt", "bravo\n")
	env.write("c.txt", "charlie\n")
	c, sid := env.fullSession()
	perms := &restorePerms{}
	c.setPerm(perms.answer)
	c.mustPrompt(sid, "edit", acp.StopReasonEndTurn)
	env.write("a.txt", "the user's own edit\n")

	us := c.promptUpdates(sid, "/undo")
	env.mustContent("a.txt", "the user's own edit\n")
	env.mustContent("b.txt", "bravo\n")
	env.mustContent("c.txt", "charlie\n")
	if len(perms.titles) != 2 || !strings.Contains(perms.titles[1], "1 file changed since") {
		t.Fatalf("permission requests: %q", perms.titles)
	}
	if txt := chunkText(us); !strings.Contains(txt, "a.txt changed since and was kept") {
		t.Errorf("undo's answer: %q", txt)
	}
}

func TestUndoOverwritesTheUsersChangesWhenAllowed(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, byPrompt(editTurns()))
	env.write("a.txt", "alpha\n")
	env.write("b.txt", "bravo\n")
	env.write("c.txt", "charlie\n")
	c, sid := env.fullSession()
	perms := &restorePerms{overwrite: true}
	c.setPerm(perms.answer)
	c.mustPrompt(sid, "edit", acp.StopReasonEndTurn)
	env.write("a.txt", "the user's own edit\n")
	c.mustPrompt(sid, "/undo", acp.StopReasonEndTurn)
	env.mustContent("a.txt", "alpha\n")
	if d := perms.diffs[env.path("a.txt")]; d.OldText == nil || *d.OldText != "the user's own edit\n" {
		t.Errorf("the overwrite request did not show the user's version: %+v", d)
	}
}

func TestUndoDeclinedChangesNothing(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, byPrompt(editTurns()))
	env.write("a.txt", "alpha\n")
	env.write("b.txt", "bravo\n")
	env.write("c.txt", "charlie\n")
	c, sid := env.fullSession()
	c.setPerm(choose(acp.PermissionOptionKindRejectOnce))
	c.mustPrompt(sid, "edit", acp.StopReasonEndTurn)
	c.mustPrompt(sid, "/undo", acp.StopReasonEndTurn)
	env.mustContent("a.txt", "ALPHA\n")
	env.mustMissing("c.txt")
	// Still undoable.
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	c.mustPrompt(sid, "/undo", acp.StopReasonEndTurn)
	env.mustContent("a.txt", "alpha\n")
}

func TestCheckpointSaysWhenAFileIsTooLargeToKeep(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, byPrompt(map[string][]toolCallReq{"big": {readCall("big.txt"), writeCall("big.txt", "small\n")}}))
	env.write("big.txt", strings.Repeat("0123456789abcde\n", 8<<16+1)) // just over 8 MiB
	c, sid := env.fullSession()
	us := c.promptUpdates(sid, "big")
	env.mustContent("big.txt", "small\n")
	if txt := chunkText(us); !strings.Contains(txt, "Not kept for /undo: "+env.path("big.txt")) || !strings.Contains(txt, "larger than the 8 MiB") {
		t.Fatalf("the turn's answer: %q", txt)
	}
	us = c.promptUpdates(sid, "/undo")
	if txt := chunkText(us); !strings.Contains(txt, "cannot restore "+env.path("big.txt")) {
		t.Errorf("/undo: %q", txt)
	}
}

func commandCall(cmd string) toolCallReq {
	return toolCallReq{"run_command", map[string]any{"command": cmd}}
}

// TestUndoRestoresACommandsChanges: a turn that edits a file with edit_file
// and then runs a command that changes it again, changes another one and
// creates a third is undone as a whole.
func TestUndoRestoresACommandsChanges(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, byPrompt(map[string][]toolCallReq{
		"run": {
			readCall("a.txt"),
			editCall("a.txt", "alpha", "edited"),
			commandCall("printf 'by the command\\n' >> a.txt && printf 'B\\n' > sub/b.txt && printf 'new\\n' > made.txt"),
		},
	}))
	env.write("a.txt", "alpha\n")
	env.write("sub/b.txt", "bravo\n")
	c, sid := env.fullSession()
	perms := &restorePerms{}
	c.setPerm(perms.answer)
	c.mustPrompt(sid, "run", acp.StopReasonEndTurn)
	env.mustContent("a.txt", "edited\nby the command\n")
	env.mustContent("sub/b.txt", "B\n")
	env.mustContent("made.txt", "new\n")

	c.mustPrompt(sid, "/undo", acp.StopReasonEndTurn)
	env.mustContent("a.txt", "alpha\n")
	env.mustContent("sub/b.txt", "bravo\n")
	env.mustMissing("made.txt")
	if len(perms.titles) != 1 || !strings.Contains(perms.titles[0], "restore 3 files") {
		t.Fatalf("permission requests: %q", perms.titles)
	}
}

// answer runs a prompt that must end its turn and returns the text of
// that turn's answer.
func (c *client) answer(sid acp.SessionID, text string) string {
	c.t.Helper()
	n := len(c.allUpdates(sid))
	return chunkText(c.promptUpdates(sid, text)[n:])
}

// fiveTurns writes f.txt in every turn (v1..v5), g.txt in turn 4.
func fiveTurns() map[string][]toolCallReq {
	turns := map[string][]toolCallReq{}
	for i := 1; i <= 5; i++ {
		calls := []toolCallReq{writeCall("f.txt", fmt.Sprintf("v%d\n", i))}
		if i == 4 {
			calls = append(calls, writeCall("g.txt", "g\n"))
		}
		turns[fmt.Sprintf("t%d", i)] = calls
	}
	return turns
}

func TestRewindToTurnTwoOfFive(t *testing.T) {
	env := newEnv(t, "")
	rec := record(byPrompt(fiveTurns()))
	env.setModel(mainModel, rec)
	c, sid := env.fullSession()
	perms := &restorePerms{}
	c.setPerm(perms.answer)
	for i := 1; i <= 5; i++ {
		c.mustPrompt(sid, fmt.Sprintf("t%d", i), acp.StopReasonEndTurn)
	}
	env.mustContent("f.txt", "v5\n")
	list := c.answer(sid, "/rewind")
	for _, want := range []string{"1. t1 — 1 file changed", "4. t4 — 2 files changed", "5. t5"} {
		if !strings.Contains(list, want) {
			t.Errorf("the list lacks %q:\n%s", want, list)
		}
	}
	txt := c.answer(sid, "/rewind 2")
	if !strings.Contains(txt, "Rewound to the end of turn 2") {
		t.Fatalf("/rewind 2: %q", txt)
	}
	env.mustContent("f.txt", "v2\n")
	env.mustMissing("g.txt")
	if len(perms.titles) != 1 || !strings.Contains(perms.titles[0], "Rewind to turn 2: restore 2 files") {
		t.Errorf("permission requests: %q", perms.titles)
	}
	c.mustPrompt(sid, "next", acp.StopReasonEndTurn)
	if got := userTexts(rec.last(t)); strings.Join(got, ",") != "t1,t2,next" {
		t.Errorf("the model's conversation after the rewind: %q", got)
	}
	// The listing now has the kept turns and the new one.
	list = c.answer(sid, "/rewind")
	if !strings.Contains(list, "3. next") || strings.Contains(list, "t3") {
		t.Errorf("list after the rewind:\n%s", list)
	}

	// A later connection loads the rewound session.
	c.close()
	c2 := env.start(nil)
	c2.load(sid)
	replayed := chunkText(c2.allUpdates(sid))
	if strings.Contains(replayed, "t3") || strings.Contains(replayed, "t5") || !strings.Contains(replayed, "t2") {
		t.Errorf("session/load replayed turns the rewind dropped:\n%s", replayed)
	}
	if got := strings.Join(userChunks(c2.allUpdates(sid)), ","); got != "t1,t2,/rewind 2,next,/rewind" {
		t.Errorf("session/load replayed the user's messages %q", got)
	}
	c2.mustMode(sid, modeFull)
	c2.mustPrompt(sid, "again", acp.StopReasonEndTurn)
	if got := userTexts(rec.last(t)); strings.Join(got, ",") != "t1,t2,next,again" {
		t.Errorf("the loaded conversation: %q", got)
	}
	// /undo after the load undoes turn 2 (turns 3 to 5 are gone).
	c2.setPerm(perms.answer)
	c2.mustPrompt(sid, "/undo", acp.StopReasonEndTurn)
	env.mustContent("f.txt", "v1\n")
}

func TestForkThenDivergingEdits(t *testing.T) {
	env := newEnv(t, "")
	rec := record(byPrompt(map[string][]toolCallReq{
		"t1": {writeCall("f.txt", "v1\n")},
		"t2": {writeCall("f.txt", "v2\n")},
		"a":  {writeCall("a.txt", "by a\n")},
		"b":  {writeCall("b.txt", "by b\n")},
	}))
	env.setModel(mainModel, rec)
	c := env.connect()
	var init json.RawMessage
	if err := c.call(acp.AgentMethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersion1}, &init); err != nil {
		t.Fatal(err)
	}
	var caps struct {
		AgentCapabilities struct {
			SessionCapabilities map[string]any `json:"sessionCapabilities"`
		} `json:"agentCapabilities"`
	}
	json.Unmarshal(init, &caps)
	if _, ok := caps.AgentCapabilities.SessionCapabilities["fork"]; !ok || caps.AgentCapabilities.SessionCapabilities["list"] == nil {
		t.Fatalf("session capabilities: %s", init)
	}
	perms := &restorePerms{}
	c.setPerm(perms.answer)
	a := c.newSession()
	c.mustMode(a, modeFull)
	c.mustPrompt(a, "t1", acp.StopReasonEndTurn)
	c.mustPrompt(a, "t2", acp.StopReasonEndTurn)

	var fork acp.ForkSessionResponse
	if err := c.call(acp.AgentMethodSessionFork, map[string]any{"sessionId": a, "cwd": env.cwd, "mcpServers": []any{}}, &fork); err != nil {
		t.Fatalf("session/fork: %v", err)
	}
	b := fork.SessionID
	if b == "" || b == a || fork.Modes == nil || fork.Modes.CurrentModeID != modeFull {
		t.Fatalf("fork: %+v", fork)
	}
	c.mustPrompt(b, "b", acp.StopReasonEndTurn)
	if got := userTexts(rec.last(t)); strings.Join(got, ",") != "t1,t2,b" {
		t.Errorf("the fork's conversation: %q", got)
	}
	c.mustPrompt(a, "a", acp.StopReasonEndTurn)
	if got := userTexts(rec.last(t)); strings.Join(got, ",") != "t1,t2,a" {
		t.Errorf("the source's conversation: %q", got)
	}
	env.mustContent("a.txt", "by a\n")
	env.mustContent("b.txt", "by b\n")

	// Each session undoes its own turn only.
	c.mustPrompt(b, "/undo", acp.StopReasonEndTurn)
	env.mustMissing("b.txt")
	env.mustContent("a.txt", "by a\n")
	c.mustPrompt(a, "/undo", acp.StopReasonEndTurn)
	env.mustMissing("a.txt")
	env.mustContent("f.txt", "v2\n")
	// The fork has the source's checkpoints of the turns it copied.
	c.mustPrompt(b, "/undo", acp.StopReasonEndTurn)
	env.mustContent("f.txt", "v1\n")

	// /fork at a turn, for editors without session/fork.
	txt := c.answer(a, "/fork 1")
	_, after, ok := strings.Cut(txt, "into session ")
	id, _, _ := strings.Cut(after, ":")
	if !ok || id == "" {
		t.Fatalf("/fork 1: %q", txt)
	}
	c.load(acp.SessionID(id))
	c.mustPrompt(acp.SessionID(id), "next", acp.StopReasonEndTurn)
	if got := userTexts(rec.last(t)); strings.Join(got, ",") != "t1,next" {
		t.Errorf("the conversation forked at turn 1: %q", got)
	}
}

// TestUndoThroughTheEditor: with an editor that serves files, the turn's
// previous content is the editor's buffer (unsaved), and /undo writes it
// back to the buffer.
func TestUndoThroughTheEditor(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, byPrompt(map[string][]toolCallReq{"edit": {readCall("a.txt"), editCall("a.txt", "unsaved", "edited")}}))
	env.write("a.txt", "on disk\n")
	c := env.start(&acp.ClientCapabilities{Fs: &acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}})
	sid := c.newSession()
	c.mustMode(sid, modeFull)
	p := env.path("a.txt")
	c.mu.Lock()
	c.buffers[p] = "unsaved buffer\n"
	c.mu.Unlock()
	perms := &restorePerms{}
	c.setPerm(perms.answer)
	c.mustPrompt(sid, "edit", acp.StopReasonEndTurn)
	c.mustPrompt(sid, "/undo", acp.StopReasonEndTurn)
	c.mu.Lock()
	got := c.buffers[p]
	c.mu.Unlock()
	if got != "unsaved buffer\n" {
		t.Errorf("the editor's buffer after /undo: %q (requests %q)", got, perms.titles)
	}
	env.mustContent("a.txt", "on disk\n")
}

// TestCommandCheckpointLeavesOutIgnoredDirectories: what git ignores
// (dependencies, build output), existing before the command or created by
// it, is not in the command's checkpoint; /undo leaves it alone.
func TestCommandCheckpointLeavesOutIgnoredDirectories(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	env := newEnv(t, "")
	git := gitRepo(t, env)
	env.write(".gitignore", "node_modules/\nbuild/\n")
	env.write("src.txt", "source\n")
	env.write("node_modules/dep/index.js", "v1\n")
	git("add", ".gitignore", "src.txt")
	git("commit", "-qm", "init")
	env.setModel(mainModel, byPrompt(map[string][]toolCallReq{
		"run": {commandCall("printf 'v2\\n' > node_modules/dep/index.js && mkdir build && printf out > build/out.bin && printf 'changed\\n' > src.txt")},
	}))
	c, sid := env.fullSession()
	perms := &restorePerms{}
	c.setPerm(perms.answer)
	c.mustPrompt(sid, "run", acp.StopReasonEndTurn)
	c.mustPrompt(sid, "/undo", acp.StopReasonEndTurn)
	env.mustContent("src.txt", "source\n")
	env.mustContent("node_modules/dep/index.js", "v2\n")
	env.mustContent("build/out.bin", "out")
	if len(perms.titles) != 1 || !strings.Contains(perms.titles[0], "restore 1 file") {
		t.Errorf("permission requests: %q", perms.titles)
	}
}

// TestUndoRestoresASubAgentsCommand: a command a custom sub-agent runs
// (task) is part of its parent's turn.
func TestUndoRestoresASubAgentsCommand(t *testing.T) {
	env := newEnv(t, "")
	env.write(".claude/agents/fixer.md", "---\nname: fixer\ndescription: Fixes things\ntools: Bash\n---\nYou are the fixer.\n")
	env.write("f.txt", "before\n")
	env.setModel(mainModel, backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		call := func(id, name, in string) {
			_ = yield(model.Event{Type: model.EventToolDone, ToolCallID: id, ToolName: name, Input: json.RawMessage(in)}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
		}
		n := len(toolResults(*req))
		switch {
		case strings.HasPrefix(req.System, "You are the fixer.") && n == 0:
			call("s1", "run_command", `{"command":"printf 'by the sub-agent\\n' > f.txt"}`)
		case !strings.HasPrefix(req.System, "You are the fixer.") && n == 0:
			call("t1", "task", `{"description":"fix","prompt":"Fix f.txt","subagent_type":"fixer"}`)
		default:
			_ = yield(model.Event{Type: model.EventText, Text: "done."}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
		}
	}))
	c, sid := env.fullSession()
	perms := &restorePerms{}
	c.setPerm(perms.answer)
	c.mustPrompt(sid, "fix it", acp.StopReasonEndTurn)
	env.mustContent("f.txt", "by the sub-agent\n")
	c.mustPrompt(sid, "/undo", acp.StopReasonEndTurn)
	env.mustContent("f.txt", "before\n")
}

// TestForkElsewhereHasNoCheckpoints: a fork in another directory gets the
// conversation but not the checkpoints, whose files are the source's: its
// /undo never writes there.
func TestForkElsewhereHasNoCheckpoints(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, byPrompt(map[string][]toolCallReq{"t1": {writeCall("f.txt", "v1\n")}}))
	c, a := env.fullSession()
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	c.mustPrompt(a, "t1", acp.StopReasonEndTurn)
	var fork acp.ForkSessionResponse
	if err := c.call(acp.AgentMethodSessionFork, map[string]any{"sessionId": a, "cwd": env.outside, "mcpServers": []any{}}, &fork); err != nil {
		t.Fatalf("session/fork: %v", err)
	}
	if txt := c.answer(fork.SessionID, "/undo"); !strings.Contains(txt, "Nothing to undo") {
		t.Errorf("/undo in the fork elsewhere: %q", txt)
	}
	env.mustContent("f.txt", "v1\n")
	if list := c.answer(fork.SessionID, "/rewind"); !strings.Contains(list, "1. t1") {
		t.Errorf("the fork's turns: %q", list)
	}
}
