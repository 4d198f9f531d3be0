package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/agent/internal/sysprompt"
	"acpd/compact"
	"acpd/internal/loopguard"
	"acpd/internal/testproc"
	"acpd/model"
)

// Tests of the agent loop: tool scheduling, permissions and cancellation as
// the model sees them, loop detection, compaction, usage, project
// instructions, restarts after a failed stream, provider fields and
// capability-dependent updates.

// ---------------------------------------------------------------------------
// Helpers.

// hookFunc intercepts a request or notification the fake client receives.
// Returning errPass hands it to the client's default handling.
type hookFunc func(c *client, ctx context.Context, method string, params json.RawMessage) (any, error)

// errPass is returned by a hookFunc that does not handle a message.
var errPass = errors.New("not handled by the hook")

// sessionCaps is a client's capabilities with the session capabilities sc
// when on, none (nil) otherwise.
func sessionCaps(on bool, sc acp.ClientSessionCapabilities) *acp.ClientCapabilities {
	if !on {
		return nil
	}
	return &acp.ClientCapabilities{Session: &sc}
}

// startWith is testEnv.start with two changes: adjust, when not nil, edits
// the ModelInfo the agent's resolver returns (context window, prices,
// image support), and hook, when not nil, sees every message the client
// receives before the default handling.
func (e *testEnv) startWith(caps *acp.ClientCapabilities, adjust func(*model.ModelInfo), hook hookFunc) *client {
	t := e.t
	t.Helper()
	c := e.connectWith(adjust, hook)
	var resp acp.InitializeResponse
	if err := c.call(acp.AgentMethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersion1, ClientCapabilities: caps}, &resp); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// sessionIn opens a session whose cwd is dir.
func (c *client) sessionIn(dir string) acp.SessionID {
	c.t.Helper()
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: dir, McpServers: []acp.McpServer{}}, &resp); err != nil {
		c.t.Fatalf("session/new: %v", err)
	}
	return resp.SessionID
}

// load loads sid into this client's agent.
func (c *client) load(sid acp.SessionID) {
	c.t.Helper()
	if err := c.call(acp.AgentMethodSessionLoad, acp.LoadSessionRequest{SessionID: sid, Cwd: c.env.cwd, McpServers: []acp.McpServer{}}, &acp.LoadSessionResponse{}); err != nil {
		c.t.Fatalf("session/load: %v", err)
	}
}

// boundedContext ends at the test's deadline or after half the liveness
// bound, whichever comes first: waits on it fail a hanging test, with a
// message, before the client's own calls give up.
func boundedContext(t *testing.T) context.Context {
	d := time.Now().Add(liveness / 2)
	if td, ok := t.Deadline(); ok && td.Before(d) {
		d = td
	}
	ctx, cancel := context.WithDeadline(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// allAtOnce is a backend whose first response in every turn makes all the
// given calls at once, in order; the next response answers "done.".
func allAtOnce(calls ...toolCallReq) backendFunc {
	return func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		if turnStep(req) > 0 {
			_ = yield(model.Event{Type: model.EventText, Text: "done."}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
			return
		}
		for i, c := range calls {
			in, err := json.Marshal(c.input)
			if err != nil {
				yield(model.Event{}, err)
				return
			}
			id := fmt.Sprintf("call_%d_%d", len(req.Messages), i)
			if !yield(model.Event{Type: model.EventToolStart, ToolCallID: id, ToolName: c.name}, nil) ||
				!yield(model.Event{Type: model.EventToolDone, ToolCallID: id, ToolName: c.name, Input: in}, nil) {
				return
			}
		}
		yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
	}
}

// transcriptProblems checks the pairing providers insist on: every tool use
// of an assistant message has exactly one result in the next message, and
// every result answers a use of the message before it.
func transcriptProblems(msgs []model.Message) []string {
	var out []string
	for i, m := range msgs {
		if m.Role != model.RoleAssistant {
			continue
		}
		uses := map[string]bool{}
		for _, p := range m.Parts {
			if p.Type == model.PartToolUse {
				uses[p.ToolCallID] = true
			}
		}
		if len(uses) == 0 {
			continue
		}
		if i+1 >= len(msgs) || msgs[i+1].Role != model.RoleUser {
			out = append(out, fmt.Sprintf("message %d: tool uses without a following result message", i))
			continue
		}
		for _, p := range msgs[i+1].Parts {
			if p.Type != model.PartToolResult {
				continue
			}
			if !uses[p.ToolCallID] {
				out = append(out, fmt.Sprintf("message %d: result for unknown or repeated call %s", i+1, p.ToolCallID))
			}
			delete(uses, p.ToolCallID)
		}
		for id := range uses {
			out = append(out, fmt.Sprintf("message %d: call %s has no result", i, id))
		}
	}
	return out
}

// resultFor returns the tool_result part for call id in req.
func resultFor(req model.Request, id string) (model.Part, bool) {
	for _, p := range toolResults(req) {
		if p.ToolCallID == id {
			return p, true
		}
	}
	return model.Part{}, false
}

// toolUseIDs lists the ids of the tool uses in req's transcript, in order.
func toolUseIDs(req model.Request) []string {
	var ids []string
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			if p.Type == model.PartToolUse {
				ids = append(ids, p.ToolCallID)
			}
		}
	}
	return ids
}

// fsEvent is the start or end of one fs/* request the client served.
type fsEvent struct {
	end    bool
	method string
	path   string
}

func (e fsEvent) String() string {
	what := "begin"
	if e.end {
		what = "end"
	}
	return fmt.Sprintf("%s %s %s", what, strings.TrimPrefix(e.method, "fs/"), filepath.Base(e.path))
}

// fsTracker is an editor fake's view of its fs/* requests: their order and
// how many ran at once.
type fsTracker struct {
	mu          sync.Mutex
	events      []fsEvent
	inflight    int
	maxInflight int
}

func (f *fsTracker) begin(method, path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inflight++
	f.maxInflight = max(f.maxInflight, f.inflight)
	f.events = append(f.events, fsEvent{method: method, path: path})
}

func (f *fsTracker) finish(method, path string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inflight--
	f.events = append(f.events, fsEvent{end: true, method: method, path: path})
}

func (f *fsTracker) snapshot() ([]fsEvent, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events), f.maxInflight
}

// serialHook tracks every fs/* request and, before answering one, makes a
// full round trip to the agent (session/list): an agent that sent its next
// fs/* request without waiting for this answer would have it arrive while
// this one is still open.
func (f *fsTracker) serialHook(c *client, ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != acp.ClientMethodFsReadTextFile && method != acp.ClientMethodFsWriteTextFile {
		return nil, errPass
	}
	var p struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(params, &p)
	f.begin(method, p.Path)
	defer f.finish(method, p.Path)
	if err := c.conn.Call(ctx, acp.AgentMethodSessionList, acp.ListSessionsRequest{}, &acp.ListSessionsResponse{}); err != nil {
		return nil, err
	}
	return c.handle(ctx, method, params)
}

var editorCaps = &acp.ClientCapabilities{Fs: &acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}

// ---------------------------------------------------------------------------
// Tool scheduling.

// TestParallelReads: the read-only calls of one response run at once. The
// editor holds every fs/read_text_file until all three have arrived, so the
// turn completes only if the agent issued them concurrently.
func TestParallelReads(t *testing.T) {
	env := newEnv(t, "")
	names := []string{"a.txt", "b.txt", "c.txt"}
	want := map[string]bool{}
	for _, n := range names {
		env.write(n, "content of "+n+"\n")
		want[env.path(n)] = true
	}
	bctx := boundedContext(t)
	var arrived atomic.Int32
	all := make(chan struct{})
	hook := func(c *client, ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != acp.ClientMethodFsReadTextFile {
			return nil, errPass
		}
		var req acp.ReadTextFileRequest
		if err := acp.Unmarshal(params, &req); err != nil || !want[req.Path] {
			return nil, errPass
		}
		if arrived.Add(1) == int32(len(names)) {
			close(all)
		}
		select {
		case <-all:
			return c.handle(ctx, method, params)
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-bctx.Done():
			return nil, &jsonrpc.Error{Code: int(acp.ErrorCodeInternalError), Message: fmt.Sprintf("only %d of %d reads arrived: they do not run concurrently", arrived.Load(), len(names))}
		}
	}
	c := env.startWith(editorCaps, nil, hook)
	sid := c.newSession()
	var calls []toolCallReq
	for _, n := range names {
		calls = append(calls, toolCallReq{"read_file", map[string]any{"path": n}})
	}
	rec := record(allAtOnce(calls...))
	env.setModel(mainModel, rec)
	c.mustPrompt(sid, "read them all", acp.StopReasonEndTurn)
	res := toolResults(rec.last(t))
	if len(res) != len(names) {
		t.Fatalf("%d tool results, want %d", len(res), len(names))
	}
	for i, p := range res {
		if p.IsError || !strings.Contains(resultText(p), "content of "+names[i]) {
			t.Errorf("read of %s: %q (error %v)", names[i], resultText(p), p.IsError)
		}
	}
	if n := arrived.Load(); n != int32(len(names)) {
		t.Errorf("%d editor reads, want %d", n, len(names))
	}
}

// TestOrderedWrites: calls with side effects run one at a time in the order
// the model gave them.
func TestOrderedWrites(t *testing.T) {
	env := newEnv(t, "")
	var fst fsTracker
	c := env.startWith(editorCaps, nil, fst.serialHook)
	sid := c.newSession()
	c.mustMode(sid, modeFull)
	rec := record(allAtOnce(
		writeCall("a.txt", "one\n"),
		toolCallReq{"edit_file", map[string]any{"path": "a.txt", "old_string": "one", "new_string": "two"}},
		writeCall("b.txt", "bee\n"),
	))
	env.setModel(mainModel, rec)
	c.mustPrompt(sid, "write", acp.StopReasonEndTurn)
	for _, p := range toolResults(rec.last(t)) {
		if p.IsError {
			t.Errorf("call %s failed: %s", p.ToolCallID, resultText(p))
		}
	}
	c.mu.Lock()
	writes := slices.Clone(c.fsWrites)
	c.mu.Unlock()
	type w struct{ path, content string }
	var got []w
	for _, r := range writes {
		got = append(got, w{r.Path, r.Content})
	}
	wantWrites := []w{{env.path("a.txt"), "one\n"}, {env.path("a.txt"), "two\n"}, {env.path("b.txt"), "bee\n"}}
	if !slices.Equal(got, wantWrites) {
		t.Errorf("fs/write_text_file requests %v, want %v", got, wantWrites)
	}
	events, most := fst.snapshot()
	if most != 1 {
		t.Errorf("%d fs requests were open at once, want 1: %v", most, events)
	}
}

// TestMixedCallsOrder: read, write, read: the write runs alone, after the
// first read and before the second.
func TestMixedCallsOrder(t *testing.T) {
	env := newEnv(t, "")
	env.write("r1.txt", "first\n")
	env.write("r2.txt", "second\n")
	var fst fsTracker
	c := env.startWith(editorCaps, nil, fst.serialHook)
	sid := c.newSession()
	c.mustMode(sid, modeFull)
	rec := record(allAtOnce(
		toolCallReq{"read_file", map[string]any{"path": "r1.txt"}},
		writeCall("w.txt", "new\n"),
		toolCallReq{"read_file", map[string]any{"path": "r2.txt"}},
	))
	env.setModel(mainModel, rec)
	c.mustPrompt(sid, "mixed", acp.StopReasonEndTurn)
	res := toolResults(rec.last(t))
	if len(res) != 3 || res[0].IsError || res[1].IsError || res[2].IsError {
		t.Fatalf("tool results %+v", res)
	}
	events, most := fst.snapshot()
	r, w := acp.ClientMethodFsReadTextFile, acp.ClientMethodFsWriteTextFile
	want := []fsEvent{
		{false, r, env.path("r1.txt")}, {true, r, env.path("r1.txt")},
		// write_file reads the target first (stale-write check), then writes.
		{false, r, env.path("w.txt")}, {true, r, env.path("w.txt")},
		{false, w, env.path("w.txt")}, {true, w, env.path("w.txt")},
		{false, r, env.path("r2.txt")}, {true, r, env.path("r2.txt")},
	}
	if !slices.Equal(events, want) {
		t.Errorf("fs requests\n%v\nwant\n%v", events, want)
	}
	if most != 1 {
		t.Errorf("%d fs requests were open at once, want 1", most)
	}
}

// ---------------------------------------------------------------------------
// Permissions and cancellation, as the model sees them.

// TestPermissionDenialReachesModel: a refused call is an error result the
// model reads in its next request, with the reason.
func TestPermissionDenialReachesModel(t *testing.T) {
	for _, tc := range []struct {
		mode, want string
		asks       int
	}{
		{modeAsk, "The user rejected this write_file call", 1},
		{modePlan, "plan mode", 0},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			env := newEnv(t, "")
			c := env.start(nil)
			sid := c.newSession()
			c.mustMode(sid, tc.mode)
			c.setPerm(choose(acp.PermissionOptionKindRejectOnce))
			rec := record(toolSeq(writeCall("x.txt", "x")))
			env.setModel(mainModel, rec)
			c.mustPrompt(sid, "write x", acp.StopReasonEndTurn)
			reqs := rec.requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2 (the call, then the answer to its result)", len(reqs))
			}
			ids := toolUseIDs(reqs[1])
			if len(ids) != 1 {
				t.Fatalf("tool uses %v", ids)
			}
			res, ok := resultFor(reqs[1], ids[0])
			if !ok || !res.IsError || !strings.Contains(resultText(res), tc.want) {
				t.Errorf("result for %s: %+v, want an error containing %q", ids[0], res, tc.want)
			}
			if p := transcriptProblems(reqs[1].Messages); len(p) > 0 {
				t.Errorf("transcript: %v", p)
			}
			if n := len(c.permissionRequests()); n != tc.asks {
				t.Errorf("%d permission requests, want %d", n, tc.asks)
			}
			if fileExists(env.path("x.txt")) {
				t.Error("the refused write happened")
			}
			if st := finalStatus(c.allUpdates(sid), ids[0]); st != acp.ToolCallStatusFailed {
				t.Errorf("the refused call ends %q, want failed", st)
			}
		})
	}
}

// TestCancelDuringTool: session/cancel while run_command runs on the local
// PTY stops the command, ends the turn "cancelled", and leaves a transcript
// in which the call has its result, so the next turn is a valid request.
func TestCancelDuringTool(t *testing.T) {
	env := newEnv(t, "")
	c, sid := env.fullSession()
	pidFile := filepath.Join(env.cwd, "pid")
	// The shell records its pid and becomes sleep.
	cmd := fmt.Sprintf("echo $$ > %[1]s.tmp && readlink /proc/$$/ns/pid >> %[1]s.tmp && mv %[1]s.tmp %[1]s && exec sleep 30", pidFile)
	env.setModel(mainModel, toolSeq(toolCallReq{"run_command", map[string]any{"command": cmd}}))
	for _, pid := range cancelledPids(t, c, sid, pidFile) {
		if testproc.Alive(pid) {
			t.Errorf("the command (pid %d) survived the cancelled turn", pid)
		}
	}

	rec := record(okBackend)
	env.setModel(mainModel, rec)
	c.mustPrompt(sid, "next", acp.StopReasonEndTurn)
	req := rec.last(t)
	ids := toolUseIDs(req)
	if len(ids) != 1 {
		t.Fatalf("tool uses in the transcript: %v", ids)
	}
	p, ok := resultFor(req, ids[0])
	if !ok || !p.IsError || !strings.Contains(resultText(p), "cancelled") {
		t.Errorf("result of the cancelled command: %+v", p)
	}
	if strings.Contains(resultText(p), "[exit code") {
		t.Errorf("the command ran to its end: %q", resultText(p))
	}
	if probs := transcriptProblems(req.Messages); len(probs) > 0 {
		t.Errorf("transcript after the cancel: %v", probs)
	}
	if st := finalStatus(c.allUpdates(sid), ids[0]); st != acp.ToolCallStatusFailed {
		t.Errorf("the cancelled call ends %q, want failed", st)
	}
}

// ---------------------------------------------------------------------------
// Loop detection.

// TestLoopDetection: the same call with the same arguments runs at most
// loopguard.Limit times in a row; the next identical call does not run and
// gets an error result saying the result will not change; only if the
// model then repeats it once more does the turn end, with an explanation
// (that call does not run but still gets a result). Calls whose arguments
// differ are not a loop.
func TestLoopDetection(t *testing.T) {
	t.Run("identical", func(t *testing.T) {
		env := newEnv(t, "")
		env.write("f.txt", "x\n")
		var lines []string
		const n = loopguard.Limit + 2
		for i := 1; i <= n; i++ {
			// Key order and spacing differ: the arguments are the same.
			in := `{"path":"f.txt","limit":5}`
			if i%2 == 0 {
				in = `{ "limit": 5, "path": "f.txt" }`
			}
			lines = append(lines, fmt.Sprintf(`{"type":"tool_done","toolCallId":"c%d","toolName":"read_file","input":%s}`, i, in), `{"type":"finish"}`)
		}
		lines = append(lines, `{"type":"text","text":"ok"}`, `{"type":"finish"}`)
		rec := record(env.script(lines...))
		env.setModel(mainModel, rec)
		c := env.start(editorCaps)
		sid := c.newSession()
		ups := c.promptUpdates(sid, "loop")
		if msg := chunkText(ups); !strings.Contains(msg, "Stopped") || !strings.Contains(msg, "read_file") || !strings.Contains(msg, strconv.Itoa(loopguard.Limit)+" times") {
			t.Errorf("agent message %q does not explain the stop", msg)
		}
		if got := len(rec.requests()); got != n {
			t.Errorf("%d model requests, want %d", got, n)
		}
		c.mu.Lock()
		reads := len(c.fsReads)
		c.mu.Unlock()
		if reads != loopguard.Limit {
			t.Errorf("%d file reads, want %d: a repeated call ran", reads, loopguard.Limit)
		}
		// The refused call's result tells the model why (in the request
		// the model then answered by repeating it anyway).
		refused := fmt.Sprintf("c%d", loopguard.Limit+1)
		p, ok := resultFor(rec.last(t), refused)
		if !ok || !p.IsError || resultText(p) != loopguard.Refusal {
			t.Errorf("result of the refused call: %+v", p)
		}
		last := fmt.Sprintf("c%d", n)
		for _, id := range []string{refused, last} {
			if st := finalStatus(ups, id); st != acp.ToolCallStatusFailed {
				t.Errorf("call %s ends %q, want failed", id, st)
			}
		}
		// The next turn's transcript answers the stopped call.
		c.mustPrompt(sid, "go on", acp.StopReasonEndTurn)
		req := rec.last(t)
		p, ok = resultFor(req, last)
		if !ok || !p.IsError || !strings.Contains(resultText(p), "not run") {
			t.Errorf("result of the stopped call: %+v", p)
		}
		if probs := transcriptProblems(req.Messages); len(probs) > 0 {
			t.Errorf("transcript: %v", probs)
		}
	})
	t.Run("told once, the model changes course", func(t *testing.T) {
		env := newEnv(t, "")
		env.write("f.txt", "x\n")
		var lines []string
		for i := 1; i <= loopguard.Limit+1; i++ {
			lines = append(lines, fmt.Sprintf(`{"type":"tool_done","toolCallId":"c%d","toolName":"read_file","input":{"path":"f.txt"}}`, i), `{"type":"finish"}`)
		}
		lines = append(lines, `{"type":"tool_done","toolCallId":"d1","toolName":"list_dir","input":{"path":"."}}`, `{"type":"finish"}`,
			`{"type":"text","text":"found it"}`, `{"type":"finish"}`)
		rec := record(env.script(lines...))
		env.setModel(mainModel, rec)
		c := env.start(nil)
		sid := c.newSession()
		c.mustPrompt(sid, "look", acp.StopReasonEndTurn)
		if msg := chunkText(c.allUpdates(sid)); msg != "found it" {
			t.Errorf("agent message %q", msg)
		}
		if p, ok := resultFor(rec.last(t), "d1"); !ok || p.IsError {
			t.Errorf("the different call after the refusal: %+v", p)
		}
	})
	t.Run("an edit and test cycle is not a loop", func(t *testing.T) {
		env := newEnv(t, "")
		env.write("f.txt", "v0\n")
		var lines []string
		lines = append(lines, `{"type":"tool_done","toolCallId":"r","toolName":"read_file","input":{"path":"f.txt"}}`, `{"type":"finish"}`)
		for i := 1; i <= 4; i++ {
			// One response per round: the edit, then the same test command.
			lines = append(lines,
				fmt.Sprintf(`{"type":"tool_done","toolCallId":"e%d","toolName":"edit_file","input":{"path":"f.txt","old_string":"v%d","new_string":"v%d"}}`, i, i-1, i),
				fmt.Sprintf(`{"type":"tool_done","toolCallId":"t%d","toolName":"run_command","input":{"command":"cat f.txt"}}`, i), `{"type":"finish"}`)
		}
		lines = append(lines, `{"type":"text","text":"all green"}`, `{"type":"finish"}`)
		rec := record(env.script(lines...))
		env.setModel(mainModel, rec)
		c, sid := env.fullSession()
		c.mustPrompt(sid, "fix it", acp.StopReasonEndTurn)
		if data, _ := os.ReadFile(env.path("f.txt")); string(data) != "v4\n" {
			t.Errorf("f.txt = %q: an edit was dropped", data)
		}
		for _, p := range toolResults(rec.last(t)) {
			if p.IsError {
				t.Errorf("call %s: %s", p.ToolCallID, resultText(p))
			}
		}
	})
	t.Run("different", func(t *testing.T) {
		env := newEnv(t, "")
		env.write("f.txt", "1\n2\n3\n4\n5\n")
		var lines []string
		const n = loopguard.Limit + 2
		for i := 1; i <= n; i++ {
			lines = append(lines, fmt.Sprintf(`{"type":"tool_done","toolCallId":"c%d","toolName":"read_file","input":{"path":"f.txt","offset":%d}}`, i, i), `{"type":"finish"}`)
		}
		lines = append(lines, `{"type":"text","text":"read it all"}`, `{"type":"finish"}`)
		rec := record(env.script(lines...))
		env.setModel(mainModel, rec)
		c := env.start(editorCaps)
		sid := c.newSession()
		c.mustPrompt(sid, "page through", acp.StopReasonEndTurn)
		if msg := chunkText(c.allUpdates(sid)); msg != "read it all" {
			t.Errorf("agent message %q", msg)
		}
		if got := len(rec.requests()); got != n+1 {
			t.Errorf("%d model requests, want %d", got, n+1)
		}
		for _, p := range toolResults(rec.last(t)) {
			if p.IsError {
				t.Errorf("call %s: %s", p.ToolCallID, resultText(p))
			}
		}
	})
}

// ---------------------------------------------------------------------------
// Compaction.

// compactModel is a model with a tiny context window. Every turn makes one
// call (the first turn sets a plan, later ones read a file), reporting the
// usage given for that step, then answers. A summarisation request (no
// tools, the compaction prompt last) is answered with summary.
type compactModel struct {
	summary []string // summary chunks
	// usage returns the input tokens a response reports, by turn prompt and
	// step.
	usage func(prompt string, step int) int64
}

func (m *compactModel) backend() backendFunc {
	return func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		if isSummaryRequest(req) {
			for _, s := range m.summary {
				if !yield(model.Event{Type: model.EventText, Text: s}, nil) {
					return
				}
			}
			_ = yield(model.Event{Type: model.EventUsage, Usage: &model.Usage{InputTokens: 50, OutputTokens: 20}}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
			return
		}
		prompt, step := lastUserText(req), turnStep(req)
		usage := &model.Usage{InputTokens: m.usage(prompt, step), OutputTokens: 10}
		if step > 0 {
			_ = yield(model.Event{Type: model.EventText, Text: "done: " + prompt}, nil) &&
				yield(model.Event{Type: model.EventUsage, Usage: usage}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
			return
		}
		id := fmt.Sprintf("call_%d", len(req.Messages))
		name, in := "read_file", `{"path":"f.txt"}`
		if prompt == "make a plan" {
			name, in = "update_plan", `{"entries":[{"content":"Write the parser","status":"in_progress","priority":"high"},{"content":"Test the parser","status":"pending","priority":"medium"}]}`
		}
		_ = yield(model.Event{Type: model.EventToolDone, ToolCallID: id, ToolName: name, Input: json.RawMessage(in)}, nil) &&
			yield(model.Event{Type: model.EventUsage, Usage: usage}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
	}
}

// isSummaryRequest reports a compaction request: no tools, and the last
// message is the user's compaction prompt.
func isSummaryRequest(req *model.Request) bool {
	n := len(req.Messages)
	return n > 0 && req.Messages[n-1].Role == model.RoleUser && strings.HasSuffix(req.Messages[n-1].Text(), compact.Prompt)
}

// samePrefix reports whether the messages of a start the messages of b,
// cache marks aside: a request that reads b's prompt cache.
func samePrefix(a, b []model.Message) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.Cache, y.Cache = false, false
		xj, _ := json.Marshal(x)
		yj, _ := json.Marshal(y)
		if string(xj) != string(yj) {
			return false
		}
	}
	return true
}

// compactionUpdates returns the compaction updates among us.
func compactionUpdates(us []acp.SessionUpdate) []acp.SessionUpdate {
	var out []acp.SessionUpdate
	for _, u := range us {
		if u.CompactionUpdate != nil || u.CompactionSummaryChunk != nil {
			out = append(out, u)
		}
	}
	return out
}

// checkCompactionUpdates checks one compaction's updates: in_progress, the
// summary chunks, completed with the summary, all with one id.
func checkCompactionUpdates(t *testing.T, us []acp.SessionUpdate, summary string) {
	t.Helper()
	cu := compactionUpdates(us)
	if len(cu) < 3 || cu[0].CompactionUpdate == nil || cu[len(cu)-1].CompactionUpdate == nil {
		t.Fatalf("compaction updates %v, want in_progress, chunks, completed", kinds(cu))
	}
	first, last := cu[0].CompactionUpdate, cu[len(cu)-1].CompactionUpdate
	if first.Status != acp.CompactionStatusInProgress || last.Status != acp.CompactionStatusCompleted {
		t.Errorf("compaction status %q then %q, want in_progress then completed", first.Status, last.Status)
	}
	var chunks strings.Builder
	for _, u := range cu[1 : len(cu)-1] {
		if u.CompactionSummaryChunk == nil {
			t.Errorf("unexpected %s between the compaction's start and end", kind(u))
			continue
		}
		if u.CompactionSummaryChunk.CompactionID != first.CompactionID {
			t.Errorf("chunk for compaction %q, want %q", u.CompactionSummaryChunk.CompactionID, first.CompactionID)
		}
		if tx := u.CompactionSummaryChunk.Content.Text; tx != nil {
			chunks.WriteString(tx.Text)
		}
	}
	if last.CompactionID != first.CompactionID {
		t.Errorf("completed compaction %q, started %q", last.CompactionID, first.CompactionID)
	}
	if chunks.String() != summary {
		t.Errorf("summary chunks %q, want %q", chunks.String(), summary)
	}
	if len(last.Summary) != 1 || last.Summary[0].Text == nil || !strings.Contains(last.Summary[0].Text.Text, summary) {
		t.Errorf("completed compaction's summary %+v", last.Summary)
	}
}

// checkCompacted checks a request that follows a compaction: it opens with
// the summary (including the plan) and no longer holds the first prompt.
func checkCompacted(t *testing.T, req model.Request, summary string) {
	t.Helper()
	if len(req.Messages) == 0 || req.Messages[0].Role != model.RoleUser {
		t.Fatalf("request after compaction starts with %+v", req.Messages)
	}
	head := req.Messages[0].Text()
	for _, want := range []string{summary, "Current plan:", "[in_progress] Write the parser", "[pending] Test the parser"} {
		if !strings.Contains(head, want) {
			t.Errorf("summary message lacks %q:\n%s", want, head)
		}
	}
	for _, m := range req.Messages {
		if m.Role == model.RoleUser && m.Text() == "make a plan" {
			t.Error("the compacted prompt is still in the transcript")
		}
	}
	if p := transcriptProblems(req.Messages); len(p) > 0 {
		t.Errorf("transcript after compaction: %v", p)
	}
}

// TestCompaction: a response that fills most of the window makes the agent
// summarise the conversation before its next request. The summary keeps the
// latest plan, is logged so a loaded session continues from it, and is
// shown only to clients that advertise session.compaction.
func TestCompaction(t *testing.T) {
	const window = 1000
	summary := "SUMMARY: the user wants a parser."
	for _, advertise := range []bool{true, false} {
		t.Run(fmt.Sprintf("compaction-capability=%v", advertise), func(t *testing.T) {
			env := newEnv(t, "")
			env.write("f.txt", "data\n")
			m := &compactModel{
				summary: []string{"SUMMARY: the user ", "wants a parser."},
				usage: func(prompt string, step int) int64 {
					if prompt == "read the big file" && step == 0 {
						return 900 // past compact.Threshold of the window
					}
					return 100
				},
			}
			rec := record(m.backend())
			env.setModel(mainModel, rec)
			caps := sessionCaps(advertise, acp.ClientSessionCapabilities{Compaction: &acp.CompactionCapabilities{}})
			small := func(info *model.ModelInfo) { info.ContextWindow = window }
			c := env.startWith(caps, small, nil)
			sid := c.newSession()
			c.mustPrompt(sid, "make a plan", acp.StopReasonEndTurn)
			if n := len(rec.requests()); n != 2 {
				t.Fatalf("%d requests for the first turn, want 2 (no compaction below the threshold)", n)
			}
			c.mustPrompt(sid, "read the big file", acp.StopReasonEndTurn)
			reqs := rec.requests()
			if len(reqs) != 5 {
				t.Fatalf("%d requests, want 5 (2 + call, summary, answer)", len(reqs))
			}
			sum := reqs[3]
			if !isSummaryRequest(&sum) {
				t.Fatalf("request 4 is not a summarisation request: tools=%d last=%q", len(sum.Tools), lastUserText(&sum))
			}
			var sawPlanPrompt bool
			for _, m := range sum.Messages {
				if m.Text() == "make a plan" {
					sawPlanPrompt = true
				}
			}
			if !sawPlanPrompt {
				t.Error("the summarisation request lacks the earlier conversation")
			}
			// The summary request is the main request plus the instruction:
			// same system prompt, tools and messages, read from the cache.
			if sum.System != reqs[2].System || len(sum.Tools) != len(reqs[2].Tools) || !samePrefix(reqs[2].Messages, sum.Messages) {
				t.Error("the summarisation request does not share the main request's prefix")
			}
			next := reqs[4]
			checkCompacted(t, next, summary)
			// The current turn's prompt is kept verbatim, first, and its
			// latest exchange follows; the request ends with a user message.
			if first := next.Messages[0].Parts[0]; first.Text != "read the big file" || len(toolUseIDs(next)) != 1 {
				t.Errorf("the current turn was not kept after the summary: %+v", next.Messages)
			}
			if last := next.Messages[len(next.Messages)-1]; last.Role != model.RoleUser {
				t.Errorf("the request after compaction ends with %s", last.Role)
			}

			ups := c.allUpdates(sid)
			if advertise {
				checkCompactionUpdates(t, ups, summary)
			} else if cu := compactionUpdates(ups); len(cu) > 0 {
				t.Errorf("client without session.compaction got %v", kinds(cu))
			}
			if compacts := recordCount(t, env, sid, kindCompact); compacts != 1 {
				t.Errorf("%d compact records, want 1", compacts)
			}

			// A new agent loading the session continues from the summary;
			// its client, which does not advertise compaction, is not
			// replayed compaction updates.
			c.close()
			rec2 := record(okBackend)
			env.setModel(mainModel, rec2)
			c2 := env.start(nil)
			c2.load(sid)
			if cu := compactionUpdates(c2.allUpdates(sid)); len(cu) > 0 {
				t.Errorf("session/load replayed %v to a client without session.compaction", kinds(cu))
			}
			c2.mustPrompt(sid, "after load", acp.StopReasonEndTurn)
			checkCompacted(t, rec2.last(t), summary)
		})
	}
}

// TestCompactCommand: /compact summarises on demand, whatever the usage,
// with the same updates and log record.
func TestCompactCommand(t *testing.T) {
	env := newEnv(t, "")
	summary := "SUMMARY: planning a parser."
	m := &compactModel{summary: []string{summary}, usage: func(string, int) int64 { return 10 }}
	rec := record(m.backend())
	env.setModel(mainModel, rec)
	caps := &acp.ClientCapabilities{Session: &acp.ClientSessionCapabilities{Compaction: &acp.CompactionCapabilities{}}}
	c := env.start(caps)
	sid := c.newSession()

	mark := len(c.in.messages())
	c.mustPrompt(sid, "/compact", acp.StopReasonEndTurn)
	if msg := chunkText(c.updatesBetween(sid, mark-1, -1)); !strings.Contains(msg, "Nothing to compact") {
		t.Errorf("/compact on an empty session says %q", msg)
	}
	if n := len(rec.requests()); n != 0 {
		t.Errorf("/compact on an empty session made %d model requests", n)
	}

	c.mustPrompt(sid, "make a plan", acp.StopReasonEndTurn)
	mark = len(c.in.messages())
	c.mustPrompt(sid, "/compact", acp.StopReasonEndTurn)
	ups := c.updatesBetween(sid, mark-1, -1)
	checkCompactionUpdates(t, ups, summary)
	if msg := chunkText(ups); !strings.Contains(msg, "Compacted") {
		t.Errorf("/compact says %q", msg)
	}
	reqs := rec.requests()
	if len(reqs) != 3 || !isSummaryRequest(&reqs[2]) {
		t.Fatalf("requests after /compact: %d, last is a summary: %v", len(reqs), len(reqs) > 0 && isSummaryRequest(&reqs[len(reqs)-1]))
	}
	for _, m := range reqs[2].Messages {
		if strings.HasPrefix(m.Text(), "/compact") {
			t.Error("the /compact command reached the model")
		}
	}
	if compacts := recordCount(t, env, sid, kindCompact); compacts != 1 {
		t.Errorf("%d compact records, want 1", compacts)
	}
	c.mustPrompt(sid, "go on", acp.StopReasonEndTurn)
	checkCompacted(t, rec.last(t), summary)
	// The user's own request survives verbatim, not only as the summary
	// (which here does not repeat it).
	if last := rec.last(t); !strings.Contains(messagesText(last.Messages), "make a plan") {
		t.Errorf("the request after /compact lost the user's message %q:\n%s", "make a plan", messagesText(last.Messages))
	}
}

// messagesText is the text of msgs, one message a line.
func messagesText(msgs []model.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Text())
	}
	return b.String()
}

// TestCompactionSummaryRequest: the summarisation request offers the main
// request's tools, so its tool blocks are valid (Anthropic and Bedrock
// reject tool blocks in a request without tools), and carries the calls
// and their results for the summary.
func TestCompactionSummaryRequest(t *testing.T) {
	env := newEnv(t, "")
	env.write("f.txt", "the file's content\n")
	m := &compactModel{summary: []string{"SUMMARY"}, usage: func(string, int) int64 { return 10 }}
	rec := record(m.backend())
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	c.mustPrompt(sid, "read it", acp.StopReasonEndTurn)
	c.mustPrompt(sid, "/compact", acp.StopReasonEndTurn)
	reqs := rec.requests()
	sum := reqs[len(reqs)-1]
	if !isSummaryRequest(&sum) {
		t.Fatalf("last request is not a summary request")
	}
	var blocks int
	var text strings.Builder
	for _, m := range sum.Messages {
		for _, p := range m.Parts {
			switch p.Type {
			case model.PartToolUse, model.PartToolResult:
				blocks++
				text.Write(p.Input)
				text.WriteString(resultText(p))
			case model.PartText:
				text.WriteString(p.Text)
			}
		}
	}
	if blocks > 0 && len(sum.Tools) == 0 {
		t.Error("the summarisation request carries tool blocks but offers no tools")
	}
	for _, want := range []string{"f.txt", "the file's content"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the summarisation request lacks %q:\n%s", want, text.String())
		}
	}
	if sum.System != reqs[0].System || !samePrefix(reqs[len(reqs)-2].Messages, sum.Messages) {
		t.Error("the summarisation request does not share the main request's prefix")
	}
}

// ---------------------------------------------------------------------------
// Usage and cost.

// TestUsageUpdate: every response with usage is followed by usage_update:
// tokens in context, the window, and the session's cost so far in USD.
func TestUsageUpdate(t *testing.T) {
	env := newEnv(t, "")
	usage := &model.Usage{InputTokens: 1000, OutputTokens: 500, CacheReadTokens: 800}
	env.setModel(mainModel, backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		_ = yield(model.Event{Type: model.EventText, Text: "ok"}, nil) &&
			yield(model.Event{Type: model.EventUsage, Usage: usage}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
	}))
	priced := func(info *model.ModelInfo) {
		info.ContextWindow = 200000
		info.InputPrice, info.OutputPrice = 3, 15
	}
	c := env.startWith(nil, priced, nil)
	sid := c.newSession()
	// 200 plain input tokens at $3/M, 800 cache reads at a tenth of that,
	// 500 output tokens at $15/M.
	perTurn := (200*3 + 800*0.3 + 500*15) / 1e6
	for turn := 1; turn <= 2; turn++ {
		mark := len(c.in.messages())
		c.mustPrompt(sid, "hi", acp.StopReasonEndTurn)
		var got []*acp.UsageUpdate
		for _, u := range c.updatesBetween(sid, mark-1, -1) {
			if u.UsageUpdate != nil {
				got = append(got, u.UsageUpdate)
			}
		}
		if len(got) != 1 {
			t.Fatalf("turn %d: %d usage_update, want 1", turn, len(got))
		}
		u := got[0]
		if u.Used != 1500 || u.Size != 200000 {
			t.Errorf("turn %d: used %d of %d, want 1500 of 200000", turn, u.Used, u.Size)
		}
		want := perTurn * float64(turn)
		if u.Cost == nil || u.Cost.Currency != "USD" || math.Abs(u.Cost.Amount-want) > 1e-12 {
			t.Errorf("turn %d: cost %+v, want %g USD (cumulative)", turn, u.Cost, want)
		}
	}

	// Without prices there is no cost.
	env2 := newEnv(t, "")
	env2.setModel(mainModel, backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		_ = yield(model.Event{Type: model.EventUsage, Usage: &model.Usage{InputTokens: 10}}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
	}))
	c2 := env2.start(nil)
	sid2 := c2.newSession()
	c2.mustPrompt(sid2, "hi", acp.StopReasonEndTurn)
	for _, u := range c2.allUpdates(sid2) {
		if u.UsageUpdate != nil && u.UsageUpdate.Cost != nil {
			t.Errorf("usage_update without known prices has cost %+v", u.UsageUpdate.Cost)
		}
	}
}

// ---------------------------------------------------------------------------
// Project instructions.

// TestProjectInstructions: instruction files from the session's cwd up to
// the project root reach the system prompt, nearest first, capped.
func TestProjectInstructions(t *testing.T) {
	setup := func(t *testing.T, agents string) (*testEnv, *recorder, *client, acp.SessionID) {
		env := newEnv(t, "")
		if err := os.MkdirAll(filepath.Join(env.cwd, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		env.write("AGENTS.md", agents)
		env.write("sub/CLAUDE.md", "SUB-RULE: keep functions short.\n")
		rec := record(okBackend)
		env.setModel(mainModel, rec)
		c := env.start(nil)
		sid := c.sessionIn(env.path("sub"))
		c.mustPrompt(sid, "hi", acp.StopReasonEndTurn)
		return env, rec, c, sid
	}
	t.Run("nearest first", func(t *testing.T) {
		env, rec, _, _ := setup(t, "ROOT-RULE: use tabs.\n")
		sys := rec.last(t).System
		sub, root := strings.Index(sys, "SUB-RULE"), strings.Index(sys, "ROOT-RULE")
		if sub < 0 || root < 0 {
			t.Fatalf("system prompt lacks an instruction file:\n%s", sys)
		}
		if sub > root {
			t.Error("the root's AGENTS.md precedes the nearer CLAUDE.md")
		}
		if !strings.Contains(sys, env.path("sub/CLAUDE.md")) || !strings.Contains(sys, env.path("AGENTS.md")) {
			t.Errorf("system prompt does not name the files:\n%s", sys)
		}
	})
	t.Run("capped", func(t *testing.T) {
		huge := strings.Repeat("ROOT-RULE: a very long instruction line.\n", 4*sysprompt.MaxInstructionBytes/40)
		_, rec, _, _ := setup(t, huge)
		sys := rec.last(t).System
		if !strings.Contains(sys, "SUB-RULE") || !strings.Contains(sys, "ROOT-RULE") {
			t.Fatal("an instruction file is missing")
		}
		if !strings.Contains(sys, "instructions cut") {
			t.Error("the cut is not said")
		}
		if len(sys) > sysprompt.MaxInstructionBytes+4096 {
			t.Errorf("system prompt is %d bytes with a %d-byte AGENTS.md; the cap is %d", len(sys), len(huge), sysprompt.MaxInstructionBytes)
		}
	})
}

// ---------------------------------------------------------------------------
// Restarts after a failed stream.

// failingOnce is a backend whose first request streams "partial" and then
// fails with fail; later requests answer "complete".
func failingOnce(fail *model.Error) (backendFunc, *atomic.Int32) {
	var n atomic.Int32
	return func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		if n.Add(1) == 1 {
			_ = yield(model.Event{Type: model.EventText, Text: "partial"}, nil) && yield(model.Event{}, fail)
			return
		}
		_ = yield(model.Event{Type: model.EventText, Text: "complete"}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
	}, &n
}

// TestRestartAfterRetryableError: a retryable failure after part of the
// answer was shown asks again; the new answer is a new message, and the
// partial one stays in the log marked interrupted.
func TestRestartAfterRetryableError(t *testing.T) {
	env := newEnv(t, "")
	b, _ := failingOnce(&model.Error{Kind: model.ErrOverloaded, Status: 529, Message: "overloaded"})
	rec := record(b)
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	c.mustPrompt(sid, "go", acp.StopReasonEndTurn)
	var ids []acp.MessageID
	var texts []string
	for _, u := range c.allUpdates(sid) {
		if ch := u.AgentMessageChunk; ch != nil && ch.MessageID != nil {
			ids = append(ids, *ch.MessageID)
			texts = append(texts, ch.Content.Text.Text)
		}
	}
	if len(ids) != 2 || ids[0] == ids[1] || !slices.Equal(texts, []string{"partial", "complete"}) {
		t.Errorf("agent chunks %q with ids %v, want partial and complete with two ids", texts, ids)
	}
	var assistants []model.Message
	for _, m := range loggedMessages(t, env, sid) {
		if m.Role == model.RoleAssistant {
			assistants = append(assistants, m)
		}
	}
	if len(assistants) != 2 || !assistants[0].Interrupted || assistants[0].Text() != "partial" || assistants[1].Interrupted || assistants[1].Text() != "complete" {
		t.Errorf("assistant messages in the log: %+v", assistants)
	}
	reqs := rec.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1]; last.Role != model.RoleAssistant || !last.Interrupted || last.Text() != "partial" {
		t.Errorf("the retry does not carry the interrupted answer: %+v", reqs[1].Messages)
	}
}

// TestNonRetryableErrorAfterDeltas: a failure the provider will repeat
// ends the turn with an error, without asking again.
func TestNonRetryableErrorAfterDeltas(t *testing.T) {
	env := newEnv(t, "")
	b, n := failingOnce(&model.Error{Kind: model.ErrInvalidRequest, Status: 400, Message: "bad request"})
	env.setModel(mainModel, b)
	c := env.start(nil)
	sid := c.newSession()
	_, err := c.prompt(sid, "go")
	if err == nil || rpcCode(err) != int(acp.ErrorCodeInternalError) || !strings.Contains(err.Error(), "bad request") {
		t.Fatalf("prompt: %v, want an internal error naming the failure", err)
	}
	if got := n.Load(); got != 1 {
		t.Errorf("%d model requests, want 1", got)
	}
	if got := chunkText(c.allUpdates(sid)); got != "partial" {
		t.Errorf("streamed %q", got)
	}
}

// ---------------------------------------------------------------------------
// Provider fields.

// TestProviderFieldsRoundTrip: signatures and their provider tags come
// back in the next request's assistant message in stream order, also after
// the session is loaded by a new agent.
func TestProviderFieldsRoundTrip(t *testing.T) {
	env := newEnv(t, "")
	b := backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		if turnStep(req) > 0 {
			_ = yield(model.Event{Type: model.EventText, Text: "done."}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
			return
		}
		_ = yield(model.Event{Type: model.EventReasoning, Text: "Think."}, nil) &&
			yield(model.Event{Type: model.EventReasoningDone, Signature: "sig-a", Provider: "anthropic"}, nil) &&
			yield(model.Event{Type: model.EventText, Text: "Looking."}, nil) &&
			yield(model.Event{Type: model.EventToolStart, ToolCallID: "g1", ToolName: "list_dir"}, nil) &&
			yield(model.Event{Type: model.EventToolDone, ToolCallID: "g1", ToolName: "list_dir", Input: json.RawMessage(`{"path":"."}`), Signature: "sig-g", Provider: "gemini"}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
	})
	rec := record(b)
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	c.mustPrompt(sid, "look", acp.StopReasonEndTurn)
	check := func(req model.Request) {
		t.Helper()
		var asst *model.Message
		for i := range req.Messages {
			if req.Messages[i].Role == model.RoleAssistant && len(toolUseIDs(model.Request{Messages: req.Messages[i : i+1]})) > 0 {
				asst = &req.Messages[i]
			}
		}
		if asst == nil {
			t.Fatalf("no assistant message with the tool use: %+v", req.Messages)
		}
		ps := asst.Parts
		if len(ps) != 3 {
			t.Fatalf("assistant parts %+v, want reasoning, text, tool_use", ps)
		}
		if ps[0].Type != model.PartReasoning || ps[0].Text != "Think." || ps[0].Signature != "sig-a" || ps[0].Provider != "anthropic" {
			t.Errorf("reasoning part %+v", ps[0])
		}
		if ps[1].Type != model.PartText || ps[1].Text != "Looking." {
			t.Errorf("text part %+v", ps[1])
		}
		if ps[2].Type != model.PartToolUse || ps[2].ToolCallID != "g1" || ps[2].Signature != "sig-g" || ps[2].Provider != "gemini" {
			t.Errorf("tool_use part %+v", ps[2])
		}
	}
	check(rec.last(t))
	c.close()
	rec2 := record(okBackend)
	env.setModel(mainModel, rec2)
	c2 := env.start(nil)
	c2.load(sid)
	c2.mustPrompt(sid, "again", acp.StopReasonEndTurn)
	check(rec2.last(t))
}

// ---------------------------------------------------------------------------
// Images.

// TestImageToTextOnlyModel: an image sent to a model that cannot read
// images becomes a note in the prompt, and the user is told with a notice
// when the client shows notices, else with a failed tool call card.
// Notices are live: session/load does not replay them.
func TestImageToTextOnlyModel(t *testing.T) {
	for _, notices := range []bool{true, false} {
		t.Run(fmt.Sprintf("notices=%v", notices), func(t *testing.T) {
			env := newEnv(t, "")
			rec := record(okBackend)
			env.setModel(mainModel, rec)
			caps := sessionCaps(notices, acp.ClientSessionCapabilities{Notices: &acp.NoticeCapabilities{}})
			noImages := func(info *model.ModelInfo) { info.Images = false }
			c := env.startWith(caps, noImages, nil)
			sid := c.newSession()
			var resp acp.PromptResponse
			err := c.call(acp.AgentMethodSessionPrompt, acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{
				{Text: &acp.TextContent{Text: "what is this?"}},
				{Image: &acp.ImageContent{MimeType: "image/png", Data: "iVBORw0KGgo="}},
			}}, &resp)
			if err != nil || resp.StopReason != acp.StopReasonEndTurn {
				t.Fatalf("prompt: %v %q", err, resp.StopReason)
			}
			msg := rec.last(t).Messages[0]
			for _, p := range msg.Parts {
				if p.Type == model.PartImage {
					t.Error("the image reached a model that cannot read images")
				}
			}
			if !strings.Contains(msg.Text(), "cannot read images") || !strings.Contains(msg.Text(), "what is this?") {
				t.Errorf("prompt for the model: %q", msg.Text())
			}
			var got []*acp.Notice
			for _, u := range c.allUpdates(sid) {
				if u.Notice != nil {
					got = append(got, u.Notice)
				}
			}
			switch {
			case notices && (len(got) != 1 || got[0].Severity != acp.NoticeSeverityWarning || !strings.Contains(got[0].Title, "image")):
				t.Errorf("notices %+v, want one warning about the image", got)
			case !notices && len(got) != 0:
				t.Errorf("client without session.notices got notices %+v", got)
			}
			// Without notices the user is told by a short failed tool call
			// card saying what and why; with notices there is no card.
			var cards []*acp.ToolCall
			for _, u := range c.allUpdates(sid) {
				if u.ToolCall != nil && u.ToolCall.Status == acp.ToolCallStatusFailed {
					cards = append(cards, u.ToolCall)
				}
			}
			switch {
			case notices && len(cards) != 0:
				t.Errorf("a client with notices got cards %+v", cards)
			case !notices && (len(cards) != 1 || !strings.Contains(cards[0].Title, "image") || len(cards[0].Content) != 1 ||
				cards[0].Content[0].Content == nil || !strings.Contains(cards[0].Content[0].Content.Content.Text.Text, "cannot read images")):
				t.Errorf("cards %+v, want one failed card about the image", cards)
			}

			c.close()
			c2 := env.start(caps)
			c2.load(sid)
			for _, u := range c2.allUpdates(sid) {
				if u.Notice != nil {
					t.Errorf("session/load replayed a notice: %+v", u.Notice)
				}
			}
		})
	}
}
