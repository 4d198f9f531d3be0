// Package yamlsub reads the YAML of a skill's frontmatter: a subset of
// YAML 1.2 that is all such headers use, parsed into JSON-like values.
// It fails closed: what it cannot read with certainty (anchors, aliases,
// tags, complex keys, directives, several documents, multi-line flow
// collections, tabs outside quoted and block scalars, duplicate keys, keys
// that are not strings) is an error, never a guess. Whatever it accepts it
// reads as go.yaml.in/yaml/v3 does, which a differential fuzz target
// checks; the port of that parser's scalar scanning (folding, chomping,
// escapes) and its resolution of plain scalars is faithful.
//
// It exists so that acpd does not link a full YAML parser, whose package
// initialisation (tables, regular expressions) every acpd process paid
// for though only a skill loaded from an MCP server reads YAML.
// Its functions keep no state and are safe for concurrent use.
package yamlsub

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds the nesting of collections.
const maxDepth = 64

// maxKey bounds a key's length, as YAML bounds a simple key's.
const maxKey = 1024

// Object parses src, which must hold one YAML mapping (or nothing: an
// empty mapping), into objects (map[string]any), arrays ([]any), strings,
// float64 numbers, booleans and nil. Timestamps stay strings.
func Object(src string) (map[string]any, error) {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	if err := checkChars(src); err != nil {
		return nil, err
	}
	p := &parser{lines: strings.Split(src, "\n"), start: -1}
	if err := p.skipEmpty(); err != nil {
		return nil, err
	}
	if p.eof() {
		return map[string]any{}, nil
	}
	for _, l := range p.lines {
		if docMarker(l) || strings.HasPrefix(l, "%") {
			return nil, p.errf("document markers and directives are not supported")
		}
	}
	v, err := p.blockNode(p.indent(), -1, 0)
	if err != nil {
		return nil, err
	}
	if err := p.skipEmpty(); err != nil {
		return nil, err
	}
	if !p.eof() {
		return nil, p.errf("content after the top-level mapping")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("yaml: not a mapping")
	}
	return obj, nil
}

// checkChars rejects what YAML does not allow in a stream (control
// characters, invalid UTF-8, a byte order mark inside) and the line breaks
// YAML 1.1 knows besides LF (CR, NEL, LS, PS).
func checkChars(s string) error {
	for i, r := range s {
		switch {
		case r == utf8.RuneError:
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				return fmt.Errorf("yaml: invalid UTF-8 at byte %d", i)
			}
		case r == '\t' || r == '\n':
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0:
			return fmt.Errorf("yaml: control character %U at byte %d", r, i)
		case r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff || r >= 0xd800 && r < 0xe000:
			return fmt.Errorf("yaml: character %U at byte %d is not allowed", r, i)
		}
	}
	return nil
}

// docMarker reports whether line starts with a document marker.
func docMarker(l string) bool {
	return (strings.HasPrefix(l, "---") || strings.HasPrefix(l, "...")) && (len(l) == 3 || l[3] == ' ' || l[3] == '\t')
}

// parser walks src line by line. lines[k] holds line k without its line
// break; the last element is what follows the last break (the stream
// ends there, with no break of its own).
type parser struct {
	lines []string
	i     int // the current line
	// start, when not -1, is the column the current line's content is
	// taken to start at: a compact collection inside a sequence entry
	// ("- a: 1") starts after the dash.
	start int
}

func (p *parser) eof() bool {
	return p.i >= len(p.lines) || p.i == len(p.lines)-1 && p.lines[p.i] == ""
}

func (p *parser) errf(format string, args ...any) error {
	return fmt.Errorf("yaml: line %d: %s", p.i+1, fmt.Sprintf(format, args...))
}

// next moves to the following line.
func (p *parser) next() { p.i++; p.start = -1 }

// hasBreak reports whether line k ends with a line break.
func (p *parser) hasBreak(k int) bool { return k < len(p.lines)-1 }

// indent is the column the current line's content starts at.
func (p *parser) indent() int {
	if p.start >= 0 {
		return p.start
	}
	return spaces(p.lines[p.i])
}

func spaces(l string) int {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	return n
}

// skipEmpty moves past blank lines and comment lines. A tab in their
// indentation is an error.
func (p *parser) skipEmpty() error {
	for !p.eof() {
		l := p.lines[p.i]
		c := p.indent()
		if c < len(l) && l[c] == '\t' {
			return p.errf("a tab in indentation")
		}
		if c < len(l) && l[c] != '#' {
			return nil
		}
		p.next()
	}
	return nil
}

// blockNode parses the node whose first line is the current one, with
// its content at column col; parent is the column of the enclosing
// collection (-1 at the top).
func (p *parser) blockNode(col, parent, depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errf("nested too deeply")
	}
	text := p.lines[p.i][col:]
	switch {
	case isEntry(text):
		return p.sequence(col, depth+1)
	case text[0] == '[' || text[0] == '{':
		return p.inlineFlow(text, depth)
	}
	if _, _, ok, err := splitKey(text); err != nil {
		return nil, p.errf("%v", err)
	} else if ok {
		return p.mapping(col, depth+1)
	}
	// A scalar on a line of its own.
	return p.inlineValue(col, parent, depth)
}

// isEntry reports whether text starts a block sequence entry.
func isEntry(text string) bool { return text == "-" || strings.HasPrefix(text, "- ") }

// mapping parses a block mapping whose keys are at column col.
func (p *parser) mapping(col, depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errf("nested too deeply")
	}
	obj := map[string]any{}
	for {
		if more, err := p.entryAt(col, "mapping"); err != nil || !more {
			return obj, err
		}
		l := p.lines[p.i]
		text := l[col:]
		key, rest, ok, err := splitKey(text)
		if err != nil {
			return nil, p.errf("%v", err)
		}
		if !ok {
			return nil, p.errf("expected a key")
		}
		if _, dup := obj[key]; dup {
			return nil, p.errf("duplicate key %q", key)
		}
		v, err := p.value(len(l)-len(rest), col, depth, true)
		if err != nil {
			return nil, err
		}
		obj[key] = v
	}
}

// entryAt moves to the next line with content and reports whether it
// holds another entry of the collection (of kind, for the error) at
// column col: false at the end of the input or at a line less indented.
func (p *parser) entryAt(col int, kind string) (bool, error) {
	if err := p.skipEmpty(); err != nil {
		return false, err
	}
	if p.eof() {
		return false, nil
	}
	switch c := p.indent(); {
	case c < col:
		return false, nil
	case c > col:
		return false, p.errf("bad indentation of a %s entry", kind)
	}
	return true, nil
}

// sequence parses a block sequence whose dashes are at column col.
func (p *parser) sequence(col, depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.errf("nested too deeply")
	}
	arr := []any{}
	for {
		if more, err := p.entryAt(col, "sequence"); err != nil || !more {
			return arr, err
		}
		l := p.lines[p.i]
		if !isEntry(l[col:]) {
			// The end of a sequence at a mapping's column ("key:\n- a\nnext: b").
			return arr, nil
		}
		at := col + 1
		for at < len(l) && l[at] == ' ' {
			at++
		}
		if at < len(l) && l[at] == '\t' {
			return nil, p.errf("a tab after a sequence entry's dash")
		}
		var v any
		var err error
		if at == len(l) || l[at] == '#' {
			v, err = p.value(at, col, depth, false)
		} else {
			// The entry's content is a node starting at column at: a
			// compact mapping or sequence, or a scalar.
			text := l[at:]
			if text[0] == '[' || text[0] == '{' {
				v, err = p.value(at, col, depth, false)
			} else if isEntry(text) {
				p.start = at
				v, err = p.sequence(at, depth+1)
			} else if _, _, ok, kerr := splitKey(text); kerr != nil {
				return nil, p.errf("%v", kerr)
			} else if ok {
				p.start = at
				v, err = p.mapping(at, depth+1)
			} else {
				v, err = p.value(at, col, depth, false)
			}
		}
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
	}
}

// splitKey reads a mapping key at the start of text: a plain or quoted
// scalar on one line followed by ':' and a space or the line's end. ok is
// false when text is not a key; rest is what follows the colon.
func splitKey(text string) (key, rest string, ok bool, err error) {
	if text == "" {
		return "", "", false, nil
	}
	var after string
	switch c := text[0]; {
	case c == '"' || c == '\'':
		k, n, qerr := quotedLine(text)
		if qerr != nil {
			// Not a key then; the value scanner reports what is wrong.
			return "", "", false, nil
		}
		key, after = k, strings.TrimLeft(text[n:], " ")
		if !strings.HasPrefix(after, ":") {
			return "", "", false, nil
		}
	default:
		i := colonAt(text)
		if i < 0 {
			return "", "", false, nil
		}
		if j := commentAt(text); j >= 0 && j < i {
			return "", "", false, nil
		}
		k := strings.TrimRight(text[:i], " ")
		if strings.ContainsRune(k, '\t') {
			return "", "", false, errors.New("a tab in a key")
		}
		if k == "" || strings.ContainsRune("-?:,[]{}#&*!|>%@`", rune(k[0])) {
			return "", "", false, fmt.Errorf("unsupported key %q", k)
		}
		if s, isStr := resolve(k).(string); !isStr || k == "<<" {
			return "", "", false, fmt.Errorf("key %q is not a string", k)
		} else {
			key = s
		}
		after = text[i:]
	}
	if len(key) > maxKey {
		return "", "", false, errors.New("key too long")
	}
	rest = after[1:]
	if rest != "" && rest[0] != ' ' {
		if rest[0] == '\t' {
			return "", "", false, errors.New("a tab after a key")
		}
		return "", "", false, nil
	}
	return key, strings.TrimLeft(rest, " "), true, nil
}

// colonAt is the index of the first ':' in text followed by a space, a
// tab or the end; -1 if none.
func colonAt(text string) int {
	for i := 0; i < len(text); i++ {
		if text[i] == ':' && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\t') {
			return i
		}
	}
	return -1
}

// commentAt is the index of the first '#' in text that starts a comment
// (at the start or after a space or tab); -1 if none.
func commentAt(text string) int {
	for i := 0; i < len(text); i++ {
		if text[i] == '#' && (i == 0 || text[i-1] == ' ' || text[i-1] == '\t') {
			return i
		}
	}
	return -1
}

// value parses the value that starts at column at of the current line
// (after a key's colon or an entry's dash), inside the collection at
// column parent. With nothing but a comment there, the value is the
// block node on the following lines indented past parent (or, for a
// mapping's value, a sequence at parent's column), else null.
func (p *parser) value(at, parent, depth int, inMapping bool) (any, error) {
	l := p.lines[p.i]
	if at == len(l) || l[at] == '#' {
		p.next()
		if err := p.skipEmpty(); err != nil {
			return nil, err
		}
		if p.eof() {
			return nil, nil
		}
		c := p.indent()
		if c > parent {
			return p.blockNode(c, parent, depth)
		}
		if c == parent && inMapping && isEntry(p.lines[p.i][c:]) {
			return p.sequence(c, depth+1)
		}
		return nil, nil
	}
	return p.inlineValue(at, parent, depth)
}

// inlineValue parses the scalar or flow collection that starts at column
// at of the current line, inside the collection at column parent.
func (p *parser) inlineValue(at, parent, depth int) (any, error) {
	l := p.lines[p.i]
	text := l[at:]
	switch c := text[0]; c {
	case '|', '>':
		return p.blockScalar(at, parent)
	case '"', '\'':
		return p.quoted(at, parent)
	case '[', '{':
		return p.inlineFlow(text, depth)
	case '\t':
		return nil, p.errf("a tab before a value")
	}
	if isEntry(text) {
		return nil, p.errf("a sequence entry is not allowed here")
	}
	if strings.ContainsRune("?:,]}#&*!%@`", rune(text[0])) || text[0] == '-' && len(text) > 1 && text[1] == '\t' {
		return nil, p.errf("unsupported value %q", clip(text))
	}
	s, err := p.plain(at, parent)
	if err != nil {
		return nil, err
	}
	return resolve(s), nil
}

// inlineFlow parses a flow collection that ends on its line, then
// expects nothing but a comment after it.
func (p *parser) inlineFlow(text string, depth int) (any, error) {
	f := &flow{s: text}
	v, err := f.node(depth)
	if err != nil {
		return nil, p.errf("%v", err)
	}
	if err := endOfLine(f.s[f.i:]); err != nil {
		return nil, p.errf("after a flow collection: %v", err)
	}
	p.next()
	return v, nil
}

// endOfLine accepts what may follow a value on its line: spaces and a
// comment.
func endOfLine(rest string) error {
	t := strings.TrimLeft(rest, " ")
	switch {
	case t == "":
		return nil
	case t[0] == '#' && len(t) < len(rest):
		return nil
	case t[0] == '\t':
		return errors.New("a tab")
	}
	return fmt.Errorf("unexpected %q", clip(t))
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// plain scans a plain scalar in block context from column at of the
// current line, continuing onto lines indented past parent, as the YAML
// scanner does: line breaks fold to spaces, empty lines to newlines; a
// comment ends it. A ": " inside (a mapping where none is allowed) and
// tabs are errors.
func (p *parser) plain(at, parent int) (string, error) {
	var s strings.Builder
	indent := parent + 1
	pos := at
	breaks := 0 // line breaks seen since the last content: 0 on the same line
	for {
		l := p.lines[p.i]
		// Content of this line from pos.
		end := pos
		for end < len(l) {
			c := l[end]
			if c == '\t' {
				return "", p.errf("a tab in a plain scalar")
			}
			if c == ':' && (end+1 == len(l) || l[end+1] == ' ') {
				return "", p.errf("a mapping value is not allowed here")
			}
			if c == '#' && end > pos && l[end-1] == ' ' {
				break
			}
			end++
		}
		seg := strings.TrimRight(l[pos:end], " ")
		switch {
		case breaks == 0:
		case breaks == 1:
			s.WriteByte(' ')
		default:
			s.WriteString(strings.Repeat("\n", breaks-1))
		}
		s.WriteString(seg)
		if end < len(l) {
			// A comment ends the scalar.
			p.next()
			return s.String(), nil
		}
		// Look for a continuation line.
		breaks = 0
		k := p.i
		for {
			if !p.hasBreak(k) {
				p.i, p.start = len(p.lines), -1
				return s.String(), nil
			}
			k++
			breaks++
			nl := p.lines[k]
			c := spaces(nl)
			if c < len(nl) && nl[c] == '\t' {
				p.i, p.start = k, -1
				return "", p.errf("a tab in indentation")
			}
			if c == len(nl) {
				if k == len(p.lines)-1 {
					p.i, p.start = len(p.lines), -1
					return s.String(), nil
				}
				continue
			}
			if nl[c] == '#' || c < indent || docMarker(nl) {
				p.i, p.start = k, -1
				return s.String(), nil
			}
			p.i, p.start = k, -1
			pos = c
			break
		}
	}
}

// quoted scans a single- or double-quoted scalar from column at of the
// current line, onto following lines (each indented past parent) until
// its closing quote, folding as the YAML scanner does, then expects
// nothing but a comment after it on that line.
func (p *parser) quoted(at, parent int) (any, error) {
	q := &quoteScan{p: p, j: p.i, pos: at, parent: parent}
	s, err := q.scan()
	if err != nil {
		return nil, err
	}
	p.i, p.start = q.j, -1
	if err := endOfLine(p.lines[q.j][q.pos:]); err != nil {
		return nil, p.errf("after a quoted scalar: %v", err)
	}
	p.next()
	return s, nil
}

// quotedLine scans a quoted scalar that must close on its line (a key, a
// flow item): its value and the index just past the closing quote.
func quotedLine(text string) (string, int, error) {
	q := &quoteScan{p: &parser{lines: []string{text}}, parent: -1, oneLine: true}
	s, err := q.scan()
	if err != nil {
		return "", 0, err
	}
	return s, q.pos, nil
}

// quoteScan is the state of a quoted scalar's scan: it ports
// yaml_parser_scan_flow_scalar.
type quoteScan struct {
	p       *parser
	j, pos  int // line and byte in it
	parent  int
	oneLine bool
}

// cur is the byte at the scan position: 0 at the end of the stream, '\n'
// at a line's break.
func (q *quoteScan) cur() byte {
	l := q.p.lines[q.j]
	if q.pos < len(l) {
		return l[q.pos]
	}
	if q.p.hasBreak(q.j) {
		return '\n'
	}
	return 0
}

func (q *quoteScan) at(off int) byte {
	l := q.p.lines[q.j]
	if q.pos+off < len(l) {
		return l[q.pos+off]
	}
	if q.pos+off == len(l) && q.p.hasBreak(q.j) {
		return '\n'
	}
	return 0
}

// nextLine moves past the current line's break; a continuation line
// must be blank or indented past the enclosing collection.
func (q *quoteScan) nextLine() error {
	if q.oneLine {
		return errors.New("a quoted scalar must close on its line here")
	}
	q.j++
	q.pos = 0
	l := q.p.lines[q.j]
	if strings.TrimLeft(l, " \t") != "" && spaces(l) <= q.parent {
		return fmt.Errorf("yaml: line %d: a quoted scalar's continuation line is not indented", q.j+1)
	}
	return nil
}

func (q *quoteScan) scan() (string, error) {
	single := q.cur() == '\''
	q.pos++
	var s, whitespaces []byte
	// The line breaks since the last content: the first (leadingBreak)
	// and how many followed it (trailingBreaks).
	leadingBreak, trailingBreaks := false, 0
	for {
		c := q.cur()
		if c == 0 {
			return "", fmt.Errorf("yaml: line %d: a quoted scalar is not closed", q.j+1)
		}
		leadingBlanks := false
	content:
		for c = q.cur(); c != ' ' && c != '\t' && c != '\n' && c != 0; c = q.cur() {
			switch {
			case single && c == '\'' && q.at(1) == '\'':
				s = append(s, '\'')
				q.pos += 2
			case single && c == '\'', !single && c == '"':
				break content
			case !single && c == '\\' && q.at(1) == '\n':
				q.pos++
				if err := q.nextLine(); err != nil {
					return "", err
				}
				leadingBlanks = true
				break content
			case !single && c == '\\':
				var err error
				if s, err = q.escape(s); err != nil {
					return "", err
				}
			default:
				_, n := utf8.DecodeRuneInString(q.p.lines[q.j][q.pos:])
				s = append(s, q.p.lines[q.j][q.pos:q.pos+n]...)
				q.pos += n
			}
		}
		if c = q.cur(); single && c == '\'' || !single && c == '"' {
			q.pos++
			return string(s), nil
		}
		for c = q.cur(); c == ' ' || c == '\t' || c == '\n'; c = q.cur() {
			if c != '\n' {
				if !leadingBlanks {
					whitespaces = append(whitespaces, c)
				}
				q.pos++
				continue
			}
			if err := q.nextLine(); err != nil {
				return "", err
			}
			if !leadingBlanks {
				whitespaces = whitespaces[:0]
				leadingBreak = true
				leadingBlanks = true
			} else {
				trailingBreaks++
			}
		}
		if leadingBlanks {
			if leadingBreak && trailingBreaks == 0 {
				s = append(s, ' ')
			}
			for range trailingBreaks {
				s = append(s, '\n')
			}
			leadingBreak, trailingBreaks = false, 0
		} else {
			s = append(s, whitespaces...)
			whitespaces = whitespaces[:0]
		}
	}
}

// escape decodes the escape sequence at the scan position.
func (q *quoteScan) escape(s []byte) ([]byte, error) {
	bad := func(what string) error { return fmt.Errorf("yaml: line %d: %s", q.j+1, what) }
	n := 0
	switch q.at(1) {
	case '0':
		s = append(s, 0)
	case 'a':
		s = append(s, '\a')
	case 'b':
		s = append(s, '\b')
	case 't', '\t':
		s = append(s, '\t')
	case 'n':
		s = append(s, '\n')
	case 'v':
		s = append(s, '\v')
	case 'f':
		s = append(s, '\f')
	case 'r':
		s = append(s, '\r')
	case 'e':
		s = append(s, 0x1b)
	case ' ':
		s = append(s, ' ')
	case '"':
		s = append(s, '"')
	case '\'':
		s = append(s, '\'')
	case '\\':
		s = append(s, '\\')
	case 'N':
		s = append(s, "\u0085"...)
	case '_':
		s = append(s, "\u00a0"...)
	case 'L':
		s = append(s, "\u2028"...)
	case 'P':
		s = append(s, "\u2029"...)
	case 'x':
		n = 2
	case 'u':
		n = 4
	case 'U':
		n = 8
	default:
		return nil, bad("unknown escape character")
	}
	q.pos += 2
	if n == 0 {
		return s, nil
	}
	l := q.p.lines[q.j]
	if q.pos+n > len(l) {
		return nil, bad("did not find expected hexadecimal number")
	}
	v, err := strconv.ParseUint(l[q.pos:q.pos+n], 16, 32)
	if err != nil || strings.ContainsAny(l[q.pos:q.pos+n], "+-_xX") {
		return nil, bad("did not find expected hexadecimal number")
	}
	if v >= 0xd800 && v <= 0xdfff || v > 0x10ffff {
		return nil, bad("invalid Unicode character escape code")
	}
	q.pos += n
	return utf8.AppendRune(s, rune(v)), nil
}

// blockScalar scans a literal (|) or folded (>) block scalar whose
// header is at column at of the current line, inside the collection at
// column parent: it ports yaml_parser_scan_block_scalar.
func (p *parser) blockScalar(at, parent int) (any, error) {
	l := p.lines[p.i]
	literal := l[at] == '|'
	h := at + 1
	chomping, increment := 0, 0
	for range 2 {
		if h >= len(l) {
			break
		}
		switch c := l[h]; {
		case (c == '+' || c == '-') && chomping == 0:
			chomping = 1
			if c == '-' {
				chomping = -1
			}
			h++
		case c >= '1' && c <= '9' && increment == 0:
			increment = int(c - '0')
			h++
		case c == '0':
			return nil, p.errf("a block scalar's indentation indicator is 0")
		}
	}
	rest := l[h:]
	if t := strings.TrimLeft(rest, " "); t != "" && t[0] != '#' {
		return nil, p.errf("unexpected %q after a block scalar's header", clip(t))
	}
	if !p.hasBreak(p.i) {
		p.i, p.start = len(p.lines), -1
		return "", nil
	}
	indent := 0
	if increment > 0 {
		indent = max(parent, 0) + increment
	}
	b := &blockScan{p: p, j: p.i + 1}
	trailing, err := b.breaks(&indent, parent)
	if err != nil {
		return nil, err
	}
	var s strings.Builder
	leadingBreak := ""
	leadingBlank := false
	for b.col == indent && !b.atEnd() {
		line := p.lines[b.j]
		trailingBlank := line[b.col] == ' ' || line[b.col] == '\t'
		if !literal && !leadingBlank && !trailingBlank && leadingBreak != "" {
			if trailing == "" {
				s.WriteByte(' ')
			}
		} else {
			s.WriteString(leadingBreak)
		}
		leadingBreak = ""
		s.WriteString(trailing)
		trailing = ""
		leadingBlank = line[b.col] == ' ' || line[b.col] == '\t'
		s.WriteString(line[b.col:])
		if !p.hasBreak(b.j) {
			b.col = len(line)
			break
		}
		leadingBreak = "\n"
		b.j, b.col = b.j+1, 0
		if trailing, err = b.breaks(&indent, parent); err != nil {
			return nil, err
		}
	}
	if chomping != -1 {
		s.WriteString(leadingBreak)
	}
	if chomping == 1 {
		s.WriteString(trailing)
	}
	if b.atEnd() {
		p.i, p.start = len(p.lines), -1
	} else {
		p.i, p.start = b.j, -1
	}
	return s.String(), nil
}

// blockScan is the position of a block scalar's scan.
type blockScan struct {
	p      *parser
	j, col int
}

// atEnd reports whether the scan is at the end of the stream.
func (b *blockScan) atEnd() bool {
	return b.j >= len(b.p.lines) || b.j == len(b.p.lines)-1 && b.col >= len(b.p.lines[b.j])
}

// breaks ports yaml_parser_scan_block_scalar_breaks: it eats
// indentation and empty lines, returning their breaks, and settles the
// indentation if it is not known yet.
func (b *blockScan) breaks(indent *int, parent int) (string, error) {
	var out strings.Builder
	maxIndent := 0
	for {
		l := b.p.lines[b.j]
		b.col = 0
		for (*indent == 0 || b.col < *indent) && b.col < len(l) && l[b.col] == ' ' {
			b.col++
		}
		maxIndent = max(maxIndent, b.col)
		if (*indent == 0 || b.col < *indent) && b.col < len(l) && l[b.col] == '\t' {
			return "", fmt.Errorf("yaml: line %d: a tab where a block scalar's indentation is expected", b.j+1)
		}
		if b.col < len(l) || !b.p.hasBreak(b.j) {
			break
		}
		out.WriteByte('\n')
		b.j++
	}
	if *indent == 0 {
		*indent = max(maxIndent, parent+1, 1)
	}
	return out.String(), nil
}

// flow parses a flow collection that must end on its line.
type flow struct {
	s string
	i int
}

func (f *flow) ws() {
	for f.i < len(f.s) && f.s[f.i] == ' ' {
		f.i++
	}
}

func (f *flow) node(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deeply")
	}
	f.ws()
	if f.i >= len(f.s) {
		return nil, errors.New("a flow collection must close on its line")
	}
	switch c := f.s[f.i]; c {
	case '[':
		f.i++
		arr := []any{}
		f.ws()
		if f.i < len(f.s) && f.s[f.i] == ']' {
			f.i++
			return arr, nil
		}
		for {
			v, err := f.node(depth + 1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
			if done, err := f.sep(']'); err != nil || done {
				return arr, err
			}
		}
	case '{':
		f.i++
		obj := map[string]any{}
		f.ws()
		if f.i < len(f.s) && f.s[f.i] == '}' {
			f.i++
			return obj, nil
		}
		for {
			k, err := f.node(depth + 1)
			if err != nil {
				return nil, err
			}
			key, ok := k.(string)
			if !ok {
				return nil, errors.New("a flow mapping's key is not a string")
			}
			if _, dup := obj[key]; dup {
				return nil, fmt.Errorf("duplicate key %q", key)
			}
			f.ws()
			if !strings.HasPrefix(f.s[f.i:], ": ") {
				return nil, errors.New("expected ': ' after a flow mapping's key")
			}
			f.i += 2
			v, err := f.node(depth + 1)
			if err != nil {
				return nil, err
			}
			obj[key] = v
			if done, err := f.sep('}'); err != nil || done {
				return obj, err
			}
		}
	case '"', '\'':
		s, n, err := quotedLine(f.s[f.i:])
		if err != nil {
			return nil, err
		}
		f.i += n
		return s, nil
	}
	if c := f.s[f.i]; strings.ContainsRune("?:,[]{}#&*!|>%@`", rune(c)) ||
		c == '-' && (f.i+1 == len(f.s) || strings.ContainsRune(" ,[]{}", rune(f.s[f.i+1]))) {
		return nil, fmt.Errorf("unsupported flow item %q", clip(f.s[f.i:]))
	}
	start := f.i
	for f.i < len(f.s) && !strings.ContainsRune(",[]{}", rune(f.s[f.i])) {
		if c := f.s[f.i]; c == ':' {
			if f.i+1 == len(f.s) || f.s[f.i+1] == ' ' {
				break
			}
			return nil, fmt.Errorf("unsupported flow item %q", clip(f.s[start:]))
		} else if c == '#' || c == '?' || c == '\t' {
			return nil, fmt.Errorf("unsupported flow item %q", clip(f.s[start:]))
		}
		f.i++
	}
	return resolve(strings.TrimRight(f.s[start:f.i], " ")), nil
}

// sep reads what follows a flow item: a comma (and another item) or the
// collection's closing bracket.
func (f *flow) sep(closer byte) (done bool, err error) {
	f.ws()
	if f.i >= len(f.s) {
		return false, errors.New("a flow collection must close on its line")
	}
	switch f.s[f.i] {
	case closer:
		f.i++
		return true, nil
	case ',':
		f.i++
		f.ws()
		if f.i < len(f.s) && (f.s[f.i] == ']' || f.s[f.i] == '}' || f.s[f.i] == ',') {
			return false, errors.New("an empty flow item")
		}
		return false, nil
	}
	return false, fmt.Errorf("unexpected %q in a flow collection", clip(f.s[f.i:]))
}

// resolve gives a plain scalar its value as YAML's core schema (as
// go.yaml.in/yaml/v3 applies it) does: null, booleans, integers and
// floats (all as float64), else the string itself (timestamps included).
func resolve(s string) any {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return nil
	case "true", "True", "TRUE":
		return true
	case "false", "False", "FALSE":
		return false
	case ".nan", ".NaN", ".NAN":
		return math.NaN()
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF":
		return math.Inf(1)
	case "-.inf", "-.Inf", "-.INF":
		return math.Inf(-1)
	}
	switch c := s[0]; {
	case c == '.':
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	case c == '+' || c == '-' || c >= '0' && c <= '9':
		plain := strings.ReplaceAll(s, "_", "")
		if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return float64(i)
		}
		if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return float64(u)
		}
		if yamlFloat(plain) {
			if f, err := strconv.ParseFloat(plain, 64); err == nil {
				return f
			}
		}
		// (yaml.v3 goes on to try 0b, -0b, 0o and -0o in base 2 and 8:
		// base 0 above has read every such number already.)
	}
	return s
}

// yamlFloat matches ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$.
func yamlFloat(s string) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
