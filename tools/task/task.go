// Package task is the "task" tool: a sub-agent with a context of its own
// (at most MaxRequests model requests) that returns a report, saving the
// calling agent's context. By default it is a read-only explorer (glob,
// grep, list_dir and read_file); [ToolWith] also offers custom sub-agent
// types, each with its own prompt, tools and model (the Host's SubAgent).
//
// The tool runs only in a session that offers a sub-agent: the tools.Env
// its Run receives must implement Host, else the call fails with "task is
// not available here". The sub-agent's calls are not shown as tool calls
// of their own: the task call's content names the one running.
package task

import (
	"context"
	"encoding/json"
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
	// SubAgent returns what a sub-agent of the session of agentType (""
	// for the read-only explorer) runs with, or why it cannot run (an
	// unknown type, the model not available).
	SubAgent(agentType string) (Sub, error)
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
}

// MaxRequests caps a sub-agent's model requests.
const MaxRequests = 25

// names are the tools a sub-agent may use: reads and searches.
var names = []string{"glob", "grep", "list_dir", "read_file"}

const prompt = `You are a read-only exploration sub-agent of acpd, a coding agent. Another agent gave you a task: find the information it asks for in the project, using the read and search tools (glob, grep, list_dir, read_file; independent calls in one response run in parallel). You cannot edit files or run commands. Be thorough but quick. Then answer with a concise report: the facts found, with path:line references and short quotes where useful, and what you could not find. The report is all the other agent sees.`

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
	sub, err := h.SubAgent(in.SubagentType)
	if err != nil {
		return tools.Errorf("the sub-agent cannot run: %v", err)
	}
	allowed, system := names, prompt
	if sub.Tools != nil {
		allowed = sub.Tools
	}
	if sub.Prompt != "" {
		system = sub.Prompt
	}
	var defs []model.ToolDef
	var usable []string
	for _, n := range allowed {
		if t := sub.Tool(n); t != nil {
			defs = append(defs, t.Def)
			usable = append(usable, n)
		}
	}
	allowed = usable
	system += "\n\nWorking directory: " + sub.Cwd + "\n"
	msgs := []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: in.Prompt}}}}
	reads := 0
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
				return tools.Errorf("the sub-agent's model request failed: %v", err)
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
			return tools.Errorf("the sub-agent's model stream ended without finishing")
		}
		if text.Len() > 0 {
			parts = append(parts, model.Part{Type: model.PartText, Text: text.String()})
		}
		if len(calls) == 0 || last {
			report := strings.TrimSpace(text.String())
			if report == "" {
				report = "(the sub-agent returned no report)"
			}
			return tools.Result{Text: fmt.Sprintf("Report of the sub-agent (%d tool calls):\n%s", reads, report)}
		}
		msgs = append(msgs, model.Message{Role: model.RoleAssistant, Parts: append(parts, calls...)})
		results := make([]model.Part, len(calls))
		for i, pc := range calls {
			var t *tools.Tool
			if slices.Contains(allowed, pc.ToolName) {
				t = sub.Tool(pc.ToolName)
			}
			var r tools.Result
			switch {
			case t == nil:
				r = tools.Errorf("unknown tool %q; the sub-agent's tools are %s", pc.ToolName, strings.Join(allowed, ", "))
			case !json.Valid(pc.Input):
				r = tools.Errorf("the arguments are not valid JSON")
			default:
				if t.Title != nil {
					env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Content: []acp.ToolCallContent{tools.TextContent(t.Title(pc.Input))}})
				}
				r = t.Run(ctx, sub.Env, &tools.Call{ID: pc.ToolCallID, Name: pc.ToolName, Input: pc.Input})
				reads++
			}
			if !r.Bounded {
				r.Text = tools.Bound(r.Text)
			}
			results[i] = r.Part(pc.ToolCallID)
		}
		if ctx.Err() != nil {
			return tools.Errorf("cancelled")
		}
		msgs = append(msgs, model.Message{Role: model.RoleUser, Parts: results})
	}
	return tools.Errorf("the sub-agent made no report")
}
