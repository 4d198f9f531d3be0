package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"acpd/acp"
	"acpd/model"
	"acpd/permissions"
	"acpd/tools"
)

// maxTaskRequests caps a sub-agent's model requests.
const maxTaskRequests = 25

// taskTools are the tools a sub-agent may use: reads and searches.
var taskTools = []string{"glob", "grep", "list_dir", "read_file"}

const taskPrompt = `You are a read-only exploration sub-agent of acpd, a coding agent. Another agent gave you a task: find the information it asks for in the project, using the read and search tools (glob, grep, list_dir, read_file; independent calls in one response run in parallel). You cannot edit files or run commands. Be thorough but quick. Then answer with a concise report: the facts found, with path:line references and short quotes where useful, and what you could not find. The report is all the other agent sees.`

// taskTool is "task": a read-only sub-agent that explores the project with
// a context of its own and returns a report, saving the main context.
func taskTool() *tools.Tool {
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
			v, _ := tools.DecodeInput[struct {
				Description string `json:"description"`
				Prompt      string `json:"prompt"`
			}](in)
			if v.Description != "" {
				return "Explore: " + tools.Truncate(v.Description, 80)
			}
			return "Explore"
		},
		Run: runTask,
	}
}

// subEnv is a sub-agent's view of the session: the policy decides its
// calls without asking the user (what would ask is refused), and its
// progress is not reported as tool calls of their own.
type subEnv struct {
	toolEnv
	parent string // the task call's ID
}

func (e subEnv) Authorize(ctx context.Context, c *tools.Call, req permissions.Call, upd acp.ToolCallUpdate) (bool, string) {
	d := e.s.policy.Decide(permissions.Mode(e.s.settings().Mode), req)
	if d.Action == permissions.Allow {
		return true, ""
	}
	return false, "Not allowed in a sub-agent (" + d.Reason + "); report what you need to the agent that called you."
}

func (e subEnv) Update(u acp.ToolCallUpdate) {}

func runTask(ctx context.Context, env tools.Env, c *tools.Call) tools.Result {
	in, err := tools.DecodeInput[struct {
		Description string `json:"description"`
		Prompt      string `json:"prompt"`
	}](c.Input)
	if err != nil {
		return tools.Errorf("invalid task arguments: %v", err)
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return tools.Errorf("prompt is empty")
	}
	te, ok := env.(toolEnv)
	if !ok {
		return tools.Errorf("task is not available here")
	}
	s := te.s
	env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Status: statusp(acp.ToolCallStatusInProgress)})
	st := s.settings()
	backend, info, err := s.a.opts.Resolve(st.Model)
	if err != nil {
		return tools.Errorf("the model is not available: %v", err)
	}
	_, modelID, _ := model.ParseRef(st.Model)
	sub := subEnv{toolEnv: te, parent: c.ID}
	var defs []model.ToolDef
	for _, n := range taskTools {
		defs = append(defs, s.a.builtin[n].Def)
	}
	system := taskPrompt + "\n\nWorking directory: " + s.cwd + "\n"
	msgs := []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: in.Prompt}}}}
	reads := 0
	for step := 0; step < maxTaskRequests; step++ {
		req := &model.Request{Model: modelID, System: system, Messages: msgs, Tools: defs}
		if info.Reasoning {
			req.Effort = model.Effort(st.Thought)
		}
		last := step == maxTaskRequests-1
		if last {
			finalRequest(req)
		}
		var parts []model.Part
		var calls []model.Part
		var text strings.Builder
		finished := false
		for ev, err := range backend.Stream(ctx, req) {
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
			t := s.a.builtin[pc.ToolName]
			allowed := false
			for _, n := range taskTools {
				allowed = allowed || n == pc.ToolName
			}
			var r tools.Result
			switch {
			case !allowed || t == nil:
				r = tools.Errorf("unknown tool %q; the sub-agent's tools are %s", pc.ToolName, strings.Join(taskTools, ", "))
			case !json.Valid(pc.Input):
				r = tools.Errorf("the arguments are not valid JSON")
			default:
				if t.Title != nil {
					env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Content: []acp.ToolCallContent{tools.TextContent(t.Title(pc.Input))}})
				}
				r = t.Run(ctx, sub, &tools.Call{ID: pc.ToolCallID, Name: pc.ToolName, Input: pc.Input})
				reads++
			}
			if !r.Bounded {
				r.Text = boundResult(r.Text)
			}
			results[i] = toolResultPart(pc.ToolCallID, r)
		}
		if ctx.Err() != nil {
			return tools.Errorf("cancelled")
		}
		msgs = append(msgs, model.Message{Role: model.RoleUser, Parts: results})
	}
	return tools.Errorf("the sub-agent made no report")
}
