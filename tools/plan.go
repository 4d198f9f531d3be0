package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"acpd/acp"
	"acpd/model"
)

// planTool is update_plan: the model's plan, shown to the client as an ACP
// plan update and kept by the session (Env.SetPlan).
func planTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name: "update_plan",
			Description: "Keep a plan for multi-step work: the user sees it update as you go. Each call replaces the whole plan: list every step with its status; " +
				"at most one step is in_progress at a time; mark a step completed as soon as it is done. Skip the plan for simple tasks.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"entries":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string","description":"What the step does"},"status":{"type":"string","enum":["pending","in_progress","completed"]},"priority":{"type":"string","enum":["high","medium","low"],"description":"Default medium"}},"required":["content","status"],"additionalProperties":false}},"explanation":{"type":"string","description":"Optional note on what changed in the plan"}},"required":["entries"],"additionalProperties":false}`),
		},
		Kind:  acp.ToolKindThink,
		Title: func(json.RawMessage) string { return "Update plan" },
		Run: func(ctx context.Context, env Env, c *Call) Result {
			// Needing no approval, the call runs at once (other tools
			// report in_progress once permission is granted).
			env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Status: new(acp.ToolCallStatusInProgress)})
			plan, err := decodePlan(c.Input)
			if err != nil {
				return Errorf("invalid update_plan arguments: %v", err)
			}
			env.SetPlan(plan)
			return Result{Text: "Plan updated:\n" + PlanText(plan)}
		},
	}
}

// planStep is one step as models write it: acpd's {content, status,
// priority} or Codex's {step, status}.
type planStep struct {
	Content  string `json:"content"`
	Step     string `json:"step"`
	Status   string `json:"status"`
	Priority string `json:"priority"`
}

// planInput is update_plan's arguments: acpd's entries, or Codex's plan
// (not in the schema, accepted as Codex models write it).
type planInput struct {
	Entries     []planStep `json:"entries"`
	Plan        []planStep `json:"plan"`
	Explanation string     `json:"explanation"`
}

// decodePlan reads update_plan's arguments: {"entries": [...]} or Codex's
// {"plan": [{"step", "status"}], "explanation"}. Priority defaults to
// medium; at most one step may be in progress.
func decodePlan(in json.RawMessage) (*acp.Plan, error) {
	args, err := DecodeInput[planInput](in)
	if err != nil {
		return nil, err
	}
	steps := args.Entries
	switch {
	case args.Entries != nil && args.Plan != nil:
		return nil, errors.New("give the steps once, in entries")
	case args.Plan != nil:
		steps = args.Plan
	case args.Entries == nil:
		return nil, errors.New(`entries is missing: pass {"entries": [{"content": "...", "status": "pending"}, ...]}`)
	}
	plan := &acp.Plan{Entries: []acp.PlanEntry{}}
	running := 0
	for i, e := range steps {
		content := e.Content
		switch {
		case content != "" && e.Step != "" && content != e.Step:
			return nil, fmt.Errorf("entry %d: give the step's text once, as content", i+1)
		case content == "":
			content = e.Step
		}
		if strings.TrimSpace(content) == "" {
			return nil, fmt.Errorf("entry %d: content is empty", i+1)
		}
		st, pr := acp.PlanEntryStatus(e.Status), acp.PlanEntryPriority(e.Priority)
		switch st {
		case acp.PlanEntryStatusInProgress:
			running++
		case acp.PlanEntryStatusPending, acp.PlanEntryStatusCompleted:
		default:
			return nil, fmt.Errorf("entry %d: status must be pending, in_progress or completed, got %q", i+1, e.Status)
		}
		switch pr {
		case "":
			pr = acp.PlanEntryPriorityMedium
		case acp.PlanEntryPriorityHigh, acp.PlanEntryPriorityMedium, acp.PlanEntryPriorityLow:
		default:
			return nil, fmt.Errorf("entry %d: priority must be high, medium or low, got %q", i+1, e.Priority)
		}
		plan.Entries = append(plan.Entries, acp.PlanEntry{Content: content, Status: st, Priority: pr})
	}
	if running > 1 {
		return nil, fmt.Errorf("%d steps are in_progress; at most one step is in progress at a time", running)
	}
	return plan, nil
}

// PlanText renders a plan for the model.
func PlanText(p *acp.Plan) string {
	var b strings.Builder
	for i, e := range p.Entries {
		fmt.Fprintf(&b, "%d. [%s] %s\n", i+1, e.Status, e.Content)
	}
	return b.String()
}
