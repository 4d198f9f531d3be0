// Package subagents reads custom sub-agent definitions: Markdown files
// with frontmatter `name`, `description`, optional `tools` (a comma- or
// space-separated list, acpd's tool names or Claude Code's: "Read, Grep,
// Glob") and `model` ("inherit", a provider/model reference, or Claude
// Code's sonnet, opus, haiku), whose body is the sub-agent's system
// prompt, as Claude Code keeps them in .claude/agents/. The task tool
// offers them to the model as agent types. Its functions keep no state.
package subagents

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"acpd/agent/internal/frontmatter"
	"acpd/internal/lazy"
)

// Agent is one sub-agent definition.
type Agent struct {
	Name, Description string
	// Tools are acpd tool names; nil means every tool the parent's mode
	// allows (Claude Code's default when tools is absent).
	Tools []string
	// Unknown are tool names of the file acpd has no tool for.
	Unknown []string
	// Model is "" (the parent's) or what the file says.
	Model string
	// Prompt is the body: the sub-agent's system prompt.
	Prompt string
	// Path is the definition's file.
	Path string
}

// Sources are the definition directories for a project rooted at root,
// most precedent first: the project's .acpd/agents and .claude/agents,
// then acpd's config directory's agents and ~/.claude/agents.
func Sources(root, configDir, home string) []string {
	var out []string
	if root != "" {
		out = append(out, filepath.Join(root, ".acpd", "agents"), filepath.Join(root, ".claude", "agents"))
	}
	if configDir != "" {
		out = append(out, filepath.Join(configDir, "agents"))
	}
	if home != "" {
		out = append(out, filepath.Join(home, ".claude", "agents"))
	}
	return out
}

// claudeTools maps Claude Code's tool names to acpd's.
var claudeTools = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"Read": "read_file", "Grep": "grep", "Glob": "glob", "LS": "list_dir",
		"Edit": "edit_file", "MultiEdit": "multi_edit", "Write": "write_file",
		"Bash": "run_command", "WebFetch": "web_fetch", "WebSearch": "web_search",
		"TodoWrite": "update_plan", "NotebookEdit": "", "Task": "",
	}
}}

// maxFile caps a definition file.
const maxFile = 256 << 10

// validName reports whether name is 1..64 bytes of [a-z0-9_-] starting
// with [a-z0-9] (checked by hand: the regular expression's 64 bounded
// repetitions compile to a program of tens of KiB at start-up).
func validName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || i > 0 && (c == '_' || c == '-')) {
			return false
		}
	}
	return true
}

// Load reads the definitions (*.md) of the source directories, the most
// precedent first: a later file with a name already taken is skipped, as
// is one without a valid name and a description. known reports whether
// acpd has a tool of that name.
func Load(sources []string, known func(string) bool) []Agent {
	var out []Agent
	seen := map[string]bool{}
	for _, src := range sources {
		entries, err := os.ReadDir(src)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			a, err := Read(filepath.Join(src, e.Name()), known)
			if err != nil || seen[a.Name] {
				continue
			}
			seen[a.Name] = true
			out = append(out, a)
		}
	}
	return out
}

// Read parses one definition file.
func Read(path string, known func(string) bool) (Agent, error) {
	keys, body, err := frontmatter.ReadFile(path, maxFile)
	if err != nil {
		return Agent{}, err
	}
	a := Agent{Name: strings.TrimSpace(keys["name"]), Description: strings.TrimSpace(keys["description"]), Prompt: body, Path: path}
	if !validName(a.Name) {
		return Agent{}, fmt.Errorf("%s: invalid name %q (lower case letters, digits, - and _)", path, a.Name)
	}
	if a.Description == "" {
		return Agent{}, fmt.Errorf("%s: no description", path)
	}
	if m := strings.TrimSpace(keys["model"]); m != "inherit" {
		a.Model = m
	}
	if t, ok := keys["tools"]; ok {
		a.Tools = []string{}
		for _, n := range strings.FieldsFunc(t, func(r rune) bool { return r == ',' || r == ' ' || r == '[' || r == ']' }) {
			n = strings.Trim(n, `"'`)
			if mapped, ok := claudeTools.Get()[n]; ok {
				n = mapped
			}
			switch {
			case n == "":
			case known != nil && !known(n):
				a.Unknown = append(a.Unknown, n)
			case !slices.Contains(a.Tools, n):
				a.Tools = append(a.Tools, n)
			}
		}
	}
	return a, nil
}

// ClaudeModel maps Claude Code's model aliases to Anthropic model IDs.
var ClaudeModel = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"sonnet": "claude-sonnet-4-5",
		"opus":   "claude-opus-4-5",
		"haiku":  "claude-haiku-4-5",
	}
}}
