// Package sysprompt builds acpd's system prompt from explicit inputs: the
// fixed text (Base), the session's environment facts (Facts, gathered once
// per session), the mode's explanation, the project's instruction files
// (AGENTS.md, CLAUDE.md, GEMINI.md from the working directory up to the
// project root, nearest first, capped at MaxInstructionBytes), the MCP
// servers' status and the configuration's own instructions.
//
// Build is pure: the same Input gives the same bytes, so a caller that
// keeps the prompt while its inputs stay the same keeps providers' prompt
// caches hitting. Facts and ProjectInstructions read the machine and the
// file system; they are safe for concurrent use.
package sysprompt

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"acpd/config"
	"acpd/permissions"
	"acpd/tools"
)

// Base is the fixed part of the system prompt: how acpd works.
const Base = `You are acpd, a coding agent. You work in the user's project through the tools you are given, inside their editor (or a terminal), and you answer in the editor's chat.

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

// ModeText says what the session's mode allows.
func ModeText(mode string) string {
	switch permissions.Mode(mode) {
	case permissions.ModePlan:
		return "plan: read-only. Edits and commands are refused (those tools are not offered). Explore with the read and search tools, settle open points you cannot decide yourself with ask_user (one question per call), produce the plan (update_plan), then ask the user to switch to another mode to carry it out."
	case permissions.ModeAutoEdit:
		return "auto-edit: reads and file edits inside the workspace are allowed; commands ask the user for approval."
	case permissions.ModeFull:
		return "full: tool calls run without asking, except for paths outside the workspace or in protected places."
	}
	return "ask: reads inside the workspace are free; file edits and commands ask the user for approval (a rejected call is final: do not retry it, ask what to do instead)."
}

// Git runs git with args in the session's directory and returns its
// standard output (acpd's hardened runner, package gitrun).
type Git func(ctx context.Context, args ...string) ([]byte, error)

// GitFacts describes the git repository git runs in: its branch and how
// many files have changes, or that it is not in a repository. It gives up
// after three seconds.
func GitFacts(ctx context.Context, git Git) string {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	run := func(args ...string) (string, error) {
		out, err := git(ctx, args...)
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

// Input is what the system prompt is built from.
type Input struct {
	// Mode is the session's permission mode (see permissions.Mode).
	Mode string
	// Facts are the environment facts (see Facts).
	Facts string
	// Cwd is the session's working directory, where the search for
	// project instruction files starts.
	Cwd string
	// MCPStatus describes the session's MCP servers; "" when there is
	// nothing to say.
	MCPStatus string
	// Instructions are the configuration's instructions; "" for none.
	Instructions string
	// Skills lists the installed skills (names and descriptions); "" for
	// none.
	Skills string
}

// Build returns the system prompt for in.
func Build(in Input) string {
	var b strings.Builder
	b.WriteString(Base)
	b.WriteString("\n\n# Environment\n")
	b.WriteString(in.Facts)
	fmt.Fprintf(&b, "Mode: %s\n", ModeText(in.Mode))
	if pi := ProjectInstructions(in.Cwd); pi != "" {
		b.WriteString("\n# Project instructions\n")
		b.WriteString("These files hold the project's instructions, nearest directory first. A file in a deeper directory wins over one above it for files under that directory; the user's own requests win over all of them. Before editing files in a subdirectory, check it for an AGENTS.md of its own.\n")
		b.WriteString(pi)
	}
	if in.MCPStatus != "" {
		b.WriteString("\n# MCP servers\n")
		b.WriteString(strings.TrimPrefix(in.MCPStatus, "\n"))
	}
	if in.Skills != "" {
		b.WriteString("\n# Skills\n")
		b.WriteString(in.Skills)
	}
	if in.Instructions != "" {
		b.WriteString("\n# Instructions from the user's configuration\n")
		b.WriteString(in.Instructions)
		b.WriteString("\n")
	}
	return b.String()
}

// Facts describes the machine and the workspace: the operating system,
// the shell of run_command, today's date, the working directory cwd, the
// additional workspace directories dirs and cwd's git repository (through
// git, which runs in cwd).
func Facts(ctx context.Context, cwd string, dirs []string, git Git) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Operating system: %s/%s\n", runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "Shell of run_command: %s\n", tools.Shell())
	fmt.Fprintf(&b, "Date at the session's start: %s\n", time.Now().Format("2006-01-02 (Monday)"))
	fmt.Fprintf(&b, "Working directory: %s\n", cwd)
	if len(dirs) > 0 {
		fmt.Fprintf(&b, "Additional workspace directories: %s\n", strings.Join(dirs, ", "))
	}
	fmt.Fprintf(&b, "Git repository: %s\n", GitFacts(ctx, git))
	return b.String()
}

// instructionFiles are the project instruction files read into the system
// prompt, in this order within one directory.
var instructionFiles = []string{"AGENTS.md", "CLAUDE.md", "GEMINI.md"}

// MaxInstructionBytes caps the project instructions in the system prompt.
const MaxInstructionBytes = 32 << 10

// ProjectInstructions collects instruction files from cwd up to the project
// root, nearest directory first, capped at MaxInstructionBytes. A file
// reached under several names (CLAUDE.md a link to AGENTS.md), or a copy of
// one already included, is included once.
func ProjectInstructions(cwd string) string {
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
			left := MaxInstructionBytes - b.Len()
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
