package agent

import (
	"context"
	"slices"
	"strings"

	"acpd/agent/internal/skills"
	"acpd/agent/internal/sysprompt"
)

// systemPrompt is the session's system prompt (see package sysprompt). It
// is built once and kept byte for byte while its inputs other than the
// session's start stay the same (sysprompt.Cache), so providers' prompt
// caches keep hitting; what changes during the session (files changed outside the
// agent) reaches the model in reminders attached to messages instead.
func (s *sess) systemPrompt() string {
	in := sysprompt.Input{Mode: s.settings().Mode, Cwd: s.cwd, MCPStatus: s.mcp.StatusPrompt(), Instructions: s.cfg.Instructions,
		Skills: skills.Listing(s.currentSkills(), skills.ListingBudget)}
	return s.sysPrompt.Prompt(in, s.facts)
}

// facts gathers the session's environment facts (see sysprompt.Facts).
func (s *sess) facts() string {
	return sysprompt.Facts(s.a.baseContext(), s.cwd, s.dirs, s.quickGit)
}

// gatherFacts starts gathering the environment facts of the system
// prompt, which its first model request needs, on a goroutine the session
// waits for when it closes: a session with MCP servers calls it when they
// start (startMCP), so its git commands run while they connect.
func (s *sess) gatherFacts() {
	s.gathering.Go(func() { s.sysPrompt.Gather(s.facts) })
}

// changeReminder announces files changed outside the agent's file tools
// (by the user, another program or the agent's own commands) since the
// agent last read or wrote them: the newly changed ones, or with all every
// one not read again since. "" when there are none.
func (s *sess) changeReminder(all bool) string {
	fresh := s.broker.ChangedSince()
	s.mu.Lock()
	if s.changed == nil {
		s.changed = map[string]bool{}
	}
	for _, p := range fresh {
		s.changed[p] = true
	}
	list := fresh
	if all {
		list = list[:0:0]
		for p := range s.changed {
			list = append(list, p)
		}
	}
	s.mu.Unlock()
	mcp := s.mcp.Reminder()
	if len(list) == 0 {
		return mcp
	}
	list = slices.Clone(list)
	slices.Sort(list)
	r := "[acpd: these files changed outside the file tools since you last read or wrote them; read them again before editing them: " + strings.Join(list, ", ") + "]"
	if mcp != "" {
		r += "\n" + mcp
	}
	return r
}

// sawFile records that the agent read or wrote path, so it is no longer
// reported as changed outside the agent.
func (s *sess) sawFile(path string) {
	s.mu.Lock()
	delete(s.changed, path)
	s.mu.Unlock()
}

// readLinked reads a file a prompt links to through the file broker (so an
// unsaved buffer is what the user sees and attached) and records that the
// agent saw it.
func (s *sess) readLinked(ctx context.Context, path string) (string, error) {
	content, err := s.broker.ReadFile(ctx, path)
	if err == nil {
		s.sawFile(path)
	}
	return content, err
}
