package agent

import (
	"context"
	"strings"

	"acpd/acp"
)

// slashCommand reports whether the prompt is one of acpd's slash commands
// (a single text block starting with "/name").
func slashCommand(prompt []acp.ContentBlock) (string, bool) {
	if len(prompt) != 1 || prompt[0].Text == nil {
		return "", false
	}
	t := strings.TrimSpace(prompt[0].Text.Text)
	if !strings.HasPrefix(t, "/") {
		return "", false
	}
	name, _, _ := strings.Cut(t[1:], " ")
	for _, c := range commands {
		if c.Name == name {
			return name, true
		}
	}
	return "", false
}

// runCommand runs a slash command as the whole turn.
func (s *sess) runCommand(ctx context.Context, name string) (acp.StopReason, error) {
	out := s.a.baseContext()
	switch name {
	case "plan":
		before := s.settings().Mode
		s.update(func(st *settings) { st.Mode = modePlan })
		s.announce(out, before != modePlan)
		s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk("Switched to plan mode: I will read and plan, but not edit files or run commands.", newID("m_"))})
	}
	return acp.StopReasonEndTurn, nil
}
