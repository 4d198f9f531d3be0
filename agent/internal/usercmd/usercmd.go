// Package usercmd reads custom slash commands: Markdown files whose body is
// a prompt, with optional YAML-style frontmatter (description,
// argument-hint, model, allowed-tools), as Claude Code, Codex and OpenCode
// keep them. acpd reads its own directories (.acpd/commands in the
// project, commands in acpd's config directory) and, read-only, those of
// the agents people switch from (.claude/commands, ~/.claude/commands,
// Codex's prompts directory), so their commands work unchanged.
//
// A command's name is its file name without ".md" (files in
// subdirectories are "dir:name"). The first source in precedence order
// that defines a name keeps it; a later one with the same name is offered
// under its source's prefix ("user:review"), so nothing is hidden. Names
// of acpd's own commands are reserved the same way.
//
// The package keeps no state: [Load] reads the directories each time (a
// few directory reads, cheap enough for every prompt), so a changed file
// is seen on the next prompt. Its functions are safe for concurrent use.
package usercmd

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"acpd/acp"
	"acpd/agent/internal/frontmatter"
)

// Source is a directory of commands.
type Source struct {
	// Dir is the directory ("" or missing: no commands).
	Dir string
	// Prefix names the source in a namespaced name ("project", "user",
	// "claude", "codex", …).
	Prefix string
}

// Sources are the directories of commands for a project rooted at root,
// most precedent first: acpd's project and user directories, then Claude
// Code's project and user directories, then Codex's prompts ($CODEX_HOME,
// else ~/.codex). configDir is acpd's config directory; home the user's
// home; getenv reads CODEX_HOME.
func Sources(root, configDir, home string, getenv func(string) string) []Source {
	var out []Source
	add := func(dir, prefix string) {
		if dir != "" {
			out = append(out, Source{Dir: dir, Prefix: prefix})
		}
	}
	if root != "" {
		add(filepath.Join(root, ".acpd", "commands"), "project")
	}
	if configDir != "" {
		add(filepath.Join(configDir, "commands"), "user")
	}
	if root != "" {
		add(filepath.Join(root, ".claude", "commands"), "claude")
	}
	if home != "" {
		add(filepath.Join(home, ".claude", "commands"), "claude-user")
	}
	codex := ""
	if getenv != nil {
		codex = getenv("CODEX_HOME")
	}
	if codex == "" && home != "" {
		codex = filepath.Join(home, ".codex")
	}
	if codex != "" {
		add(filepath.Join(codex, "prompts"), "codex")
	}
	return out
}

// Command is one custom slash command.
type Command struct {
	// Name is what the user types after "/".
	Name string
	// Description and ArgumentHint are shown by the editor.
	Description, ArgumentHint string
	// Model, when set, is the model that answers the command's turn
	// ("provider/model", or a bare id of the session's provider);
	// AllowedTools the tools it names. acpd shows both in the command's
	// description; it does not widen permissions for a file's say-so.
	Model        string
	AllowedTools []string
	// Body is the prompt, placeholders unexpanded.
	Body string
	// Path is the file it came from.
	Path string
}

// maxFile caps one command file; larger ones are skipped.
const maxFile = 256 << 10

// maxDepth bounds the subdirectories read under a source.
const maxDepth = 3

// Load reads the commands of sources, in precedence order, with reserved
// names (acpd's own commands) namespaced like clashes. Unreadable or
// oversized files are skipped.
func Load(sources []Source, reserved []string) []Command {
	var out []Command
	taken := map[string]bool{}
	for _, r := range reserved {
		taken[r] = true
	}
	for _, src := range sources {
		for _, c := range read(src.Dir) {
			if taken[c.Name] {
				c.Name = src.Prefix + ":" + c.Name
				if taken[c.Name] {
					continue
				}
			}
			taken[c.Name] = true
			out = append(out, c)
		}
	}
	return out
}

// read is a source directory's commands, sorted by name.
func read(dir string) []Command {
	if dir == "" {
		return nil
	}
	var out []Command
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel != "." && (strings.Count(rel, string(filepath.Separator)) >= maxDepth || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".md") || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxFile {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil || !utf8.Valid(data) {
			return nil
		}
		name := strings.TrimSuffix(filepath.ToSlash(rel), ".md")
		name = strings.ReplaceAll(name, "/", ":")
		if !validName(name) {
			return nil
		}
		c := parse(string(data))
		c.Name, c.Path = name, p
		out = append(out, c)
		return nil
	})
	slices.SortFunc(out, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// validName accepts names a user can type: letters, digits, '-', '_',
// '.', ':'.
func validName(n string) bool {
	if n == "" || len(n) > 64 {
		return false
	}
	for _, r := range n {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.', r == ':':
		default:
			return false
		}
	}
	return true
}

// parse splits a command file into its frontmatter and body.
func parse(text string) Command {
	var c Command
	keys, body, _ := frontmatter.Split(text)
	c.Description, c.ArgumentHint, c.Model = keys["description"], keys["argument-hint"], keys["model"]
	if v := keys["allowed-tools"]; v != "" {
		for _, t := range strings.Split(strings.Trim(v, "[]"), ",") {
			if t = frontmatter.Unquote(strings.TrimSpace(t)); t != "" {
				c.AllowedTools = append(c.AllowedTools, t)
			}
		}
	}
	c.Body = strings.TrimSpace(body)
	if c.Description == "" {
		// The first line of the body, as Claude Code shows it.
		first, _, _ := strings.Cut(c.Body, "\n")
		c.Description = truncate(strings.TrimLeft(strings.TrimSpace(first), "# "), 100)
	}
	return c
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// Available is the commands as the editor is offered them.
func Available(cmds []Command) []acp.AvailableCommand {
	out := make([]acp.AvailableCommand, 0, len(cmds))
	for _, c := range cmds {
		desc := c.Description
		if c.Model != "" {
			desc += " (model " + c.Model + ")"
		}
		a := acp.AvailableCommand{Name: c.Name, Description: desc}
		if c.ArgumentHint != "" {
			a.Input = &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: c.ArgumentHint}}
		}
		out = append(out, a)
	}
	return out
}

// Find returns the command a prompt invokes ("/name args" in a single
// text block) and the arguments typed after its name.
func Find(cmds []Command, prompt []acp.ContentBlock) (Command, string, bool) {
	if len(prompt) == 0 || prompt[0].Text == nil {
		return Command{}, "", false
	}
	t := strings.TrimSpace(prompt[0].Text.Text)
	if !strings.HasPrefix(t, "/") {
		return Command{}, "", false
	}
	name, args, _ := strings.Cut(t[1:], " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], name[i:]+" "+args
	}
	for _, c := range cmds {
		if c.Name == name {
			return c, strings.TrimSpace(args), true
		}
	}
	return Command{}, "", false
}

// Expand is c's prompt for args: $ARGUMENTS is all of them, $1 … $9 each
// (split as a shell splits words, with quotes), unset ones empty. A body
// without $ARGUMENTS or a positional placeholder gets the arguments
// appended, so nothing the user typed is lost.
func Expand(c Command, args string) string {
	pos := splitArgs(args)
	used := false
	var b strings.Builder
	body := c.Body
	for i := 0; i < len(body); i++ {
		if body[i] != '$' {
			b.WriteByte(body[i])
			continue
		}
		rest := body[i+1:]
		switch {
		case strings.HasPrefix(rest, "ARGUMENTS"):
			b.WriteString(args)
			i += len("ARGUMENTS")
			used = true
		case len(rest) > 0 && rest[0] >= '1' && rest[0] <= '9':
			n := int(rest[0] - '0')
			if n <= len(pos) {
				b.WriteString(pos[n-1])
			}
			i++
			used = true
		default:
			b.WriteByte('$')
		}
	}
	out := b.String()
	if !used && args != "" {
		out += "\n\n" + args
	}
	return out
}

// splitArgs splits s into words as a shell does: whitespace separates,
// single and double quotes group (and are removed), a backslash escapes
// the next character outside single quotes.
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	in, quote, esc := false, byte(0), false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case esc:
			cur.WriteByte(ch)
			esc, in = false, true
		case ch == '\\' && quote != '\'':
			esc = true
		case quote != 0:
			if ch == quote {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '\'' || ch == '"':
			quote, in = ch, true
		case ch == ' ' || ch == '\t' || ch == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}
