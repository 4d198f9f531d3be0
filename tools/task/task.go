// Package task is the "task" tool: a sub-agent with a context of its own
// (at most MaxRequests model requests) that returns a report, saving the
// calling agent's context. By default it is a read-only explorer (glob,
// grep, list_dir and read_file); [ToolWith] also offers custom sub-agent
// types, each with its own prompt, tools and model (the Host's SubAgent).
//
// The tool runs only in a session that offers a sub-agent: the tools.Env
// its Run receives must implement Host, else the call fails with "task is
// not available here". For a client that renders sub-agents (Sub.Child),
// the sub-agent is a session of its own: its text and tool calls are that
// session's updates. For any other client its calls are not shown as tool
// calls of their own: the task call's card lists them as they run, then
// shows that list with the report.
package task

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"acpd/acp"
	"acpd/compact"
	"acpd/model"
	"acpd/tools"
)

// Host is what the task tool needs from the session it runs in.
type Host interface {
	// SubAgent returns what the sub-agent of task call callID, of
	// agentType ("" for the read-only explorer), runs with, or why it
	// cannot run (an unknown type, the model not available).
	SubAgent(agentType, callID string) (Sub, error)
}

// Type is a custom sub-agent type offered to the model.
type Type struct {
	Name, Description string
}

// Sub is what a sub-agent runs with.
type Sub struct {
	// Backend answers its requests for Model (a model ID), with Effort
	// ("" for the backend's default).
	Backend model.Backend
	Model   string
	Effort  model.Effort
	// Cwd is the session's working directory, named in its prompt.
	Cwd string
	// Tool returns the session's built-in tool of that name, or nil.
	Tool func(name string) *tools.Tool
	// Env is what its tools run with: the session's policy decides their
	// calls without asking the user (what would ask is refused), and their
	// progress is not reported.
	Env tools.Env
	// Prompt is a custom sub-agent's system prompt ("": the explorer's).
	Prompt string
	// Tools are the tools it may use (nil: the explorer's read and search
	// tools); the Host has kept only those the session's mode allows.
	Tools []string
	// Child, when not nil, shows the sub-agent as a session of its own.
	Child Child
	// Pre, when not nil, runs before each of the sub-agent's calls (the
	// session's PreToolUse hooks): a non-empty block is the call's error
	// result and the call does not run; else the call runs with the
	// context it returns. Post, when not nil, runs after a call that ran
	// and may add to its result (PostToolUse).
	Pre  func(ctx context.Context, id, name string, input json.RawMessage) (context.Context, string)
	Post func(ctx context.Context, id, name string, input json.RawMessage, res *tools.Result)
}

// Child is a sub-agent's own session, for a client that renders
// sub-agents: Start announces it before any of its updates, Update sends
// one update on it, End reports how its work ended (stop is end_turn,
// max_turn_requests or cancelled; failed, when not nil, is why it failed).
type Child interface {
	Start(title, prompt string)
	Update(u acp.SessionUpdate)
	End(stop acp.StopReason, failed error)
}

// maxListed bounds the calls the card of a task lists.
const maxListed = 30

// MaxRequests caps a sub-agent's model requests.
const MaxRequests = 25

// names are the tools a sub-agent may use: reads and searches.
var names = []string{"glob", "grep", "list_dir", "read_file"}

const systemPrompt = `You are a read-only exploration sub-agent of acpd, a coding agent. Another agent gave you a task: find the information it asks for in the project, using the read and search tools (glob, grep, list_dir, read_file; independent calls in one response run in parallel). You cannot edit files or run commands. Be thorough but quick. Then answer with a concise report: the facts found, with path:line references and short quotes where useful, and what you could not find. The report is all the other agent sees.`

// input is the task tool's arguments.
type input struct {
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	// SubagentType is Claude Code's name for the agent type.
	SubagentType string `json:"subagent_type"`
}

// Tool returns the "task" tool.
func Tool() *tools.Tool {
	return &tools.Tool{
		Def: model.ToolDef{
			Name: "task",
			Description: "Delegate a read-only exploration to a sub-agent with a fresh context (it can glob, grep, list and read files, but not edit or run commands), and get back its report. " +
				"Use it for broad searches (where is X handled, how does Y work across the code) whose intermediate reads you do not need in your own context. Give it a complete, self-contained task.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"description":{"type":"string","description":"A few words naming the task"},"prompt":{"type":"string","description":"The task, with everything the sub-agent needs to know"}},"required":["prompt"],"additionalProperties":false}`),
		},
		Kind:     acp.ToolKindThink,
		ReadOnly: true,
		Title: func(in json.RawMessage) string {
			v, _ := tools.DecodeInput[input](in)
			if v.Description != "" {
				return "Explore: " + tools.Truncate(v.Description, 80)
			}
			return "Explore"
		},
		Run: run,
	}
}

// ToolWith returns the "task" tool offering the custom sub-agent types
// too (subagent_type; the explorer when absent). Custom sub-agents may
// have tools that change things, so the tool is not read-only.
func ToolWith(types []Type) *tools.Tool {
	t := Tool()
	if len(types) == 0 {
		return t
	}
	var b strings.Builder
	b.WriteString(t.Def.Description)
	b.WriteString("\n\nSet subagent_type to delegate to one of these agents instead (each with its own instructions and tools; without subagent_type the read-only explorer runs):")
	names := make([]string, len(types))
	for i, ty := range types {
		names[i] = ty.Name
		fmt.Fprintf(&b, "\n- %s: %s", ty.Name, ty.Description)
	}
	enum, _ := json.Marshal(names)
	t.Def.Description = b.String()
	t.Def.InputSchema = json.RawMessage(`{"type":"object","properties":{"description":{"type":"string","description":"A few words naming the task"},"prompt":{"type":"string","description":"The task, with everything the sub-agent needs to know"},"subagent_type":{"type":"string","enum":` + string(enum) + `,"description":"The agent to delegate to (default: the read-only explorer)"}},"required":["prompt"],"additionalProperties":false}`)
	t.ReadOnly = false
	t.Title = func(in json.RawMessage) string {
		v, _ := tools.DecodeInput[input](in)
		who := "Explore"
		if v.SubagentType != "" {
			who = "Agent " + v.SubagentType
		}
		if v.Description != "" {
			return who + ": " + tools.Truncate(v.Description, 80)
		}
		return who
	}
	return t
}

func run(ctx context.Context, env tools.Env, c *tools.Call) tools.Result {
	in, err := tools.DecodeInput[input](c.Input)
	if err != nil {
		return tools.Errorf("invalid task arguments: %v", err)
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return tools.Errorf("prompt is empty")
	}
	h, ok := env.(Host)
	if !ok {
		return tools.Errorf("task is not available here")
	}
	env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Status: new(acp.ToolCallStatusInProgress)})
	sub, err := h.SubAgent(in.SubagentType, c.ID)
	if err != nil {
		return tools.Errorf("the sub-agent cannot run: %v", err)
	}
	r := &runner{env: env, sub: sub, callID: c.ID}
	if sub.Child != nil {
		title := in.Description
		switch {
		case title == "" && in.SubagentType != "":
			title = in.SubagentType
		case title == "":
			title = "Explore"
		}
		sub.Child.Start(title, in.Prompt)
	}
	res, stop, failed := r.explore(ctx, in.Prompt)
	if sub.Child != nil {
		sub.Child.End(stop, failed)
	} else if len(r.listed) > 0 {
		// The card: the calls, then the report (or the failure).
		res.Content = []acp.ToolCallContent{tools.TextContent(r.list()), tools.TextContent(res.Text)}
	}
	return res
}

// runner is one sub-agent run.
type runner struct {
	env     tools.Env
	sub     Sub
	callID  string
	allowed []string // the tools it may use
	listed  []string // titles of the calls run, for the card
	reads   int
}

// list is the card's list of the calls run.
func (r *runner) list() string {
	l := r.listed
	more := ""
	if len(l) > maxListed {
		more = fmt.Sprintf("\n… and %d more", len(l)-maxListed)
		l = l[:maxListed]
	}
	return "Sub-agent calls:\n- " + strings.Join(l, "\n- ") + more
}

// explore runs the sub-agent's loop: its result, and for a Child the stop
// reason and the failure.
func (r *runner) explore(ctx context.Context, prompt string) (tools.Result, acp.StopReason, error) {
	sub := r.sub
	fail := func(format string, args ...any) (tools.Result, acp.StopReason, error) {
		res := tools.Errorf(format, args...)
		if ctx.Err() != nil {
			return res, acp.StopReasonCancelled, nil
		}
		return res, acp.StopReasonEndTurn, errors.New(res.Text)
	}
	allowed, system := names, systemPrompt
	if sub.Tools != nil {
		allowed = sub.Tools
	}
	if sub.Prompt != "" {
		system = sub.Prompt
	}
	var defs []model.ToolDef
	for _, n := range allowed {
		if t := sub.Tool(n); t != nil {
			defs = append(defs, t.Def)
			r.allowed = append(r.allowed, n)
		}
	}
	system += "\n\nWorking directory: " + sub.Cwd + "\n"
	msgs := []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: prompt}}}}
	for step := 0; step < MaxRequests; step++ {
		req := &model.Request{Model: sub.Model, System: system, Messages: msgs, Tools: defs, Effort: sub.Effort}
		last := step == MaxRequests-1
		if last {
			compact.FinalRequest(req)
		}
		var parts []model.Part
		var calls []model.Part
		var text strings.Builder
		finished := false
		for ev, err := range sub.Backend.Stream(ctx, req) {
			if err != nil {
				return fail("the sub-agent's model request failed: %v", err)
			}
			switch ev.Type {
			case model.EventText:
				text.WriteString(ev.Text)
			case model.EventToolDone:
				in := ev.Input
				if len(in) == 0 {
					in = json.RawMessage("{}")
				}
				calls = append(calls, model.Part{Type: model.PartToolUse, ToolCallID: ev.ToolCallID, ToolName: ev.ToolName, Input: in, Signature: ev.Signature, Opaque: ev.Opaque, Provider: ev.Provider})
			case model.EventFinish:
				finished = true
			}
		}
		if !finished {
			return fail("the sub-agent's model stream ended without finishing")
		}
		if text.Len() > 0 {
			parts = append(parts, model.Part{Type: model.PartText, Text: text.String()})
			if sub.Child != nil {
				id := acp.MessageID(fmt.Sprintf("%s-m%d", r.callID, step))
				sub.Child.Update(acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: text.String()}}, MessageID: &id}})
			}
		}
		if len(calls) == 0 || last {
			report := strings.TrimSpace(text.String())
			if report == "" {
				report = "(the sub-agent returned no report)"
			}
			stop := acp.StopReasonEndTurn
			if len(calls) > 0 {
				stop = acp.StopReasonMaxTurnRequests
			}
			return tools.Result{Text: fmt.Sprintf("Report of the sub-agent (%d tool calls):\n%s", r.reads, report)}, stop, nil
		}
		msgs = append(msgs, model.Message{Role: model.RoleAssistant, Parts: append(parts, calls...)})
		results := make([]model.Part, len(calls))
		for i, pc := range calls {
			results[i] = r.call(ctx, pc).Part(pc.ToolCallID)
		}
		if ctx.Err() != nil {
			return fail("cancelled")
		}
		msgs = append(msgs, model.Message{Role: model.RoleUser, Parts: results})
	}
	return fail("the sub-agent made no report")
}

// call runs one of the sub-agent's calls, showing it on the Child or the
// task's card, and returns its bounded result.
func (r *runner) call(ctx context.Context, pc model.Part) tools.Result {
	sub := r.sub
	var t *tools.Tool
	if slices.Contains(r.allowed, pc.ToolName) {
		t = sub.Tool(pc.ToolName)
	}
	title := pc.ToolName
	if t != nil && t.Title != nil && json.Valid(pc.Input) {
		title = t.Title(pc.Input)
	}
	id := acp.ToolCallID(pc.ToolCallID)
	if sub.Child != nil {
		name := pc.ToolName
		tc := &acp.ToolCall{ToolCallID: id, Name: &name, Title: title, Kind: acp.ToolKindOther, Status: acp.ToolCallStatusInProgress}
		if t != nil {
			tc.Kind = t.Kind
		}
		if json.Valid(pc.Input) {
			tc.RawInput = pc.Input
		}
		sub.Child.Update(acp.SessionUpdate{ToolCall: tc})
	}
	var res tools.Result
	switch {
	case t == nil:
		res = tools.Errorf("unknown tool %q; the sub-agent's tools are %s", pc.ToolName, strings.Join(r.allowed, ", "))
	case !json.Valid(pc.Input):
		res = tools.Errorf("the arguments are not valid JSON")
	default:
		r.listed = append(r.listed, title)
		if sub.Child == nil {
			r.env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(r.callID), Content: []acp.ToolCallContent{tools.TextContent(r.list())}})
		}
		res = r.run(ctx, t, pc)
		r.reads++
	}
	if !res.Bounded {
		res.Text = tools.Bound(res.Text)
	}
	if sub.Child != nil {
		st := acp.ToolCallStatusCompleted
		if res.IsError {
			st = acp.ToolCallStatusFailed
		}
		content := res.Content
		if len(content) == 0 && res.Text != "" {
			content = []acp.ToolCallContent{tools.TextContent(tools.Truncate(res.Text, shownResult))}
		}
		sub.Child.Update(acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: id, Status: &st, Content: content}})
	}
	return res
}

// run runs one allowed call through the Sub's hooks.
func (r *runner) run(ctx context.Context, t *tools.Tool, pc model.Part) tools.Result {
	sub := r.sub
	if sub.Pre != nil {
		var block string
		if ctx, block = sub.Pre(ctx, pc.ToolCallID, pc.ToolName, pc.Input); block != "" {
			return tools.Errorf("%s", block)
		}
	}
	res := t.Run(ctx, sub.Env, &tools.Call{ID: pc.ToolCallID, Name: pc.ToolName, Input: pc.Input})
	if sub.Post != nil {
		sub.Post(ctx, pc.ToolCallID, pc.ToolName, pc.Input, &res)
	}
	return res
}

// shownResult bounds the text of a sub-agent call's result shown on its
// card in the Child session.
const shownResult = 4 << 10
