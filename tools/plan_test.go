package tools

import (
	"testing"

	"acpd/acp"
	"acpd/permissions"
)

// update_plan replaces the session's plan (priority medium by default),
// reports itself in progress and answers with the plan as text; Codex's
// {plan: [{step, status}]} is read too.
func TestUpdatePlan(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModePlan) // needs no permission, even in plan mode
	res := e.run(t.Context(), "update_plan", `{"entries":[{"content":"Read the code","status":"completed","priority":"high"},{"content":"Fix it","status":"in_progress"},{"content":"Test","status":"pending","priority":"low"}]}`)
	if got := mustOK(t, res); got != "Plan updated:\n1. [completed] Read the code\n2. [in_progress] Fix it\n3. [pending] Test\n" {
		t.Fatalf("result %q", got)
	}
	want := []acp.PlanEntry{
		{Content: "Read the code", Status: acp.PlanEntryStatusCompleted, Priority: acp.PlanEntryPriorityHigh},
		{Content: "Fix it", Status: acp.PlanEntryStatusInProgress, Priority: acp.PlanEntryPriorityMedium},
		{Content: "Test", Status: acp.PlanEntryStatusPending, Priority: acp.PlanEntryPriorityLow},
	}
	if len(e.plans) != 1 || !equalEntries(e.plans[0].Entries, want) {
		t.Fatalf("plans %+v", e.plans)
	}
	if ups := e.recordedUpdates(); len(ups) != 1 || ups[0].ToolCallID != "call-update_plan" || *ups[0].Status != acp.ToolCallStatusInProgress {
		t.Fatalf("updates %+v", ups)
	}

	mustOK(t, e.run(t.Context(), "update_plan", `{"plan":[{"step":"Only step","status":"pending"}],"explanation":"simpler"}`))
	if len(e.plans) != 2 || !equalEntries(e.plans[1].Entries, []acp.PlanEntry{{Content: "Only step", Status: acp.PlanEntryStatusPending, Priority: acp.PlanEntryPriorityMedium}}) {
		t.Fatalf("Codex plan %+v", e.plans[1])
	}
	// An empty plan clears it.
	mustOK(t, e.run(t.Context(), "update_plan", `{"entries":[]}`))
	if len(e.plans) != 3 || e.plans[2].Entries == nil || len(e.plans[2].Entries) != 0 {
		t.Fatalf("empty plan %+v", e.plans[2])
	}
}

// A bad plan is refused with what to fix, and the session's plan stays.
func TestUpdatePlanRefusals(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAsk)
	for _, tc := range []struct{ in, want string }{
		{`{}`, "entries is missing"},
		{`{"entries":[],"plan":[]}`, "give the steps once, in entries"},
		{`{"entries":[{"content":"a","step":"b","status":"pending"}]}`, "entry 1: give the step's text once"},
		{`{"entries":[{"content":" ","status":"pending"}]}`, "entry 1: content is empty"},
		{`{"entries":[{"content":"a","status":"done"}]}`, `entry 1: status must be pending, in_progress or completed, got "done"`},
		{`{"entries":[{"content":"a","status":"pending","priority":"urgent"}]}`, `entry 1: priority must be high, medium or low, got "urgent"`},
		{`{"entries":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`, "2 steps are in_progress"},
		{`{"entries":[{"content":"a","status":"pending","owner":"me"}]}`, "invalid update_plan arguments"},
		{`[]`, "invalid update_plan arguments"},
	} {
		mustFail(t, e.run(t.Context(), "update_plan", tc.in), tc.want)
	}
	if len(e.plans) != 0 {
		t.Fatalf("a refused plan was set: %+v", e.plans)
	}
}

func equalEntries(a, b []acp.PlanEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Content != b[i].Content || a[i].Status != b[i].Status || a[i].Priority != b[i].Priority {
			return false
		}
	}
	return true
}
