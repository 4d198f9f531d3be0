package agent

import (
	"context"
	"encoding/json"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"acpd/acp"
	"acpd/internal/loopguard"
	"acpd/model"
	"acpd/permissions"
	"acpd/tools"
)

// tools returns the session's tools by name.
func (s *sess) tools() map[string]*tools.Tool {
	mcp := s.mcp.Tools()
	if len(mcp) == 0 {
		return s.a.builtin
	}
	all := make(map[string]*tools.Tool, len(s.a.builtin)+len(mcp))
	for n, t := range mcp {
		all[n] = t
	}
	for n, t := range s.a.builtin {
		all[n] = t
	}
	return all
}

// toolDefs lists the tool definitions offered to the model, sorted by
// name: apply_patch only to the model families trained on it, and in plan
// mode only the tools the mode allows (read-only tools and update_plan).
func (s *sess) toolDefs() []model.ToolDef {
	ts := s.tools()
	st := s.settings()
	_, modelID, _ := model.ParseRef(st.Model)
	names := make([]string, 0, len(ts))
	for n, t := range ts {
		if n == "apply_patch" && !tools.PatchModel(modelID) {
			continue
		}
		if st.Mode == string(permissions.ModePlan) && !t.ReadOnly && n != "update_plan" {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	defs := make([]model.ToolDef, 0, len(names))
	for _, n := range names {
		defs = append(defs, ts[n].Def)
	}
	return defs
}

// toolCallStarted is the first tool_call update of a call.
func (s *sess) toolCallStarted(pc *pendingCall) *acp.ToolCall {
	tc := &acp.ToolCall{ToolCallID: acp.ToolCallID(pc.id), Title: pc.name, Kind: acp.ToolKindOther, Status: acp.ToolCallStatusPending}
	if t := s.tools()[pc.name]; t != nil {
		tc.Kind = t.Kind
		if t.Title != nil && len(pc.input) > 0 {
			tc.Title = t.Title(pc.input)
		}
	}
	if len(pc.input) > 0 && json.Valid(pc.input) {
		tc.RawInput = pc.input
	}
	return tc
}

// runCalls runs the response's tool calls and appends their results to the
// transcript. done reports that the turn ends here (with stop).
func (s *sess) runCalls(ctx context.Context, ts *turnState) (stop acp.StopReason, done bool) {
	out := s.a.baseContext()
	results := make([]model.Part, len(ts.calls))
	all := s.tools()
	readOnly := func(pc *pendingCall) bool { t := all[pc.name]; return t != nil && t.ReadOnly }
	// Once the turn is cancelled, running calls get abandonGrace to stop;
	// a call stuck where cancellation cannot reach (a blocking system call)
	// is then abandoned: the turn ends, the call's goroutine finishes on its
	// own (its commands are killed by their terminals' cancellation).
	var grace <-chan time.Time
	wait := func(ch <-chan tools.Result) (tools.Result, bool) {
		select {
		case r := <-ch:
			return r, true
		case <-ctx.Done():
		}
		if grace == nil {
			grace = time.After(abandonGrace)
		}
		select {
		case r := <-ch:
			return r, true
		case <-grace:
			return tools.Result{}, false
		}
	}
	// Consecutive read-only calls run in parallel; every other call runs
	// alone, in the order the model gave.
	for i := 0; i < len(ts.calls); {
		j := i + 1
		if readOnly(ts.calls[i]) {
			for j < len(ts.calls) && readOnly(ts.calls[j]) {
				j++
			}
		}
		var wg sync.WaitGroup
		// slots bounds the calls running at once; the loop waits for a
		// free one (a running call always finishes, cancelled or not).
		slots := make(chan struct{}, maxParallelCalls)
		running := make([]chan tools.Result, j-i)
		for k := i; k < j; k++ {
			pc := ts.calls[k]
			if ts.refused[pc.id] {
				results[k] = tools.Errorf("%s", loopguard.Refusal).Part(pc.id)
				s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(pc.id), Status: statusp(acp.ToolCallStatusFailed)}})
				continue
			}
			if ctx.Err() == nil {
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				results[k] = tools.Errorf("cancelled by the user before it ran").Part(pc.id)
				s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(pc.id), Status: statusp(acp.ToolCallStatusFailed)}})
				continue
			}
			ch := make(chan tools.Result, 1)
			running[k-i] = ch
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				ch <- s.runCallSafe(ctx, pc)
			}()
		}
		abandoned := false
		for k := i; k < j; k++ {
			if running[k-i] == nil {
				continue
			}
			pc := ts.calls[k]
			r, ok := wait(running[k-i])
			if !ok {
				abandoned = true
				s.a.log.Warn("abandoning a tool call that did not stop after cancel", "session", s.id, "tool", pc.name)
				r = tools.Errorf("cancelled by the user; the call did not stop within %v and was abandoned", abandonGrace)
				s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(pc.id), Status: statusp(acp.ToolCallStatusFailed)}})
			}
			results[k] = r.Part(pc.id)
		}
		if abandoned {
			// The session owns the stuck calls from here: it waits for
			// them when it closes.
			s.abandoned.Go(wg.Wait)
		} else {
			wg.Wait()
		}
		i = j
	}
	if ts.info.ID != "" && !ts.info.Images {
		dropImages(results)
	}
	if r := s.changeReminder(false); r != "" && len(results) > 0 {
		// Attached to the newest tool result: the system prompt stays the
		// same, so the provider's prompt cache keeps hitting.
		last := &results[len(results)-1]
		last.Content = append(last.Content, model.Part{Type: model.PartText, Text: "\n\n" + r})
	}
	s.appendMessage(model.Message{Role: model.RoleUser, Parts: results})
	if ctx.Err() != nil {
		return acp.StopReasonCancelled, true
	}
	return "", false
}

// abandonGrace is how long a cancelled turn waits for its running tool
// calls before it ends without them.
const abandonGrace = time.Second

// maxParallelCalls bounds how many consecutive read-only calls of one
// response run at once; the rest wait for a free slot.
const maxParallelCalls = 8

// runCallSafe is runCall on a goroutine of its own: a panicking tool
// fails its call (and is logged) instead of taking the process down, since
// the connection's handler recovery does not cover this goroutine.
func (s *sess) runCallSafe(ctx context.Context, pc *pendingCall) (res tools.Result) {
	defer func() {
		if p := recover(); p != nil {
			s.a.log.Error("tool panicked", "session", s.id, "tool", pc.name, "panic", p, "stack", string(debug.Stack()))
			res = tools.Errorf("internal error running %s", pc.name)
			s.notify(s.a.baseContext(), acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(pc.id), Status: statusp(acp.ToolCallStatusFailed)}})
		}
	}()
	return s.runCall(ctx, pc)
}

// runCall runs one call with its tool_call_update lifecycle.
func (s *sess) runCall(ctx context.Context, pc *pendingCall) tools.Result {
	out := s.a.baseContext()
	id := acp.ToolCallID(pc.id)
	t := s.tools()[pc.name]
	var res tools.Result
	switch {
	case t == nil:
		names := make([]string, 0)
		for n := range s.tools() {
			names = append(names, n)
		}
		slices.Sort(names)
		res = tools.Errorf("unknown tool %q; available tools: %s", pc.name, strings.Join(names, ", "))
	case !json.Valid(pc.input):
		res = tools.Errorf("the arguments of %s are not valid JSON: %s", pc.name, tools.Truncate(string(pc.input), 200))
	default:
		res = t.Run(ctx, toolEnv{s}, &tools.Call{ID: pc.id, Name: pc.name, Input: pc.input})
	}
	if !res.Bounded {
		res.Text = tools.Bound(res.Text)
	}
	upd := &acp.ToolCallUpdate{ToolCallID: id, Status: statusp(acp.ToolCallStatusCompleted)}
	if res.IsError {
		upd.Status = statusp(acp.ToolCallStatusFailed)
	}
	if len(res.Content) > 0 {
		upd.Content = res.Content
	} else if res.Text != "" {
		upd.Content = []acp.ToolCallContent{tools.TextContent(res.Text)}
	}
	if res.Raw != nil {
		upd.RawOutput = res.Raw
	}
	upd.Meta = res.Meta
	s.notify(out, acp.SessionUpdate{ToolCallUpdate: upd})
	if res.After != nil {
		res.After()
		res.After = nil
	}
	return res
}

// dropImages replaces the images of tool results by a note, for a model
// that cannot read images.
func dropImages(parts []model.Part) {
	for i := range parts {
		for j, c := range parts[i].Content {
			if c.Type == model.PartImage {
				parts[i].Content[j] = model.Part{Type: model.PartText, Text: "[image not shown: this model cannot read images]"}
			}
		}
	}
}

// closeCalls gives every completed-but-unrun call of a failed response an
// error result, so the transcript stays valid for the next request.
func (s *sess) closeCalls(ts *turnState, reason string) {
	if ts == nil || len(ts.calls) == 0 {
		return
	}
	out := s.a.baseContext()
	parts := make([]model.Part, 0, len(ts.calls))
	for _, pc := range ts.calls {
		parts = append(parts, tools.Errorf("%s", reason).Part(pc.id))
		s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(pc.id), Status: statusp(acp.ToolCallStatusFailed)}})
	}
	s.appendMessage(model.Message{Role: model.RoleUser, Parts: parts})
}
