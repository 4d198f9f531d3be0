package tools

import (
	"context"
	"encoding/json"
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
			Name:        "update_plan",
			Description: "Replace the current plan for this task. Use it for multi-step work: list every step with its status and priority, and update it as steps complete.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"entries":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string","description":"What the step does"},"status":{"type":"string","enum":["pending","in_progress","completed"]},"priority":{"type":"string","enum":["high","medium","low"]}},"required":["content","status","priority"],"additionalProperties":false}}},"required":["entries"],"additionalProperties":false}`),
		},
		Kind:  acp.ToolKindThink,
		Title: func(json.RawMessage) string { return "Update plan" },
		Run: func(ctx context.Context, env Env, c *Call) Result {
			// Needing no approval, the call runs at once (other tools
			// report in_progress once permission is granted).
			env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Status: statusp(acp.ToolCallStatusInProgress)})
			var in struct {
				Entries []struct {
					Content  string `json:"content"`
					Status   string `json:"status"`
					Priority string `json:"priority"`
				} `json:"entries"`
			}
			if err := acp.Unmarshal(c.Input, &in); err != nil {
				return Errorf("invalid update_plan arguments: %v", err)
			}
			plan := &acp.Plan{Entries: []acp.PlanEntry{}}
			for i, e := range in.Entries {
				st, pr := acp.PlanEntryStatus(e.Status), acp.PlanEntryPriority(e.Priority)
				switch st {
				case acp.PlanEntryStatusPending, acp.PlanEntryStatusInProgress, acp.PlanEntryStatusCompleted:
				default:
					return Errorf("entry %d: status must be pending, in_progress or completed, got %q", i+1, e.Status)
				}
				switch pr {
				case acp.PlanEntryPriorityHigh, acp.PlanEntryPriorityMedium, acp.PlanEntryPriorityLow:
				default:
					return Errorf("entry %d: priority must be high, medium or low, got %q", i+1, e.Priority)
				}
				if strings.TrimSpace(e.Content) == "" {
					return Errorf("entry %d: content is empty", i+1)
				}
				plan.Entries = append(plan.Entries, acp.PlanEntry{Content: e.Content, Status: st, Priority: pr})
			}
			env.SetPlan(plan)
			return Result{Text: "Plan updated:\n" + PlanText(plan)}
		},
	}
}

// PlanText renders a plan for the model.
func PlanText(p *acp.Plan) string {
	var b strings.Builder
	for i, e := range p.Entries {
		fmt.Fprintf(&b, "%d. [%s] %s\n", i+1, e.Status, e.Content)
	}
	return b.String()
}
