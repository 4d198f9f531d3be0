package agent

import (
	"context"
	"encoding/json"

	"acpd/acp"
	"acpd/agent/internal/slash"
	"acpd/agent/internal/turnerr"
	"acpd/agent/internal/usercmd"
	"acpd/config"
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

// userCommands reads the session's custom slash commands (package
// usercmd): the project's, acpd's user directory's, and those of Claude
// Code and Codex, acpd's own names reserved.
func (s *sess) userCommands() []usercmd.Command {
	getenv := s.a.getenv
	home := getenv("HOME")
	if home == "" {
		home = getenv("USERPROFILE")
	}
	var reserved []string
	for _, c := range slash.Commands() {
		reserved = append(reserved, c.Name)
	}
	return usercmd.Load(usercmd.Sources(config.ProjectRoot(s.cwd), config.UserDir(getenv), home, getenv), reserved)
}

// commands is every slash command the session offers but the MCP
// servers' prompts: acpd's own, then the custom ones.
func (s *sess) commands() []acp.AvailableCommand {
	return append(slash.Commands(), usercmd.Available(s.userCommands())...)
}

// refreshCommands reads the custom commands again (at every prompt, so an
// added or edited file counts from the next one) and announces the list
// when it changed since the last announcement.
func (s *sess) refreshCommands(ctx context.Context) []usercmd.Command {
	cmds := s.userCommands()
	list := append(slash.Commands(), usercmd.Available(cmds)...)
	key, _ := json.Marshal(list)
	s.mu.Lock()
	changed := s.cmdKey != "" && s.cmdKey != string(key)
	s.cmdKey = string(key)
	s.mu.Unlock()
	if changed {
		if s.mcp != nil {
			s.mcp.SetCommands(list)
		} else {
			s.send(ctx, acp.SessionUpdate{AvailableCommandsUpdate: &acp.AvailableCommandsUpdate{AvailableCommands: list}})
		}
	}
	return cmds
}
