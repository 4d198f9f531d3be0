package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	ignore "github.com/sabhiram/go-gitignore"

	"acpd/acp"
	"acpd/files"
	"acpd/internal/glob"
	"acpd/model"
)

// Bounds on search tools' output.
const (
	maxGlobResults = 500
	maxGrepMatches = 200
	maxGrepLine    = 300
	maxGrepFile    = 8 << 20
)

// tree is the searched tree, opened through the file broker
// (files.Broker.OpenTree): every file is read through an os.Root, so nothing a
// search reaches, symbolic links included, leaves the session root.
type tree struct {
	root *os.Root
	fsys fs.FS
	base string // the directory fsys is rooted at
	rel  string // the searched path in fsys ("." for base)
	// inRoot reports that base is a session root: the .gitignore files
	// between it and the searched path apply too.
	inRoot bool
	close  func() error
}

func openTree(env Env, res files.Resolved) (*tree, error) {
	root, rel, err := env.Files().OpenTree(res)
	if err != nil {
		return nil, err
	}
	return &tree{root: root, fsys: entryFS{root}, base: root.Name(), rel: rel, inRoot: res.Root != "", close: root.Close}, nil
}

// entryFS is a tree's file system: root's, except that every open is
// files.OpenEntryIn's, which refuses FIFOs, sockets and devices without
// blocking (os.Root's own FS would wait on a FIFO for a writer, and with it
// the turn). It offers Open and Stat only, so fs.ReadDir, fs.ReadFile and
// fs.WalkDir open through Open too.
type entryFS struct{ root *os.Root }

func (e entryFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return files.OpenEntryIn(e.root, name)
}

func (e entryFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	return e.root.Stat(filepath.FromSlash(name))
}

// searchTree gates a search of path (see gate) and opens its tree; when ok
// is false, res is the tool's answer.
func searchTree(ctx context.Context, env Env, c *Call, path, title string) (files.Resolved, *tree, Result, bool) {
	t, res, ok := gate(ctx, env, c, path, acp.ToolKindSearch, title)
	if !ok {
		return t, nil, res, false
	}
	tr, err := openTree(env, t)
	if err != nil {
		return t, nil, Errorf("searching %s: %v", display(env, t.Path), err), false
	}
	return t, tr, Result{}, true
}

// abs is the real path of p, a path in t.fsys.
func (t *tree) abs(p string) string { return filepath.Join(t.base, filepath.FromSlash(p)) }

// under is p, a path in t.fsys under t.rel, relative to t.rel.
func (t *tree) under(p string) string {
	if t.rel == "." {
		return p
	}
	if p == t.rel {
		return "."
	}
	return strings.TrimPrefix(p, t.rel+"/")
}

// absErr names the real path in a path error, as the os package would.
func (t *tree) absErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: t.abs(pe.Path), Err: pe.Err}
	}
	return err
}

// walker walks a tree, skipping .git, protected directories and what
// .gitignore files ignore.
type walker struct {
	ctx context.Context
	// skip are real paths of directories never entered (acpd's
	// configuration and state directories): the permission check covers
	// only the searched path, so a search must not reach into places that
	// always ask.
	skip []string
}

// searchWalker returns the walker for a search.
func searchWalker(ctx context.Context, o Options) walker {
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
	return walker{ctx: ctx, skip: skip}
}

// skipped reports whether the directory abs is .git or a protected directory.
// The comparisons ignore case, so case-insensitive file systems cannot be
// used to dodge them.
func (w walker) skipped(abs, name string) bool {
	if strings.EqualFold(name, ".git") {
		return true
	}
	return slices.ContainsFunc(w.skip, func(d string) bool { return strings.EqualFold(abs, d) })
}

type ignoreLevel struct {
	base string // a directory in the tree's file system
	gi   *ignore.GitIgnore
}

// gitignore compiles the .gitignore file of dir, a directory of t.
func (t *tree) gitignore(dir string) (*ignore.GitIgnore, bool) {
	data, err := fs.ReadFile(t.fsys, path.Join(dir, ".gitignore"))
	if err != nil {
		return nil, false
	}
	return ignore.CompileIgnoreLines(strings.Split(string(data), "\n")...), true
}

// walk calls f with the path (in t.fsys) of every regular file under t.rel
// that is not ignored; f returns false to stop.
func (w walker) walk(t *tree, f func(p string) bool) error {
	var levels []ignoreLevel
	if t.inRoot && t.rel != "." {
		// The .gitignore files of the directories above, from the root down.
		above := []string{"."}
		for d := path.Dir(t.rel); d != "."; d = path.Dir(d) {
			above = slices.Insert(above, 1, d)
		}
		for _, d := range above {
			if gi, ok := t.gitignore(d); ok {
				levels = append(levels, ignoreLevel{base: d, gi: gi})
			}
		}
	}
	stop := errors.New("stop")
	err := fs.WalkDir(t.fsys, t.rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == t.rel {
				return t.absErr(err)
			}
			return nil
		}
		if w.ctx.Err() != nil {
			return w.ctx.Err()
		}
		for len(levels) > 0 && !within(levels[len(levels)-1].base, p) {
			levels = levels[:len(levels)-1]
		}
		if p != t.rel && ignored(levels, p, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p != t.rel && w.skipped(t.abs(p), d.Name()) {
				return fs.SkipDir
			}
			if gi, ok := t.gitignore(p); ok {
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

// within reports whether p is dir or under it (slash paths of one files.FS).
func within(dir, p string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

func ignored(levels []ignoreLevel, p string, dir bool) bool {
	for _, l := range levels {
		rel := p
		if l.base != "." {
			if !strings.HasPrefix(p, l.base+"/") {
				continue
			}
			rel = p[len(l.base)+1:]
		}
		if dir {
			rel += "/"
		}
		if l.gi.MatchesPath(rel) {
			return true
		}
	}
	return false
}

// globInput is glob's arguments.
type globInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
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
			in, err := DecodeInput[globInput](c.Input)
			if err != nil {
				return Errorf("invalid glob arguments: %v", err)
			}
			pat, err := glob.Compile(in.Pattern)
			if err != nil {
				return Errorf("invalid pattern %q: %v", in.Pattern, err)
			}
			t, tr, res, ok := searchTree(ctx, env, c, in.Path, "Find "+in.Pattern)
			if !ok {
				return res
			}
			defer tr.close()
			var found []string
			more := false
			err = searchWalker(ctx, o).walk(tr, func(p string) bool {
				rel := tr.under(p)
				if pat.Match(rel) {
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

// grepInput is grep's arguments.
type grepInput struct {
	Pattern   string `json:"pattern"`
	Path      string `json:"path"`
	Include   string `json:"include"`
	FilesOnly bool   `json:"files_only"`
	Context   int    `json:"context"`
}

func grepTool(o Options) *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name: "grep",
			Description: "Search file contents, line by line, with a regular expression in Go's RE2 syntax (no lookaround or backreferences; (?i) makes it case-insensitive, \\b is a word boundary, escape literal ( [ . * with \\). " +
				"Respects .gitignore; skips binary files and files over 8 MB. include filters file names with a glob such as *.go or **/*.{ts,tsx}. " +
				"Output: one line per match, \"path:line: text\" (paths relative to the working directory, lines cut at 300 characters), at most 200 matches; " +
				"with context N, N lines around each match as \"path-line- text\" and groups separated by \"--\"; with files_only, only the paths of matching files (at most 500).",
			InputSchema: schema(`{"type":"object","properties":{"pattern":{"type":"string","description":"RE2 regular expression"},"path":{"type":"string","description":"File or directory to search (default: the working directory)"},"include":{"type":"string","description":"Glob of file names to search, such as *.go"},"files_only":{"type":"boolean","description":"List only the files that match"},"context":{"type":"integer","minimum":0,"maximum":10,"description":"Lines of context around each match (default 0)"}},"required":["pattern"],"additionalProperties":false}`),
		},
		Kind:     acp.ToolKindSearch,
		ReadOnly: true,
		Title:    pathTitle("Search"),
		Run: func(ctx context.Context, env Env, c *Call) Result {
			in, err := DecodeInput[grepInput](c.Input)
			if err != nil {
				return Errorf("invalid grep arguments: %v", err)
			}
			if in.Context < 0 || in.Context > 10 {
				return Errorf("context must be between 0 and 10, got %d", in.Context)
			}
			re, err := regexp.Compile(in.Pattern)
			if err != nil {
				return Errorf("invalid regular expression: %v", err)
			}
			var inc *glob.Pattern
			if in.Include != "" {
				p := in.Include
				if !strings.Contains(p, "/") {
					p = "**/" + p
				}
				g, err := glob.Compile(p)
				if err != nil {
					return Errorf("invalid include: %v", err)
				}
				inc = &g
			}
			t, tr, res, ok := searchTree(ctx, env, c, in.Path, "Search "+in.Pattern)
			if !ok {
				return res
			}
			defer tr.close()
			var b strings.Builder
			matches := 0
			more := false
			searchFile := func(p string) bool {
				if inc != nil && !inc.Match(tr.under(p)) {
					return true
				}
				f, err := files.OpenRegularIn(tr.root, p)
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
				rel := display(env, tr.abs(p))
				sc := bufio.NewScanner(br)
				sc.Buffer(make([]byte, 64<<10), 1<<20)
				var before []string // the context lines before the next match
				after, last := 0, 0 // context lines still to print; last line printed
				for n := 1; sc.Scan(); n++ {
					line := sc.Text()
					if re.MatchString(line) {
						limit := maxGrepMatches
						if in.FilesOnly {
							limit = maxGlobResults
						}
						if matches == limit {
							more = true
							return false
						}
						matches++
						if in.FilesOnly {
							fmt.Fprintf(&b, "%s\n", rel)
							return ctx.Err() == nil
						}
						if contiguous := last > 0 && n-len(before) <= last+1; in.Context > 0 && b.Len() > 0 && !contiguous {
							b.WriteString("--\n") // a new group of lines
						}
						for i, l := range before {
							fmt.Fprintf(&b, "%s-%d- %s\n", rel, n-len(before)+i, Truncate(l, maxGrepLine))
						}
						before = before[:0]
						fmt.Fprintf(&b, "%s:%d: %s\n", rel, n, Truncate(line, maxGrepLine))
						after, last = in.Context, n
						continue
					}
					switch {
					case after > 0:
						fmt.Fprintf(&b, "%s-%d- %s\n", rel, n, Truncate(line, maxGrepLine))
						after--
						last = n
					case in.Context > 0:
						if len(before) == in.Context {
							before = append(before[:0], before[1:]...)
						}
						before = append(before, line)
					}
				}
				return ctx.Err() == nil
			}
			if st, err := fs.Stat(tr.fsys, tr.rel); err == nil && !st.IsDir() {
				if !st.Mode().IsRegular() {
					return Errorf("%s is not a regular file (FIFOs, sockets and devices are refused)", display(env, t.Path))
				}
				searchFile(tr.rel)
			} else if err := searchWalker(ctx, o).walk(tr, searchFile); err != nil {
				return Errorf("searching %s: %v", display(env, t.Path), err)
			}
			if matches == 0 {
				return Result{Text: "No matches."}
			}
			if more {
				if in.FilesOnly {
					fmt.Fprintf(&b, "[stopped after %d files; narrow the pattern or the path]\n", maxGlobResults)
				} else {
					fmt.Fprintf(&b, "[stopped after %d matches; narrow the pattern or the path]\n", maxGrepMatches)
				}
			}
			return Result{Text: b.String()}
		},
	}
}
