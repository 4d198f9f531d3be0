package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

	"acpd/acp"
	"acpd/model"
)

// tool is one tool offered to the model.
type tool struct {
	def  model.ToolDef
	kind acp.ToolKind
	// title renders a readable title from the call's input.
	title func(in json.RawMessage) string
	// run executes the call and returns the result for the model; it sends
	// its own progress updates through tc.
	run func(ctx context.Context, s *sess, tc *toolCall) toolResult
}

// toolCall is one call being run.
type toolCall struct {
	id    string
	name  string
	input json.RawMessage
}

// toolResult is what a tool returns: text for the model and content for the
// client.
type toolResult struct {
	text    string
	isError bool
	content []acp.ToolCallContent
	raw     any
}

func errResult(format string, args ...any) toolResult {
	return toolResult{text: fmt.Sprintf(format, args...), isError: true}
}

// maxToolResultBytes bounds a tool result given back to the model.
const maxToolResultBytes = 64 << 10

// boundResult truncates long tool output, keeping head and tail, with a note
// saying how much was cut.
func boundResult(s string) string {
	if len(s) <= maxToolResultBytes {
		return s
	}
	head := maxToolResultBytes / 2
	tail := maxToolResultBytes / 2
	for head > 0 && !isRuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !isRuneStart(s[start]) {
		start++
	}
	cut := start - head
	return s[:head] + fmt.Sprintf("\n\n[… %d bytes cut from the middle of this output …]\n\n", cut) + s[start:]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// tools returns the session's tools by name.
func (s *sess) tools() map[string]*tool {
	mcp := s.mcpToolMap()
	if len(mcp) == 0 {
		return builtinTools
	}
	all := make(map[string]*tool, len(builtinTools)+len(mcp))
	for n, t := range mcp {
		all[n] = t
	}
	for n, t := range builtinTools {
		all[n] = t
	}
	return all
}

// builtinTools are acpd's own tools.
var builtinTools = map[string]*tool{}

func init() {
	for _, t := range []*tool{readFileTool, writeFileTool, editFileTool, listDirTool, globTool, grepTool, runCommandTool, planTool} {
		builtinTools[t.def.Name] = t
	}
}

// toolDefs lists the tool definitions for the model, sorted by name.
func (s *sess) toolDefs() []model.ToolDef {
	ts := s.tools()
	names := make([]string, 0, len(ts))
	for n := range ts {
		names = append(names, n)
	}
	sort.Strings(names)
	defs := make([]model.ToolDef, 0, len(names))
	for _, n := range names {
		defs = append(defs, ts[n].def)
	}
	return defs
}

// toolCallStarted is the first tool_call update of a call.
func (s *sess) toolCallStarted(pc *pendingCall) *acp.ToolCall {
	tc := &acp.ToolCall{ToolCallID: acp.ToolCallID(pc.id), Title: pc.name, Kind: acp.ToolKindOther, Status: acp.ToolCallStatusPending}
	if t := s.tools()[pc.name]; t != nil {
		tc.Kind = t.kind
		if t.title != nil && len(pc.input) > 0 {
			tc.Title = t.title(pc.input)
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
	// Consecutive read-only calls run in parallel; every other call runs
	// alone, in the order the model gave.
	for i := 0; i < len(ts.calls); {
		j := i + 1
		if readOnlyTools[ts.calls[i].name] {
			for j < len(ts.calls) && readOnlyTools[ts.calls[j].name] {
				j++
			}
		}
		var wg sync.WaitGroup
		// slots bounds the calls running at once; the loop waits for a
		// free one (a running call always finishes, cancelled or not).
		slots := make(chan struct{}, maxParallelCalls)
		for k := i; k < j; k++ {
			pc := ts.calls[k]
			if ctx.Err() == nil {
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				results[k] = toolResultPart(pc.id, errResult("cancelled by the user before it ran"))
				s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(pc.id), Status: statusp(acp.ToolCallStatusFailed)}})
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				results[k] = toolResultPart(pc.id, s.runCallSafe(ctx, pc))
			}()
		}
		wg.Wait()
		i = j
	}
	s.appendMessage(model.Message{Role: model.RoleUser, Parts: results})
	if ctx.Err() != nil {
		return acp.StopReasonCancelled, true
	}
	return "", false
}

// maxParallelCalls bounds how many consecutive read-only calls of one
// response run at once; the rest wait for a free slot.
const maxParallelCalls = 8

// runCallSafe is runCall on a goroutine of its own: a panicking tool
// fails its call (and is logged) instead of taking the process down, since
// the connection's handler recovery does not cover this goroutine.
func (s *sess) runCallSafe(ctx context.Context, pc *pendingCall) (res toolResult) {
	defer func() {
		if p := recover(); p != nil {
			s.a.log.Error("tool panicked", "session", s.id, "tool", pc.name, "panic", p, "stack", string(debug.Stack()))
			res = errResult("internal error running %s", pc.name)
			s.notify(s.a.baseContext(), acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(pc.id), Status: statusp(acp.ToolCallStatusFailed)}})
		}
	}()
	return s.runCall(ctx, pc)
}

// runCall runs one call with its tool_call_update lifecycle.
func (s *sess) runCall(ctx context.Context, pc *pendingCall) toolResult {
	out := s.a.baseContext()
	id := acp.ToolCallID(pc.id)
	t := s.tools()[pc.name]
	var res toolResult
	switch {
	case t == nil:
		names := make([]string, 0)
		for n := range s.tools() {
			names = append(names, n)
		}
		slices.Sort(names)
		res = errResult("unknown tool %q; available tools: %s", pc.name, strings.Join(names, ", "))
	case !json.Valid(pc.input):
		res = errResult("the arguments of %s are not valid JSON: %s", pc.name, truncate(string(pc.input), 200))
	default:
		if pc.name == planTool.def.Name {
			// Other tools report in_progress once permission is granted
			// (authorize): a call awaiting approval stays pending.
			s.markRunning(asToolCall(pc))
		}
		res = t.run(ctx, s, asToolCall(pc))
	}
	res.text = boundResult(res.text)
	upd := &acp.ToolCallUpdate{ToolCallID: id, Status: statusp(acp.ToolCallStatusCompleted)}
	if res.isError {
		upd.Status = statusp(acp.ToolCallStatusFailed)
	}
	if len(res.content) > 0 {
		upd.Content = res.content
	} else if res.text != "" {
		upd.Content = []acp.ToolCallContent{textToolContent(res.text)}
	}
	if res.raw != nil {
		upd.RawOutput = res.raw
	}
	s.notify(out, acp.SessionUpdate{ToolCallUpdate: upd})
	return res
}

func textToolContent(text string) acp.ToolCallContent {
	return acp.ToolCallContent{Content: &acp.Content{Content: acp.ContentBlock{Text: &acp.TextContent{Text: text}}}}
}

func toolResultPart(id string, r toolResult) model.Part {
	text := r.text
	if text == "" && !r.isError {
		text = "(no output)"
	}
	return model.Part{Type: model.PartToolResult, ToolCallID: id, IsError: r.isError, Content: []model.Part{{Type: model.PartText, Text: text}}}
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
		parts = append(parts, toolResultPart(pc.id, errResult("%s", reason)))
		s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(pc.id), Status: statusp(acp.ToolCallStatusFailed)}})
	}
	s.appendMessage(model.Message{Role: model.RoleUser, Parts: parts})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// planTool is update_plan: the model's plan, shown to the client as an ACP
// plan update and persisted with the session.
var planTool = &tool{
	def: model.ToolDef{
		Name:        "update_plan",
		Description: "Replace the current plan for this task. Use it for multi-step work: list every step with its status and priority, and update it as steps complete.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"entries":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string","description":"What the step does"},"status":{"type":"string","enum":["pending","in_progress","completed"]},"priority":{"type":"string","enum":["high","medium","low"]}},"required":["content","status","priority"],"additionalProperties":false}}},"required":["entries"],"additionalProperties":false}`),
	},
	kind:  acp.ToolKindThink,
	title: func(json.RawMessage) string { return "Update plan" },
	run: func(ctx context.Context, s *sess, tc *toolCall) toolResult {
		var in struct {
			Entries []struct {
				Content  string `json:"content"`
				Status   string `json:"status"`
				Priority string `json:"priority"`
			} `json:"entries"`
		}
		if err := acp.Unmarshal(tc.input, &in); err != nil {
			return errResult("invalid update_plan arguments: %v", err)
		}
		plan := &acp.Plan{Entries: []acp.PlanEntry{}}
		for i, e := range in.Entries {
			st, pr := acp.PlanEntryStatus(e.Status), acp.PlanEntryPriority(e.Priority)
			switch st {
			case acp.PlanEntryStatusPending, acp.PlanEntryStatusInProgress, acp.PlanEntryStatusCompleted:
			default:
				return errResult("entry %d: status must be pending, in_progress or completed, got %q", i+1, e.Status)
			}
			switch pr {
			case acp.PlanEntryPriorityHigh, acp.PlanEntryPriorityMedium, acp.PlanEntryPriorityLow:
			default:
				return errResult("entry %d: priority must be high, medium or low, got %q", i+1, e.Priority)
			}
			if strings.TrimSpace(e.Content) == "" {
				return errResult("entry %d: content is empty", i+1)
			}
			plan.Entries = append(plan.Entries, acp.PlanEntry{Content: e.Content, Status: st, Priority: pr})
		}
		text := planText(plan)
		s.mu.Lock()
		s.plan = text
		s.mu.Unlock()
		s.notify(s.a.baseContext(), acp.SessionUpdate{Plan: plan})
		return toolResult{text: "Plan updated:\n" + text}
	},
}

// planText renders a plan for the model.
func planText(p *acp.Plan) string {
	var b strings.Builder
	for i, e := range p.Entries {
		fmt.Fprintf(&b, "%d. [%s] %s\n", i+1, e.Status, e.Content)
	}
	return b.String()
}

func asToolCall(pc *pendingCall) *toolCall {
	return &toolCall{id: pc.id, name: pc.name, input: pc.input}
}

// markRunning reports that a call's approval is settled and it runs.
func (s *sess) markRunning(t *toolCall) {
	s.notify(s.a.baseContext(), acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(t.id), Status: statusp(acp.ToolCallStatusInProgress)}})
}
