package agent

import (
	"testing"

	"acpd/acp"
)

// TestPlanUpdateUnderItsCapability: a client that advertises the unstable
// plan capability gets update_plan as plan_update of one plan id (valid
// against the unstable schema) and no stable plan; one that does not gets
// the stable plan, valid against the stable schema, and no plan_update.
func TestPlanUpdateUnderItsCapability(t *testing.T) {
	script := []string{
		`{"type":"tool_done","toolCallId":"p1","toolName":"update_plan","input":{"entries":[{"content":"Write the parser","status":"in_progress","priority":"high"},{"content":"Test it","status":"pending","priority":"medium"}]}}`,
		`{"type":"finish"}`,
		`{"type":"text","text":"Planned."}`,
		`{"type":"finish"}`,
	}
	for _, capable := range []bool{true, false} {
		env := newEnv(t, "")
		env.setModel(mainModel, env.script(script...))
		var caps *acp.ClientCapabilities
		if capable {
			caps = &acp.ClientCapabilities{Plan: &acp.PlanCapabilities{}}
		}
		c := env.start(caps)
		sid := c.newSession()
		ups := c.promptUpdates(sid, "plan it")
		var stable, draft int
		for _, u := range ups {
			if u.Plan != nil {
				stable++
			}
			if p := u.PlanUpdate; p != nil {
				draft++
				if it := p.Plan.Items; it == nil || it.PlanID != planID || len(it.Entries) != 2 || it.Entries[0].Content != "Write the parser" {
					t.Errorf("plan_update %+v", p.Plan)
				}
			}
		}
		if capable && (draft != 1 || stable != 0) || !capable && (draft != 0 || stable != 1) {
			t.Errorf("capable %v: %d plan_update, %d plan updates", capable, draft, stable)
		}
		schema := "schema.json"
		if capable {
			schema = "schema.unstable.json"
		}
		for _, m := range c.in.messages() {
			if m.Method == acp.ClientMethodSessionUpdate {
				mustValidate(t, schema, "SessionNotification", m.Params)
			}
		}
	}
}
