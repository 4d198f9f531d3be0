package agent

import (
	"context"
	"errors"
	"fmt"

	"acpd/acp"
	"acpd/permissions"
	"acpd/tools"
)

// decide is the policy's decision for call in mode, except that once an
// MCP server's skill is in the conversation a command that would run
// without asking asks (allow once or reject): skill content from a server
// never runs code on this machine without the user's say.
func (s *sess) decide(mode permissions.Mode, call permissions.Call) permissions.Decision {
	d := s.policy.Decide(mode, call)
	if d.Action != permissions.Allow || call.Kind != acp.ToolKindExecute {
		return d
	}
	if skill := s.settings().MCPSkill; skill != "" {
		d.Action, d.Remember = permissions.Ask, nil
		d.Reason = "the skill " + skill + " from an MCP server is in use, so commands ask first"
	}
	return d
}

// authorize decides whether a tool call may run, asking the user through
// session/request_permission when the policy says ask. It fails closed: any
// answer but a selected, offered allow option is a rejection, and so is a
// cancelled turn. The returned reason explains a rejection to the model.
// preview, when not nil, is called only when the user is asked: content it
// returns (the proposed change) is shown in the request.
func (s *sess) authorize(ctx context.Context, tc *tools.Call, call permissions.Call, upd acp.ToolCallUpdate, preview func() []acp.ToolCallContent) (bool, string) {
	mode := permissions.Mode(s.settings().Mode)
	d := hookVerdict(ctx, s.decide(mode, call))
	switch d.Action {
	case permissions.Allow:
		s.markRunning(tc)
		return true, ""
	case permissions.Deny:
		return false, "Not allowed: " + d.Reason
	}
	peer, ok := s.a.peer()
	if !ok {
		return false, "Not allowed: the editor is gone"
	}
	offered := permissions.Options(d)
	req := acp.RequestPermissionRequest{SessionID: s.id, ToolCall: upd, Options: make([]acp.PermissionOption, 0, len(offered))}
	req.ToolCall.ToolCallID = acp.ToolCallID(tc.ID)
	if preview != nil {
		if c := preview(); len(c) > 0 {
			req.ToolCall.Content = c
		}
	}
	// The "always" options' names say what would be remembered (the
	// command, the file, a fetch's origin): the user approves no more
	// than the prompt shows.
	for _, o := range offered {
		req.Options = append(req.Options, acp.PermissionOption{OptionID: acp.PermissionOptionID(o.ID), Name: o.Name, Kind: acp.PermissionOptionKind(o.Kind)})
	}
	resp, err := peer.RequestPermission(ctx, &req)
	if err != nil {
		if ctx.Err() != nil {
			return false, "The user cancelled the turn."
		}
		s.a.log.Warn("permission request failed", "session", s.id, "err", err)
		return false, "Not allowed: the permission request failed (" + err.Error() + ")"
	}
	outcome, optionID := "", ""
	switch {
	case resp.Outcome.Selected != nil:
		outcome, optionID = "selected", string(resp.Outcome.Selected.OptionID)
	case resp.Outcome.Cancelled != nil:
		outcome = "cancelled"
	}
	if outcome == "cancelled" {
		// ACP: a cancelled outcome means the client is cancelling the
		// turn. End it now, whether or not its session/cancel has been
		// read yet (agent-shell sends the outcome first), so no further
		// model request follows.
		s.slot.Cancel(0)
		tc.Refusal = "Cancelled."
		return false, "The user cancelled the turn."
	}
	allowed, remember, _ := permissions.Verdict(offered, outcome, optionID, ctx.Err() != nil)
	if remember {
		if err := s.policy.Remember(call, d, allowed); err != nil && !errors.Is(err, permissions.ErrCannotRemember) {
			s.a.log.Warn("remembering a permission failed", "session", s.id, "err", err)
		}
	}
	if !allowed {
		if ctx.Err() != nil {
			tc.Refusal = "Cancelled."
			return false, "The user cancelled the turn."
		}
		tc.Refusal = "Rejected."
		return false, fmt.Sprintf("The user rejected this %s call. Do not retry it; ask the user what to do instead.", call.Tool)
	}
	s.markRunning(tc)
	return true, ""
}

// markRunning reports that a call's approval is settled and it runs.
func (s *sess) markRunning(t *tools.Call) {
	s.notify(s.a.baseContext(), acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(t.ID), Status: new(acp.ToolCallStatusInProgress)}})
}
