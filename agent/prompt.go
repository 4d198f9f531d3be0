package agent

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"acpd/acp"
	"acpd/config"
	"acpd/permissions"
	"acpd/tools"
)

// basePrompt is the fixed part of the system prompt: how acpd works.
const basePrompt = `You are acpd, a coding agent. You work in the user's project through the tools you are given, inside their editor (or a terminal), and you answer in the editor's chat.

# How to work
- Keep going until the task is fully resolved; end your turn only when it is done or you need the user. If something fails, find out why and try another way, rather than stopping or asking at the first obstacle.
- Never guess what a file contains: read it before you change it, and read enough around the place you change.
- Prefer the file and search tools (read_file, list_dir, glob, grep, edit_file) to shell equivalents (cat, ls, find, grep, sed). Calls you make in one response run in order, and independent reads run in parallel: batch them.
- Follow the project's conventions: look at neighbouring code, its style, naming, error handling and tests. Before using a library, check that the project already uses it; do not add dependencies without need.
- Make the smallest change that solves the task; do not reformat or refactor code you were not asked to touch.
- Verify your work with the project's own build, lint and tests, the narrowest first (the package or test you changed, then wider). Find the commands in AGENTS.md, the README and the build files; do not invent them.
- Never revert, reset, commit, push or discard changes you did not make unless the user asks; the working tree may hold the user's own work in progress.
- Never print, log or commit secrets (keys, tokens, passwords), and do not read credential files without need.
- For work of several steps, keep a plan with update_plan and update it as you go.

# How to answer
- Be concise and direct; skip preambles and summaries of what you are about to do. Use Markdown sparingly.
- Cite code as path:line (for example agent/turn.go:42) so the editor can link it.
- When you finish, say briefly what you changed and how you verified it, and anything left to do.`

// modeText says what the session's mode allows.
func modeText(mode string) string {
	switch permissions.Mode(mode) {
	case permissions.ModePlan:
		return "plan: read-only. Edits and commands are refused (those tools are not offered). Explore with the read and search tools, produce the plan (update_plan), then ask the user to switch to another mode to carry it out."
	case permissions.ModeAutoEdit:
		return "auto-edit: reads and file edits inside the workspace are allowed; commands ask the user for approval."
	case permissions.ModeFull:
		return "full: tool calls run without asking, except for paths outside the workspace or in protected places."
	}
	return "ask: reads inside the workspace are free; file edits and commands ask the user for approval (a rejected call is final: do not retry it, ask what to do instead)."
}

// gitFacts describes the git repository at dir: its branch and how many
// files have changes, or that dir is not in a repository.
func gitFacts(ctx context.Context, dir string, env []string) string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(env, "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := run("rev-parse", "--is-inside-work-tree"); err != nil || out != "true" {
		return "no (not a git repository)"
	}
	branch, _ := run("branch", "--show-current")
	if branch == "" {
		branch = "(detached HEAD)"
	}
	status, err := run("status", "--porcelain")
	changed := "unknown"
	if err == nil {
		n := 0
		if status != "" {
			n = strings.Count(status, "\n") + 1
		}
		changed = fmt.Sprint(n)
	}
	return fmt.Sprintf("yes, branch %s, %s changed or untracked files at the session's start", branch, changed)
}

// promptKey is what the system prompt depends on besides the session's
// start: a change of mode (or of the config's instructions, or of which
// MCP servers are unavailable) rebuilds it.
func (s *sess) promptKey() string {
	return s.settings().Mode + "\x00" + s.cfg.Instructions + "\x00" + s.mcpStatusPrompt()
}

// systemPrompt is the session's system prompt. It is built once and kept
// byte for byte while the mode stays the same, so providers' prompt caches
// keep hitting; what changes during the session (files changed outside the
// agent) reaches the model in reminders attached to messages instead.
func (s *sess) systemPrompt() string {
	key := s.promptKey()
	s.mu.Lock()
	if s.sysKey == key && s.sysPrompt != "" {
		defer s.mu.Unlock()
		return s.sysPrompt
	}
	facts := s.facts
	s.mu.Unlock()
	if facts == "" {
		facts = s.environmentFacts()
	}
	var b strings.Builder
	b.WriteString(basePrompt)
	b.WriteString("\n\n# Environment\n")
	b.WriteString(facts)
	fmt.Fprintf(&b, "Mode: %s\n", modeText(s.settings().Mode))
	if pi := projectInstructions(s.cwd); pi != "" {
		b.WriteString("\n# Project instructions\n")
		b.WriteString("These files hold the project's instructions, nearest directory first. A file in a deeper directory wins over one above it for files under that directory; the user's own requests win over all of them. Before editing files in a subdirectory, check it for an AGENTS.md of its own.\n")
		b.WriteString(pi)
	}
	if mcp := s.mcpStatusPrompt(); mcp != "" {
		b.WriteString("\n# MCP servers\n")
		b.WriteString(strings.TrimPrefix(mcp, "\n"))
	}
	if s.cfg.Instructions != "" {
		b.WriteString("\n# Instructions from the user's configuration\n")
		b.WriteString(s.cfg.Instructions)
		b.WriteString("\n")
	}
	text := b.String()
	s.mu.Lock()
	s.sysKey, s.sysPrompt, s.facts = key, text, facts
	s.mu.Unlock()
	return text
}

// environmentFacts describes the machine and the workspace.
func (s *sess) environmentFacts() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Operating system: %s/%s\n", runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "Shell of run_command: %s\n", tools.Shell())
	fmt.Fprintf(&b, "Date at the session's start: %s\n", time.Now().Format("2006-01-02 (Monday)"))
	fmt.Fprintf(&b, "Working directory: %s\n", s.cwd)
	if len(s.dirs) > 0 {
		fmt.Fprintf(&b, "Additional workspace directories: %s\n", strings.Join(s.dirs, ", "))
	}
	fmt.Fprintf(&b, "Git repository: %s\n", gitFacts(s.a.baseContext(), s.cwd, s.childEnv()))
	return b.String()
}

// instructionFiles are the project instruction files read into the system
// prompt, in this order within one directory.
var instructionFiles = []string{"AGENTS.md", "CLAUDE.md", "GEMINI.md"}

// maxInstructionBytes caps the project instructions in the system prompt.
const maxInstructionBytes = 32 << 10

// projectInstructions collects instruction files from cwd up to the project
// root, nearest directory first, capped at maxInstructionBytes. A file
// reached under several names (CLAUDE.md a link to AGENTS.md), or a copy of
// one already included, is included once.
func projectInstructions(cwd string) string {
	root := config.ProjectRoot(cwd)
	var b strings.Builder
	var seen []os.FileInfo
	bodies := map[string]bool{}
	dir := cwd
	for {
		for _, name := range instructionFiles {
			p := filepath.Join(dir, name)
			st, err := os.Stat(p)
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			dup := false
			for _, o := range seen {
				dup = dup || os.SameFile(o, st)
			}
			if dup {
				continue
			}
			seen = append(seen, st)
			data, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			body := string(bytes.TrimSpace(data))
			if body == "" || bodies[body] {
				continue
			}
			bodies[body] = true
			left := maxInstructionBytes - b.Len()
			if left <= 0 {
				return b.String()
			}
			if len(body) > left {
				body = tools.Truncate(body, left) + "\n[… instructions cut: the file is larger than acpd's limit]"
			}
			fmt.Fprintf(&b, "\n## %s\n\n%s\n", p, body)
		}
		if dir == root || dir == filepath.Dir(dir) {
			return b.String()
		}
		dir = filepath.Dir(dir)
	}
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
	mcp := s.mcpReminder()
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

// mcpReminder announces MCP resources the model read whose server reported
// a change since; "" when there are none.
func (s *sess) mcpReminder() string {
	t := s.mcpTools
	if t == nil {
		return ""
	}
	var list []string
	for _, r := range t.m.TakeUpdated() {
		list = append(list, r.Server+" "+r.URI)
	}
	if len(list) == 0 {
		return ""
	}
	return "[acpd: these MCP resources (server uri) changed since you read them; read them again with mcp_read_resource before relying on them: " + strings.Join(list, ", ") + "]"
}

// sawFile records that the agent read or wrote path, so it is no longer
// reported as changed outside the agent.
func (s *sess) sawFile(path string) {
	s.mu.Lock()
	delete(s.changed, path)
	s.mu.Unlock()
}

// maxLinkedBytes caps a file attached to a prompt by a resource link.
const maxLinkedBytes = 256 << 10

// linkedResource renders a prompt's resource link for the model: a file://
// link is read through the file broker (so an unsaved buffer is what the
// user sees and attached); other links are named only.
func (s *sess) linkedResource(ctx context.Context, l *acp.ResourceLink) string {
	u, err := url.Parse(l.URI)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return fmt.Sprintf("[Referenced resource: %s (%s)]", l.Name, l.URI)
	}
	content, err := s.broker.ReadFile(ctx, u.Path)
	if err != nil {
		return fmt.Sprintf("[Referenced file %s could not be read: %v]", u.Path, err)
	}
	s.sawFile(u.Path)
	if len(content) > maxLinkedBytes {
		content = tools.Truncate(content, maxLinkedBytes) + fmt.Sprintf("\n[… the file continues; %d bytes in all. Use read_file with an offset for the rest.]", len(content))
	}
	return fmt.Sprintf("<file path=%q>\n%s\n</file>", u.Path, content)
}
