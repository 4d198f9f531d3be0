package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
	"acpd/permissions"
)

// Bounds on search tools' output.
const (
	maxGlobResults = 500
	maxGrepMatches = 200
	maxGrepLine    = 300
	maxListEntries = 1000
	maxGrepFile    = 8 << 20
)

// target is a resolved tool path.
type target struct {
	res  fs.Resolved
	perm permissions.Path
}

// resolve resolves a tool path against the session roots.
func (s *sess) resolve(p string) (target, error) {
	if p == "" {
		p = "."
	}
	r, err := s.roots.Resolve(p)
	if err != nil {
		return target{}, err
	}
	return target{res: r, perm: permissions.Path{Abs: r.Path, Rel: r.Rel, Inside: r.Inside()}}, nil
}

// display shows a path relative to the cwd when inside it.
func (s *sess) display(abs string) string {
	if rel, err := filepath.Rel(s.roots.Cwd(), abs); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return abs
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

// fileTool builds the shared shape of file tools: decode, resolve, authorize,
// run.
// decodeInput decodes a tool call's arguments strictly: field names match
// exactly, and unknown arguments are an error the model can correct (the
// schemas say additionalProperties: false).
func decodeInput[T any](tc *toolCall) (T, error) {
	var in T
	if err := acp.Unmarshal(tc.input, &in); err != nil {
		return in, err
	}
	dec := json.NewDecoder(bytes.NewReader(tc.input))
	dec.DisallowUnknownFields()
	err := dec.Decode(&in)
	return in, err
}

func pathTitle(verb string) func(json.RawMessage) string {
	return func(in json.RawMessage) string {
		var p struct {
			Path    string `json:"path"`
			Pattern string `json:"pattern"`
		}
		_ = json.Unmarshal(in, &p)
		switch {
		case p.Pattern != "" && p.Path != "":
			return fmt.Sprintf("%s %q in %s", verb, p.Pattern, p.Path)
		case p.Pattern != "":
			return fmt.Sprintf("%s %q", verb, p.Pattern)
		case p.Path != "":
			return verb + " " + p.Path
		}
		return verb
	}
}

// gate resolves the call's path and asks permission. ok=false means res is
// the tool's answer.
func (s *sess) gate(ctx context.Context, tc *toolCall, path string, kind acp.ToolKind, title string) (target, toolResult, bool) {
	t, err := s.resolve(path)
	if err != nil {
		return t, errResult("%v", err), false
	}
	upd := acp.ToolCallUpdate{Title: &title, Kind: &kind, RawInput: tc.input, Locations: []acp.ToolCallLocation{{Path: t.res.Path}}}
	if ok, why := s.authorize(ctx, tc, permissions.Call{Tool: tc.name, Paths: []permissions.Path{t.perm}}, upd); !ok {
		return t, errResult("%s", why), false
	}
	return t, toolResult{}, true
}

func (s *sess) location(ctx context.Context, tc *toolCall, path string, line int) {
	loc := acp.ToolCallLocation{Path: path}
	if line > 0 {
		l := uint32(line)
		loc.Line = &l
	}
	s.notify(s.a.baseContext(), acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(tc.id), Locations: []acp.ToolCallLocation{loc}}})
}

var readFileTool = &tool{
	def: model.ToolDef{
		Name:        "read_file",
		Description: "Read a text file. Returns numbered lines (cat -n style). Large files are read in windows: pass offset (1-based line) and limit (default 2000 lines).",
		InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string","description":"Absolute path, or relative to the working directory"},"offset":{"type":"integer","minimum":1,"description":"First line to read (1-based)"},"limit":{"type":"integer","minimum":1,"description":"Number of lines to read"}},"required":["path"],"additionalProperties":false}`),
	},
	kind:  acp.ToolKindRead,
	title: pathTitle("Read"),
	run: func(ctx context.Context, s *sess, tc *toolCall) toolResult {
		in, err := decodeInput[struct {
			Path   string `json:"path"`
			Offset int    `json:"offset"`
			Limit  int    `json:"limit"`
		}](tc)
		if err != nil {
			return errResult("invalid read_file arguments: %v", err)
		}
		t, res, ok := s.gate(ctx, tc, in.Path, acp.ToolKindRead, "Read "+in.Path)
		if !ok {
			return res
		}
		lines, err := s.broker.ReadLines(ctx, t.res.Path, in.Offset, in.Limit)
		if err != nil {
			return errResult("reading %s: %v", in.Path, err)
		}
		s.sawFile(t.res.Path)
		s.location(ctx, tc, t.res.Path, lines.FirstLine)
		var b strings.Builder
		for i, l := range lines.Lines {
			fmt.Fprintf(&b, "%6d\t%s\n", lines.FirstLine+i, l)
		}
		switch {
		case lines.TotalLines == 0:
			b.WriteString("(the file is empty)\n")
		case len(lines.Lines) == 0:
			fmt.Fprintf(&b, "(no lines at offset %d; the file has %d lines)\n", lines.FirstLine, lines.TotalLines)
		case lines.More:
			last := lines.FirstLine + len(lines.Lines) - 1
			fmt.Fprintf(&b, "(showing lines %d-%d of %d; read on with offset %d)\n", lines.FirstLine, last, lines.TotalLines, last+1)
		}
		return toolResult{text: b.String()}
	},
}

var writeFileTool = &tool{
	def: model.ToolDef{
		Name:        "write_file",
		Description: "Create a file or replace its whole content. To change part of an existing file prefer edit_file; an existing file must have been read first.",
		InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`),
	},
	kind:  acp.ToolKindEdit,
	title: pathTitle("Write"),
	run: func(ctx context.Context, s *sess, tc *toolCall) toolResult {
		in, err := decodeInput[struct {
			Path    string `json:"path"`
			Content string `json:"content"`
		}](tc)
		if err != nil {
			return errResult("invalid write_file arguments: %v", err)
		}
		t, res, ok := s.gate(ctx, tc, in.Path, acp.ToolKindEdit, "Write "+in.Path)
		if !ok {
			return res
		}
		prev, existed, err := s.broker.WriteFile(ctx, t.res.Path, in.Content)
		if err != nil {
			return errResult("writing %s: %v", in.Path, err)
		}
		s.sawFile(t.res.Path)
		d := &acp.Diff{Path: t.res.Path, NewText: in.Content}
		if existed {
			d.OldText = &prev
		}
		verb := "Created"
		if existed {
			verb = "Wrote"
		}
		return toolResult{
			text:    fmt.Sprintf("%s %s (%d bytes, %d lines).", verb, s.display(t.res.Path), len(in.Content), strings.Count(in.Content, "\n")),
			content: []acp.ToolCallContent{{Diff: d}},
		}
	},
}

// errEdit is an edit_file mismatch; its message goes to the model.
type errEdit struct{ msg string }

func (e errEdit) Error() string { return e.msg }

var editFileTool = &tool{
	def: model.ToolDef{
		Name:        "edit_file",
		Description: "Replace an exact string in a file. old_string must match the file exactly (including whitespace) and be unique unless replace_all is true; read the file first.",
		InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["path","old_string","new_string"],"additionalProperties":false}`),
	},
	kind:  acp.ToolKindEdit,
	title: pathTitle("Edit"),
	run: func(ctx context.Context, s *sess, tc *toolCall) toolResult {
		in, err := decodeInput[struct {
			Path       string `json:"path"`
			OldString  string `json:"old_string"`
			NewString  string `json:"new_string"`
			ReplaceAll bool   `json:"replace_all"`
		}](tc)
		if err != nil {
			return errResult("invalid edit_file arguments: %v", err)
		}
		if in.OldString == "" {
			return errResult("old_string is empty; use write_file to create a file")
		}
		if in.OldString == in.NewString {
			return errResult("old_string and new_string are the same; nothing to change")
		}
		t, res, ok := s.gate(ctx, tc, in.Path, acp.ToolKindEdit, "Edit "+in.Path)
		if !ok {
			return res
		}
		var count int
		prev, next, err := s.broker.EditFile(ctx, t.res.Path, func(old string) (string, error) {
			count = strings.Count(old, in.OldString)
			switch {
			case count == 0:
				return "", errEdit{"old_string was not found in the file; read the file again and copy the text exactly"}
			case count > 1 && !in.ReplaceAll:
				return "", errEdit{fmt.Sprintf("old_string occurs %d times; add surrounding context to make it unique, or set replace_all", count)}
			}
			if in.ReplaceAll {
				return strings.ReplaceAll(old, in.OldString, in.NewString), nil
			}
			return strings.Replace(old, in.OldString, in.NewString, 1), nil
		})
		if err != nil {
			var ee errEdit
			if errors.As(err, &ee) {
				return errResult("%s: %s", in.Path, ee.msg)
			}
			return errResult("editing %s: %v", in.Path, err)
		}
		line := strings.Count(prev[:strings.Index(prev, in.OldString)], "\n") + 1
		s.location(ctx, tc, t.res.Path, line)
		return toolResult{
			text:    fmt.Sprintf("Edited %s: replaced %d occurrence(s) (first at line %d).", s.display(t.res.Path), max(1, min(count, count)), line),
			content: []acp.ToolCallContent{{Diff: &acp.Diff{Path: t.res.Path, OldText: &prev, NewText: next}}},
		}
	},
}

var listDirTool = &tool{
	def: model.ToolDef{
		Name:        "list_dir",
		Description: "List a directory's entries (directories end with /).",
		InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`),
	},
	kind:  acp.ToolKindRead,
	title: pathTitle("List"),
	run: func(ctx context.Context, s *sess, tc *toolCall) toolResult {
		in, err := decodeInput[struct {
			Path string `json:"path"`
		}](tc)
		if err != nil {
			return errResult("invalid list_dir arguments: %v", err)
		}
		t, res, ok := s.gate(ctx, tc, in.Path, acp.ToolKindRead, "List "+in.Path)
		if !ok {
			return res
		}
		ents, err := os.ReadDir(t.res.Path)
		if err != nil {
			return errResult("listing %s: %v", in.Path, err)
		}
		var b strings.Builder
		for i, e := range ents {
			if i == maxListEntries {
				fmt.Fprintf(&b, "[… %d more entries]\n", len(ents)-i)
				break
			}
			name := e.Name()
			switch {
			case e.IsDir():
				name += "/"
			case e.Type()&iofs.ModeSymlink != 0:
				name += "@"
			}
			b.WriteString(name)
			b.WriteByte('\n')
		}
		if len(ents) == 0 {
			b.WriteString("(empty directory)\n")
		}
		return toolResult{text: b.String()}
	},
}

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
func (s *sess) searchWalker(ctx context.Context, root string) walker {
	var skip []string
	for _, d := range s.a.opts.Protected {
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

var globTool = &tool{
	def: model.ToolDef{
		Name:        "glob",
		Description: "Find files by name pattern (** matches any depth, e.g. **/*.go). Respects .gitignore. Paths are relative to the searched directory.",
		InputSchema: schema(`{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string","description":"Directory to search (default: the working directory)"}},"required":["pattern"],"additionalProperties":false}`),
	},
	kind:  acp.ToolKindSearch,
	title: pathTitle("Find"),
	run: func(ctx context.Context, s *sess, tc *toolCall) toolResult {
		in, err := decodeInput[struct {
			Pattern string `json:"pattern"`
			Path    string `json:"path"`
		}](tc)
		if err != nil {
			return errResult("invalid glob arguments: %v", err)
		}
		re, err := globRegexp(in.Pattern)
		if err != nil {
			return errResult("%v", err)
		}
		t, res, ok := s.gate(ctx, tc, in.Path, acp.ToolKindSearch, "Find "+in.Pattern)
		if !ok {
			return res
		}
		var found []string
		more := false
		err = s.searchWalker(ctx, t.res.Root).walk(t.res.Path, func(p string) bool {
			rel, _ := filepath.Rel(t.res.Path, p)
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
			return errResult("searching %s: %v", s.display(t.res.Path), err)
		}
		sort.Strings(found)
		if len(found) == 0 {
			return toolResult{text: "No files match."}
		}
		text := strings.Join(found, "\n") + "\n"
		if more {
			text += fmt.Sprintf("[stopped after %d files; narrow the pattern]\n", maxGlobResults)
		}
		return toolResult{text: text}
	},
}

var grepTool = &tool{
	def: model.ToolDef{
		Name:        "grep",
		Description: "Search file contents with a regular expression (Go RE2 syntax). Respects .gitignore and skips binary files. include filters file names with a glob such as *.go or **/*.{ts,tsx}.",
		InputSchema: schema(`{"type":"object","properties":{"pattern":{"type":"string"},"path":{"type":"string","description":"File or directory to search (default: the working directory)"},"include":{"type":"string"}},"required":["pattern"],"additionalProperties":false}`),
	},
	kind:  acp.ToolKindSearch,
	title: pathTitle("Search"),
	run: func(ctx context.Context, s *sess, tc *toolCall) toolResult {
		in, err := decodeInput[struct {
			Pattern string `json:"pattern"`
			Path    string `json:"path"`
			Include string `json:"include"`
		}](tc)
		if err != nil {
			return errResult("invalid grep arguments: %v", err)
		}
		re, err := regexp.Compile(in.Pattern)
		if err != nil {
			return errResult("invalid regular expression: %v", err)
		}
		var inc *regexp.Regexp
		if in.Include != "" {
			p := in.Include
			if !strings.Contains(p, "/") {
				p = "**/" + p
			}
			if inc, err = globRegexp(p); err != nil {
				return errResult("invalid include: %v", err)
			}
		}
		t, res, ok := s.gate(ctx, tc, in.Path, acp.ToolKindSearch, "Search "+in.Pattern)
		if !ok {
			return res
		}
		var b strings.Builder
		matches := 0
		more := false
		searchFile := func(p string) bool {
			rel := s.display(p)
			if inc != nil {
				r, _ := filepath.Rel(t.res.Path, p)
				if !inc.MatchString(filepath.ToSlash(r)) {
					return true
				}
			}
			f, err := os.Open(p)
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
					fmt.Fprintf(&b, "%s:%d: %s\n", rel, n, truncate(line, maxGrepLine))
				}
			}
			return ctx.Err() == nil
		}
		if st, err := os.Stat(t.res.Path); err == nil && !st.IsDir() {
			searchFile(t.res.Path)
		} else if err := s.searchWalker(ctx, t.res.Root).walk(t.res.Path, searchFile); err != nil {
			return errResult("searching %s: %v", s.display(t.res.Path), err)
		}
		if matches == 0 {
			return toolResult{text: "No matches."}
		}
		if more {
			fmt.Fprintf(&b, "[stopped after %d matches; narrow the pattern or the path]\n", maxGrepMatches)
		}
		return toolResult{text: b.String()}
	},
}
