// Package patch parses and applies patches in the apply_patch format that
// OpenAI's Codex models are trained to write:
//
//	*** Begin Patch
//	*** Add File: path            then the new file's lines, each prefixed "+"
//	*** Delete File: path
//	*** Update File: path
//	*** Move to: new/path         optional, right after Update File
//	@@ optional context line      starts a chunk; "@@" alone has no context
//	 unchanged line               " " context, "-" removed, "+" added
//	*** End of File               optional: the chunk's lines end the file
//	*** End Patch
//
// Parsing is lenient the way Codex's is: markers may carry surrounding
// whitespace, a heredoc wrapper (<<'EOF' … EOF) around the patch is removed,
// a blank line inside a chunk is an empty context line, and the first chunk
// of an Update File may omit its "@@". Paths are kept as written; resolving
// them is the caller's business.
//
// Applying locates each chunk's old lines in the file at or after the end of
// the previous chunk with [Seek], which tries an exact match, then ignores
// trailing whitespace, then surrounding whitespace, then typographic
// punctuation. Files keep their own line endings (CRLF stays CRLF) and byte
// order mark; an updated file always ends with a newline.
package patch

import (
	"fmt"
	"strings"
)

// Op is what a hunk does to its file.
type Op string

const (
	Add    Op = "add"
	Delete Op = "delete"
	Update Op = "update"
)

// Hunk is one file operation of a patch.
type Hunk struct {
	Op   Op     `json:"op"`
	Path string `json:"path"`
	// MoveTo is the new path of an Update that renames its file ("" if none).
	MoveTo string `json:"move_to,omitempty"`
	// Content is an Add's whole new content (each line ends with "\n").
	Content string `json:"content,omitempty"`
	// Chunks are an Update's changes, in file order.
	Chunks []Chunk `json:"chunks,omitempty"`
}

// Chunk is one contiguous change of an Update.
type Chunk struct {
	// Context is the line after "@@ " that the old lines follow (often a
	// function or class header); "" when the chunk has none.
	Context string `json:"context,omitempty"`
	// Old are the lines the chunk replaces (context and removed lines), New
	// the lines that replace them (context and added lines).
	Old []string `json:"old"`
	New []string `json:"new"`
	// EOF reports that Old ends the file ("*** End of File").
	EOF bool `json:"eof,omitempty"`
}

// Patch is a parsed patch.
type Patch struct {
	Hunks []Hunk `json:"hunks"`
}

// SyntaxError is a patch that does not follow the grammar. Its message is
// written for the model that produced the patch.
type SyntaxError struct {
	// Line is the 1-based line of the patch text at fault (0: the whole
	// patch).
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Line == 0 {
		return "invalid patch: " + e.Msg
	}
	return fmt.Sprintf("invalid patch at line %d: %s", e.Line, e.Msg)
}

const (
	beginMarker  = "*** Begin Patch"
	endMarker    = "*** End Patch"
	addMarker    = "*** Add File: "
	deleteMarker = "*** Delete File: "
	updateMarker = "*** Update File: "
	moveMarker   = "*** Move to: "
	eofMarker    = "*** End of File"
)

// Parse parses patch text. A patch with no hunks is an error: it would do
// nothing, which is never what its author meant.
func Parse(text string) (*Patch, error) {
	lines := splitLines(strings.TrimSpace(text))
	first := 1 // patch line number of lines[0]
	if len(lines) >= 4 && isHeredocStart(lines[0]) && strings.HasSuffix(strings.TrimSpace(lines[len(lines)-1]), "EOF") {
		lines = lines[1 : len(lines)-1]
		first = 2
	}
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != beginMarker {
		return nil, &SyntaxError{Msg: "the first line of the patch must be '" + beginMarker + "'"}
	}
	if len(lines) < 2 || strings.TrimSpace(lines[len(lines)-1]) != endMarker {
		return nil, &SyntaxError{Msg: "the last line of the patch must be '" + endMarker + "'"}
	}
	p := &parser{lines: lines[1 : len(lines)-1], base: first + 1}
	out := &Patch{Hunks: []Hunk{}}
	for p.i < len(p.lines) {
		if strings.TrimSpace(p.lines[p.i]) == "" {
			p.i++
			continue
		}
		h, err := p.hunk()
		if err != nil {
			return nil, err
		}
		out.Hunks = append(out.Hunks, h)
	}
	if len(out.Hunks) == 0 {
		return nil, &SyntaxError{Msg: "the patch has no file operations (expected '" + addMarker + "', '" + deleteMarker + "' or '" + updateMarker + "')"}
	}
	return out, nil
}

func isHeredocStart(l string) bool {
	switch strings.TrimSpace(l) {
	case "<<EOF", "<<'EOF'", `<<"EOF"`:
		return true
	}
	return false
}

// splitLines splits on "\n" and drops a "\r" before it.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	ls := strings.Split(s, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\r")
	}
	return ls
}

type parser struct {
	lines []string
	base  int // patch line number of lines[0]
	i     int
}

func (p *parser) errf(i int, format string, args ...any) error {
	return &SyntaxError{Line: p.base + i, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) path(i int, s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", p.errf(i, "the file path is empty")
	}
	return s, nil
}

func (p *parser) hunk() (Hunk, error) {
	start := p.i
	head := strings.TrimSpace(p.lines[p.i])
	p.i++
	switch {
	case strings.HasPrefix(head+" ", addMarker):
		path, err := p.path(start, strings.TrimPrefix(head, strings.TrimSpace(addMarker)))
		if err != nil {
			return Hunk{}, err
		}
		var b strings.Builder
		for p.i < len(p.lines) && strings.HasPrefix(p.lines[p.i], "+") {
			b.WriteString(p.lines[p.i][1:])
			b.WriteByte('\n')
			p.i++
		}
		return Hunk{Op: Add, Path: path, Content: b.String()}, nil
	case strings.HasPrefix(head+" ", deleteMarker):
		path, err := p.path(start, strings.TrimPrefix(head, strings.TrimSpace(deleteMarker)))
		if err != nil {
			return Hunk{}, err
		}
		return Hunk{Op: Delete, Path: path}, nil
	case strings.HasPrefix(head+" ", updateMarker):
		path, err := p.path(start, strings.TrimPrefix(head, strings.TrimSpace(updateMarker)))
		if err != nil {
			return Hunk{}, err
		}
		h := Hunk{Op: Update, Path: path}
		if p.i < len(p.lines) {
			if l := strings.TrimSpace(p.lines[p.i]); strings.HasPrefix(l+" ", moveMarker) {
				if h.MoveTo, err = p.path(p.i, strings.TrimPrefix(l, strings.TrimSpace(moveMarker))); err != nil {
					return Hunk{}, err
				}
				p.i++
			}
		}
		for p.i < len(p.lines) {
			l := p.lines[p.i]
			if strings.TrimSpace(l) == "" {
				p.i++ // blank lines between chunks
				continue
			}
			if strings.HasPrefix(l, "*") {
				break // the next hunk, or a stray marker reported there
			}
			c, err := p.chunk(len(h.Chunks) == 0)
			if err != nil {
				return Hunk{}, err
			}
			h.Chunks = append(h.Chunks, c)
		}
		if len(h.Chunks) == 0 {
			return Hunk{}, p.errf(start, "the Update File hunk for %q has no changes", path)
		}
		return h, nil
	}
	return Hunk{}, p.errf(start, "%q is not a valid hunk header; valid headers are '%s{path}', '%s{path}' and '%s{path}'", head, addMarker, deleteMarker, updateMarker)
}

// chunk parses one chunk; first reports that it is the first of its hunk
// (which may omit "@@").
func (p *parser) chunk(first bool) (Chunk, error) {
	var c Chunk
	l := p.lines[p.i]
	switch t := strings.TrimRight(l, " \t"); {
	case t == "@@":
		p.i++
	case strings.HasPrefix(l, "@@ "):
		c.Context = l[3:]
		if strings.TrimSpace(c.Context) == "" {
			c.Context = ""
		}
		p.i++
	case !first:
		return c, p.errf(p.i, "expected a chunk to start with '@@' (optionally followed by a context line), got %q", l)
	}
	c.Old, c.New = []string{}, []string{}
	n := 0
	for ; p.i < len(p.lines); p.i++ {
		l := p.lines[p.i]
		if strings.TrimSpace(l) == eofMarker {
			if n == 0 {
				return c, p.errf(p.i, "a chunk has no lines before '%s'", eofMarker)
			}
			c.EOF = true
			p.i++
			return c, nil
		}
		if l == "" {
			c.Old = append(c.Old, "")
			c.New = append(c.New, "")
			n++
			continue
		}
		switch l[0] {
		case ' ':
			c.Old = append(c.Old, l[1:])
			c.New = append(c.New, l[1:])
		case '-':
			c.Old = append(c.Old, l[1:])
		case '+':
			c.New = append(c.New, l[1:])
		default:
			if n == 0 {
				return c, p.errf(p.i, "unexpected line %q in a chunk; every line starts with ' ' (context), '+' (added) or '-' (removed)", l)
			}
			return c, nil // the next chunk or hunk
		}
		n++
	}
	if n == 0 {
		return c, p.errf(p.i-1, "a chunk has no lines")
	}
	return c, nil
}

// String formats the patch in the canonical grammar; Parse(p.String())
// yields p again.
func (p *Patch) String() string {
	var b strings.Builder
	b.WriteString(beginMarker + "\n")
	for _, h := range p.Hunks {
		switch h.Op {
		case Add:
			b.WriteString(addMarker + h.Path + "\n")
			for _, l := range splitLines(strings.TrimSuffix(h.Content, "\n")) {
				b.WriteString("+" + l + "\n")
			}
		case Delete:
			b.WriteString(deleteMarker + h.Path + "\n")
		case Update:
			b.WriteString(updateMarker + h.Path + "\n")
			if h.MoveTo != "" {
				b.WriteString(moveMarker + h.MoveTo + "\n")
			}
			for _, c := range h.Chunks {
				if c.Context != "" {
					b.WriteString("@@ " + c.Context + "\n")
				} else {
					b.WriteString("@@\n")
				}
				for _, l := range diffLines(c.Old, c.New) {
					b.WriteString(l + "\n")
				}
				if c.EOF {
					b.WriteString(eofMarker + "\n")
				}
			}
		}
	}
	b.WriteString(endMarker + "\n")
	return b.String()
}

// diffLines renders old→new as chunk lines: the common prefix and suffix as
// context, the middle as removals then additions.
func diffLines(old, new []string) []string {
	pre := 0
	for pre < len(old) && pre < len(new) && old[pre] == new[pre] {
		pre++
	}
	suf := 0
	for suf < len(old)-pre && suf < len(new)-pre && old[len(old)-1-suf] == new[len(new)-1-suf] {
		suf++
	}
	var out []string
	for _, l := range old[:pre] {
		out = append(out, " "+l)
	}
	for _, l := range old[pre : len(old)-suf] {
		out = append(out, "-"+l)
	}
	for _, l := range new[pre : len(new)-suf] {
		out = append(out, "+"+l)
	}
	for _, l := range old[len(old)-suf:] {
		out = append(out, " "+l)
	}
	return out
}
