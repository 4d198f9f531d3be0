package agent

import (
	"context"

	"acpd/acp"
	"acpd/agent/internal/turnerr"
	"acpd/model"
	"acpd/permissions"
)

// runCommand runs a slash command (other than /init) as the whole turn.
func (s *sess) runCommand(ctx context.Context, name string, b model.Backend, info model.ModelInfo) (acp.StopReason, error) {
	out := s.a.baseContext()
	switch name {
	case "compact":
		s.mu.Lock()
		n := len(s.transcript)
		s.mu.Unlock()
		msg := "Nothing to compact yet."
		if n > 2 {
			if err := s.compact(ctx, b, info); err != nil {
				if ctx.Err() != nil {
					return acp.StopReasonCancelled, nil
				}
				return "", turnerr.Model(err)
			}
			msg = "Compacted the conversation: older turns are now a summary."
		}
		s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk(msg, newID("m_"))})
	case "plan":
		before := s.settings().Mode
		s.update(func(st *settings) { st.Mode = string(permissions.ModePlan) })
		s.announce(out, before != string(permissions.ModePlan))
		s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk("Switched to plan mode: I will read and plan, but not edit files or run commands.", newID("m_"))})
	}
	return acp.StopReasonEndTurn, nil
}
