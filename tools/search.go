package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	ignore "github.com/sabhiram/go-gitignore"

	"acpd/acp"
	"acpd/fs"
	"acpd/model"
)

// Bounds on search tools' output.
const (
	maxGlobResults = 500
	maxGrepMatches = 200
	maxGrepLine    = 300
	maxGrepFile    = 8 << 20
)

// walker walks a tree, skipping .git, protected directories and what
// .gitignore files ignore.
type walker struct {
	ctx context.Context
	// top is the session root containing the walked tree ("" if none): the
	// .gitignore files between it and the tree apply too.
	top string
	// skip are real paths of directories never entered (acpd's
	// configuration and state directories): the permission check covers
	// only the searched path, so a search must not reach into places that
	// always ask.
	skip []string
}

// searchWalker returns the walker for a search rooted in root (a session
// root, or "").
func searchWalker(ctx context.Context, o Options, root string) walker {
	var skip []string
	for _, d := range o.Protected {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		skip = append(skip, d)
		if r, err := filepath.EvalSymlinks(d); err == nil && r != d {
			skip = append(skip, r)
		}
	}
	return walker{ctx: ctx, top: root, skip: skip}
}

// skipped reports whether the directory p is .git or a protected directory.
// The comparisons ignore case, so case-insensitive file systems cannot be
// used to dodge them.
func (w walker) skipped(p, name string) bool {
	if strings.EqualFold(name, ".git") {
		return true
	}
	return slices.ContainsFunc(w.skip, func(d string) bool { return strings.EqualFold(p, d) })
}

type ignoreLevel struct {
	base string
	gi   *ignore.GitIgnore
}

// walk calls f for every regular file under root that is not ignored;
// f returns false to stop.
func (w walker) walk(root string, f func(path string) bool) error {
	var levels []ignoreLevel
	var above []string
	for d := root; w.top != "" && d != w.top && strings.HasPrefix(d, w.top+string(filepath.Separator)); {
		d = filepath.Dir(d)
		above = append(above, d)
	}
	for i := len(above) - 1; i >= 0; i-- {
		if gi, err := ignore.CompileIgnoreFile(filepath.Join(above[i], ".gitignore")); err == nil {
			levels = append(levels, ignoreLevel{base: above[i], gi: gi})
		}
	}
	stop := errors.New("stop")
	err := filepath.WalkDir(root, func(p string, d iofs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if w.ctx.Err() != nil {
			return w.ctx.Err()
		}
		for len(levels) > 0 && !strings.HasPrefix(p, levels[len(levels)-1].base+string(filepath.Separator)) && p != levels[len(levels)-1].base {
			levels = levels[:len(levels)-1]
		}
		if p != root && ignored(levels, p, d.IsDir()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p != root && w.skipped(p, d.Name()) {
				return filepath.SkipDir
			}
			if gi, err := ignore.CompileIgnoreFile(filepath.Join(p, ".gitignore")); err == nil {
				levels = append(levels, ignoreLevel{base: p, gi: gi})
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if !f(p) {
			return stop
		}
		return nil
	})
	if errors.Is(err, stop) {
		return nil
	}
	return err
}

func ignored(levels []ignoreLevel, p string, dir bool) bool {
	for _, l := range levels {
		rel, err := filepath.Rel(l.base, p)
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		if dir {
			rel += "/"
		}
		if l.gi.MatchesPath(rel) {
			return true
		}
	}
	return false
}

// globRegexp compiles a glob with ** (any depth), * and ? (within one path
// segment), and [...] classes into an anchored regular expression.
func globRegexp(pat string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		switch c {
		case '*':
			if i+1 < len(pat) && pat[i+1] == '*' {
				i++
				if i+1 < len(pat) && pat[i+1] == '/' {
					i++
					b.WriteString("(?:.*/)?")
				} else {
					b.WriteString(".*")
				}
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '[':
			j := strings.IndexByte(pat[i:], ']')
			if j < 0 {
				return nil, fmt.Errorf("unterminated [ in %q", pat)
			}
			cls := pat[i+1 : i+j]
			if strings.HasPrefix(cls, "!") {
				cls = "^" + cls[1:]
			}
			b.WriteString("[" + cls + "]")
			i += j
		case '{':
			j := strings.IndexByte(pat[i:], '}')
			if j < 0 {
				return nil, fmt.Errorf("unterminated { in %q", pat)
			}
			alts := strings.Split(pat[i+1:i+j], ",")
			for k := range alts {
				alts[k] = regexp.QuoteMeta(alts[k])
			}
			b.WriteString("(?:" + strings.Join(alts, "|") + ")")
			i += j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

func globTool(o Options) *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name:        "glob",
			Description: "Find files by name pattern (** matches any depth, e.g. **/*.go). Respects .gitignore. Paths are relative to the searched directory.",
			InputSchema: schema(`{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string","description":"Directory to search (default: the working directory)"}},"required":["pattern"],"additionalProperties":false}`),
		},
		Kind:     acp.ToolKindSearch,
		ReadOnly: true,
		Title:    pathTitle("Find"),
		Run: func(ctx context.Context, env Env, c *Call) Result {
			in, err := DecodeInput[struct {
				Pattern string `json:"pattern"`
				Path    string `json:"path"`
			}](c.Input)
			if err != nil {
				return Errorf("invalid glob arguments: %v", err)
			}
			re, err := globRegexp(in.Pattern)
			if err != nil {
				return Errorf("%v", err)
			}
			t, res, ok := gate(ctx, env, c, in.Path, acp.ToolKindSearch, "Find "+in.Pattern)
			if !ok {
				return res
			}
			var found []string
			more := false
			err = searchWalker(ctx, o, t.Root).walk(t.Path, func(p string) bool {
				rel, _ := filepath.Rel(t.Path, p)
				rel = filepath.ToSlash(rel)
				if re.MatchString(rel) {
					if len(found) == maxGlobResults {
						more = true
						return false
					}
					found = append(found, rel)
				}
				return true
			})
			if err != nil {
				return Errorf("searching %s: %v", display(env, t.Path), err)
			}
			sort.Strings(found)
			if len(found) == 0 {
				return Result{Text: "No files match."}
			}
			text := strings.Join(found, "\n") + "\n"
			if more {
				text += fmt.Sprintf("[stopped after %d files; narrow the pattern]\n", maxGlobResults)
			}
			return Result{Text: text}
		},
	}
}

func grepTool(o Options) *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name:        "grep",
			Description: "Search file contents with a regular expression (Go RE2 syntax). Respects .gitignore and skips binary files. include filters file names with a glob such as *.go or **/*.{ts,tsx}.",
			InputSchema: schema(`{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string","description":"File or directory to search (default: the working directory)"},"include":{"type":"string"}},"required":["pattern"],"additionalProperties":false}`),
		},
		Kind:     acp.ToolKindSearch,
		ReadOnly: true,
		Title:    pathTitle("Search"),
		Run: func(ctx context.Context, env Env, c *Call) Result {
			in, err := DecodeInput[struct {
				Pattern string `json:"pattern"`
				Path    string `json:"path"`
				Include string `json:"include"`
			}](c.Input)
			if err != nil {
				return Errorf("invalid grep arguments: %v", err)
			}
			re, err := regexp.Compile(in.Pattern)
			if err != nil {
				return Errorf("invalid regular expression: %v", err)
			}
			var inc *regexp.Regexp
			if in.Include != "" {
				p := in.Include
				if !strings.Contains(p, "/") {
					p = "**/" + p
				}
				if inc, err = globRegexp(p); err != nil {
					return Errorf("invalid include: %v", err)
				}
			}
			t, res, ok := gate(ctx, env, c, in.Path, acp.ToolKindSearch, "Search "+in.Pattern)
			if !ok {
				return res
			}
			var b strings.Builder
			matches := 0
			more := false
			searchFile := func(p string) bool {
				rel := display(env, p)
				if inc != nil {
					r, _ := filepath.Rel(t.Path, p)
					if !inc.MatchString(filepath.ToSlash(r)) {
						return true
					}
				}
				f, err := fs.OpenRegular(p)
				if err != nil {
					return true
				}
				defer f.Close()
				if st, err := f.Stat(); err != nil || st.Size() > maxGrepFile {
					return true
				}
				br := bufio.NewReaderSize(f, 64<<10)
				if head, _ := br.Peek(8 << 10); bytes.IndexByte(head, 0) >= 0 {
					return true
				}
				sc := bufio.NewScanner(br)
				sc.Buffer(make([]byte, 64<<10), 1<<20)
				for n := 1; sc.Scan(); n++ {
					line := sc.Text()
					if re.MatchString(line) {
						if matches == maxGrepMatches {
							more = true
							return false
						}
						matches++
						fmt.Fprintf(&b, "%s:%d: %s\n", rel, n, Truncate(line, maxGrepLine))
					}
				}
				return ctx.Err() == nil
			}
			if st, err := os.Stat(t.Path); err == nil && !st.IsDir() {
				if !st.Mode().IsRegular() {
					return Errorf("%s is not a regular file (FIFOs, sockets and devices are refused)", display(env, t.Path))
				}
				searchFile(t.Path)
			} else if err := searchWalker(ctx, o, t.Root).walk(t.Path, searchFile); err != nil {
				return Errorf("searching %s: %v", display(env, t.Path), err)
			}
			if matches == 0 {
				return Result{Text: "No matches."}
			}
			if more {
				fmt.Fprintf(&b, "[stopped after %d matches; narrow the pattern or the path]\n", maxGrepMatches)
			}
			return Result{Text: b.String()}
		},
	}
}
