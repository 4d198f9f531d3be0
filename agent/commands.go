package agent

import (
	"context"
	"strings"

	"acpd/acp"
	"acpd/model"
	"acpd/permissions"
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

// initPrompt is what /init asks the model to do.
const initPrompt = `Analyse this project and write an AGENTS.md file at its root for coding agents: what the project is, how to build it, how to run the tests, the layout of the code, conventions to follow, and anything surprising. Read the existing README, build files and a few representative source files first. If AGENTS.md already exists, improve it instead of replacing useful content. Keep it short and factual.`

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
				return "", modelError(err)
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
