package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/model"
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

// subagentBackend answers the main agent with a task call, then "done";
// the sub-agent greps once, then reports. Each response reports usage.
func subagentBackend() model.Backend {
	return backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		usage := func(in, out int64) bool {
			return yield(model.Event{Type: model.EventUsage, Usage: &model.Usage{InputTokens: in, OutputTokens: out}}, nil)
		}
		done := func(text string, in, out int64) {
			_ = yield(model.Event{Type: model.EventText, Text: text}, nil) && usage(in, out) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
		}
		call := func(id, name, input string, in, out int64) {
			_ = yield(model.Event{Type: model.EventToolDone, ToolCallID: id, ToolName: name, Input: json.RawMessage(input)}, nil) && usage(in, out) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
		}
		if strings.HasPrefix(req.System, "You are a read-only exploration sub-agent") {
			if len(toolResults(*req)) == 0 {
				call("s1", "grep", `{"pattern":"func Parse"}`, 30, 4)
			} else {
				done("Parse is at pkg/parse.go:3.", 50, 6)
			}
			return
		}
		if len(toolResults(*req)) == 0 {
			call("t1", "task", `{"description":"find Parse","prompt":"Where is Parse defined?"}`, 10, 2)
			return
		}
		done("ok", 20, 1)
	})
}

// TestSubagentSession: to a client that advertises the unstable subagents
// capability, the task sub-agent is a session of its own: subagent_update
// on the parent announces it (running) before any of its updates, its
// prompt, text and tool calls (named, attributed to the task call through
// _meta.claudeCode.parentToolUseId) are updates of the child session, and a
// last subagent_update settles it (idle, end_turn, the sub-agent's usage).
// Every message is valid against the unstable schema.
func TestSubagentSession(t *testing.T) {
	env := newEnv(t, "")
	env.write("pkg/parse.go", "package pkg\n\nfunc Parse() {}\n")
	env.setModel(mainModel, subagentBackend())
	c := env.start(&acp.ClientCapabilities{Subagents: &acp.SubagentCapabilities{}})
	sid := c.newSession()
	c.mustPrompt(sid, "where is Parse?", acp.StopReasonEndTurn)

	var (
		child             acp.SessionID
		announced, idle   int // positions
		childUpdates      []acp.SessionUpdate
		firstChild        = -1
		sawPrompt, sawRun bool
	)
	for _, m := range c.in.messages() {
		if m.Method != acp.ClientMethodSessionUpdate {
			continue
		}
		mustValidate(t, "schema.unstable.json", "SessionNotification", m.Params)
		var n acp.SessionNotification
		if err := acp.Unmarshal(m.Params, &n); err != nil {
			t.Fatal(err)
		}
		if n.SessionID == sid {
			if su := n.Update.SubagentUpdate; su != nil {
				child = su.SessionID
				switch {
				case su.State != nil && su.State.Running != nil:
					announced = m.pos
					if su.Title == nil || *su.Title != "find Parse" {
						t.Errorf("title %v", su.Title)
					}
				case su.State != nil && su.State.Idle != nil:
					idle = m.pos
					i := su.State.Idle
					if i.EndTurn == nil || i.Usage == nil || i.Usage.InputTokens != 80 || i.Usage.OutputTokens != 10 || i.Usage.TotalTokens != 90 {
						t.Errorf("idle state %s", m.Params)
					}
				}
			}
			continue
		}
		if n.SessionID != child || child == "" {
			t.Errorf("an update for an unannounced session: %s", m.Params)
			continue
		}
		if firstChild < 0 {
			firstChild = m.pos
		}
		childUpdates = append(childUpdates, n.Update)
		var parent string
		switch u := n.Update; {
		case u.SessionMessage != nil:
			sawPrompt = len(u.SessionMessage.Content) == 1 && u.SessionMessage.Content[0].Text.Text == "Where is Parse defined?" &&
				u.SessionMessage.SenderSessionID != nil && *u.SessionMessage.SenderSessionID == sid
			parent = metaParent(u.SessionMessage.Meta)
		case u.ToolCall != nil:
			sawRun = u.ToolCall.ToolCallID == "s1" && u.ToolCall.Name != nil && *u.ToolCall.Name == "grep" && u.ToolCall.Kind == acp.ToolKindSearch
			parent = metaParent(u.ToolCall.Meta)
		case u.ToolCallUpdate != nil:
			parent = metaParent(u.ToolCallUpdate.Meta)
		case u.AgentMessageChunk != nil:
			parent = metaParent(u.AgentMessageChunk.Meta)
		}
		if parent != "t1" {
			t.Errorf("child update not attributed to t1: %s", m.Params)
		}
	}
	if child == "" || !(announced < firstChild && firstChild < idle) {
		t.Fatalf("announcement %d, first child update %d, idle %d (child %q)", announced, firstChild, idle, child)
	}
	if !sawPrompt || !sawRun {
		t.Errorf("prompt %v, grep call %v: %v", sawPrompt, sawRun, kinds(childUpdates))
	}
	if st := finalStatus(childUpdates, "s1"); st != acp.ToolCallStatusCompleted {
		t.Errorf("the sub-agent's grep ends %q", st)
	}
	if got := chunkText(childUpdates); got != "Parse is at pkg/parse.go:3." {
		t.Errorf("child text %q", got)
	}
}

// metaParent reads _meta.claudeCode.parentToolUseId.
func metaParent(meta map[string]any) string {
	cc, _ := meta["claudeCode"].(map[string]any)
	id, _ := cc["parentToolUseId"].(string)
	return id
}

// TestSubagentSummarisedInTheCard: without the subagents capability the
// sub-agent's calls are no tool calls of their own; the task's card lists
// them with the report, and nothing unstable is sent (every message is
// valid against the stable schema).
func TestSubagentSummarisedInTheCard(t *testing.T) {
	env := newEnv(t, "")
	env.write("pkg/parse.go", "package pkg\n\nfunc Parse() {}\n")
	env.setModel(mainModel, subagentBackend())
	c := env.start(nil)
	sid := c.newSession()
	c.mustPrompt(sid, "where is Parse?", acp.StopReasonEndTurn)
	var last *acp.ToolCallUpdate
	for _, m := range c.in.messages() {
		if m.Method != acp.ClientMethodSessionUpdate {
			continue
		}
		mustValidate(t, "schema.json", "SessionNotification", m.Params)
		var n acp.SessionNotification
		if err := acp.Unmarshal(m.Params, &n); err != nil {
			t.Fatal(err)
		}
		if n.SessionID != sid || n.Update.SubagentUpdate != nil {
			t.Errorf("unexpected %s", m.Params)
		}
		if u := n.Update.ToolCallUpdate; u != nil && u.ToolCallID == "t1" && u.Status != nil && *u.Status == acp.ToolCallStatusCompleted {
			last = u
		}
		if u := n.Update.ToolCall; u != nil && u.ToolCallID != "t1" {
			t.Errorf("a sub-agent call shown as a tool call: %s", m.Params)
		}
	}
	if last == nil || len(last.Content) != 2 {
		t.Fatalf("the task's final card: %+v", last)
	}
	list, report := last.Content[0].Content.Content.Text.Text, last.Content[1].Content.Content.Text.Text
	if !strings.HasPrefix(list, "Sub-agent calls:\n- ") || !strings.Contains(list, "func Parse") || !strings.Contains(report, "Parse is at pkg/parse.go:3.") {
		t.Errorf("card %q / %q", list, report)
	}
}
