package agent

import (
	"encoding/json"

	"acpd/acp"
	"acpd/model"
	"acpd/tools"
	"acpd/tools/task"
)

// subagents reports the unstable subagents capability: the client renders
// a sub-agent as a session of its own (subagent_update on the parent, the
// child's updates under the child's session id).
func (a *Agent) subagents() bool { return a.clientCapabilities().Subagents != nil }

// child is a task sub-agent's session (task.Child) as the unstable schema
// defines it: subagent_update on the parent session announces it (running)
// and settles it (idle, with its stop reason and usage); its own updates
// carry its session id and, for Zed and the other clients that read
// claude-agent-acp's attribution, _meta.claudeCode.parentToolUseId naming
// the task call. Its updates are not logged: a loaded session shows the
// task's card, which lists the calls.
type child struct {
	s      *sess
	id     acp.SessionID
	callID string     // the task call
	usage  *turnUsage // the sub-agent's own requests
}

var _ task.Child = (*child)(nil)

// newChild returns the child session of task call callID and the backend
// its requests go to (b, counted for the child too).
func (s *sess) newChild(callID string, b model.Backend, info model.ModelInfo) (*child, model.Backend) {
	c := &child{s: s, id: acp.SessionID(string(s.id) + "-task-" + callID), callID: callID, usage: &turnUsage{}}
	return c, meteredBackend{Backend: b, tally: c.usage, info: info}
}

func (c *child) Start(title, prompt string) {
	desc := tools.Truncate(prompt, 300)
	// A non-text update waits in the parent's queue until it is written:
	// the announcement precedes the child's traffic.
	c.s.send(c.s.a.baseContext(), acp.SessionUpdate{SubagentUpdate: &acp.SubagentUpdate{
		SessionID: c.id, Title: &title, Description: &desc,
		State: &acp.StateUpdate{Running: &acp.RunningStateUpdate{}},
	}})
	parent := c.s.id
	c.Update(acp.SessionUpdate{SessionMessage: &acp.SessionMessage{
		MessageID:          acp.MessageID(c.callID + "-prompt"),
		SenderSessionID:    &parent,
		RecipientSessionID: &c.id,
		Content:            []acp.ContentBlock{{Text: &acp.TextContent{Text: prompt}}},
	}})
}

func (c *child) Update(u acp.SessionUpdate) {
	meta := map[string]any{"claudeCode": map[string]any{"parentToolUseId": c.callID}}
	switch {
	case u.AgentMessageChunk != nil:
		u.AgentMessageChunk.Meta = meta
	case u.ToolCall != nil:
		u.ToolCall.Meta = meta
	case u.ToolCallUpdate != nil:
		u.ToolCallUpdate.Meta = meta
	case u.SessionMessage != nil:
		u.SessionMessage.Meta = meta
	}
	peer, ok := c.s.a.peer()
	if !ok {
		return
	}
	if err := peer.SessionUpdate(c.s.a.baseContext(), &acp.SessionNotification{SessionID: c.id, Update: u}); err != nil {
		c.s.a.log.Debug("sub-agent session/update not sent", "session", c.id, "err", err)
	}
}

func (c *child) End(stop acp.StopReason, failed error) {
	idle := &acp.IdleStateUpdate{Usage: c.usage.acp()}
	switch {
	case failed != nil:
		e, _ := json.Marshal(map[string]any{"code": acp.ErrorCodeInternalError, "message": failed.Error()})
		idle.Error = &acp.ErrorStopReason{Error: e}
	case stop == acp.StopReasonCancelled:
		idle.Cancelled = &acp.IdleStateUpdateCancelled{}
	case stop == acp.StopReasonMaxTurnRequests:
		idle.MaxTurnRequests = &acp.IdleStateUpdateMaxTurnRequests{}
	default:
		idle.EndTurn = &acp.IdleStateUpdateEndTurn{}
	}
	c.s.send(c.s.a.baseContext(), acp.SessionUpdate{SubagentUpdate: &acp.SubagentUpdate{SessionID: c.id, State: &acp.StateUpdate{Idle: idle}}})
}
