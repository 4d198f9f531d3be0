package config

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/pelletier/go-toml/v2"
)

// maxNesting bounds the arrays and inline tables inside each other that
// buildIndex follows.
const maxNesting = 1000

// buildIndex records the position of every key, table header and array
// element of data, a document go-toml's decoder has accepted as TOML.
//
// go-toml's stable API reports positions only in its errors, so the index
// is found by a scanner of acpd's own: not a TOML parser (the decoder has
// checked the syntax), it reads just enough (keys, headers, strings,
// arrays, inline tables, comments) to know where each key starts and what
// it is called. It fails, rather than guess, at anything it does not
// expect.
func buildIndex(data []byte) (*posIndex, error) {
	x := &posIndex{at: map[string]pos{}, lines: []int{0}}
	for i, c := range data {
		if c == '\n' {
			x.lines = append(x.lines, i+1)
		}
	}
	s := &keyScanner{data: data, x: x}
	if err := s.document(); err != nil {
		line, col := x.posAt(s.i)
		return nil, fmt.Errorf("%d:%d: cannot index the keys: %w", line, col, err)
	}
	return x, nil
}

// posAt returns the line and column of offset off.
func (x *posIndex) posAt(off int) (line, col int) {
	line = sort.Search(len(x.lines), func(i int) bool { return x.lines[i] > off }) // >= 1
	return line, off - x.lines[line-1] + 1
}

func (x *posIndex) addAt(path []seg, off int) {
	line, col := x.posAt(off)
	x.add(path, pos{line, col})
}

// keyScanner walks a TOML document, recording its keys in x.
type keyScanner struct {
	data  []byte
	i     int // the next byte
	x     *posIndex
	depth int
}

// keyPart is one part of a dotted key and the offset of its first byte
// (a quoted key's opening quote).
type keyPart struct {
	name string
	off  int
}

var errUnexpected = errors.New("unexpected input")

func (s *keyScanner) peek() byte {
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

// skipSpace skips spaces and tabs.
func (s *keyScanner) skipSpace() {
	for s.i < len(s.data) && (s.data[s.i] == ' ' || s.data[s.i] == '\t') {
		s.i++
	}
}

// skipBlank skips whitespace, newlines and comments.
func (s *keyScanner) skipBlank() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		case '#':
			for s.i < len(s.data) && s.data[s.i] != '\n' {
				s.i++
			}
		default:
			return
		}
	}
}

// document records every expression's keys.
func (s *keyScanner) document() error {
	arrays := map[string]int{} // element counts of arrays of tables
	var table []seg
	for {
		s.skipBlank()
		if s.i >= len(s.data) {
			return nil
		}
		if s.peek() != '[' {
			parts, err := s.key()
			if err != nil {
				return err
			}
			if err := s.keyValue(slices.Clone(table), parts); err != nil {
				return err
			}
			continue
		}
		s.i++
		array := s.peek() == '['
		if array {
			s.i++
		}
		parts, err := s.key()
		if err != nil {
			return err
		}
		for range 1 + btoi(array) {
			if s.peek() != ']' {
				return errUnexpected
			}
			s.i++
		}
		table = table[:0]
		for _, k := range parts {
			if len(table) > 0 {
				// Inside an array of tables a header continues its last
				// element.
				if n := arrays[segString(table)]; n > 0 {
					table = append(table, seg{idx: n - 1})
				}
			}
			table = append(table, seg{key: k.name, idx: -1})
		}
		if array {
			p := segString(table)
			table = append(table, seg{idx: arrays[p]})
			arrays[p]++
		}
		s.x.addAt(table, parts[0].off)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// key reads a dotted key and the blanks after it.
func (s *keyScanner) key() ([]keyPart, error) {
	var parts []keyPart
	for {
		s.skipSpace()
		start := s.i
		var name string
		switch s.peek() {
		case '"':
			end, err := s.basicEnd(s.i + 1)
			if err != nil {
				return nil, err
			}
			if name, err = unquoteKey(s.data[s.i:end]); err != nil {
				return nil, err
			}
			s.i = end
		case '\'':
			j := bytes.IndexByte(s.data[s.i+1:], '\'')
			if j < 0 {
				return nil, errUnexpected
			}
			name = string(s.data[s.i+1 : s.i+1+j])
			s.i += j + 2
		default:
			for s.i < len(s.data) && isBareKeyChar(s.data[s.i]) {
				s.i++
			}
			if s.i == start {
				return nil, errUnexpected
			}
			name = string(s.data[start:s.i])
		}
		parts = append(parts, keyPart{name, start})
		s.skipSpace()
		if s.peek() != '.' {
			return parts, nil
		}
		s.i++
	}
}

func isBareKeyChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// unquoteKey decodes a quoted key (raw with its quotes) as go-toml does:
// by go-toml, when it has escapes.
func unquoteKey(raw []byte) (string, error) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), nil
	}
	var v struct {
		K string `toml:"k"`
	}
	if err := toml.Unmarshal(append([]byte("k = "), raw...), &v); err != nil {
		return "", err
	}
	return v.K, nil
}

// basicEnd returns the offset after the closing quote of the one-line
// basic string whose content starts at i.
func (s *keyScanner) basicEnd(i int) (int, error) {
	for ; i < len(s.data); i++ {
		switch s.data[i] {
		case '\\':
			i++
		case '"':
			return i + 1, nil
		case '\n':
			return 0, errUnexpected
		}
	}
	return 0, errUnexpected
}

// keyValue records the key parts below base and the value after them.
func (s *keyScanner) keyValue(base []seg, parts []keyPart) error {
	if s.peek() != '=' {
		return errUnexpected
	}
	s.i++
	s.skipSpace()
	path := base
	for _, k := range parts {
		path = append(path, seg{key: k.name, idx: -1})
	}
	s.x.addAt(path, parts[0].off)
	return s.value(path)
}

// value records the keys and elements inside the value at path.
func (s *keyScanner) value(path []seg) error {
	switch c := s.peek(); c {
	case '"', '\'':
		return s.str(c)
	case '[', '{':
		if s.depth++; s.depth > maxNesting {
			return fmt.Errorf("more than %d arrays and inline tables inside each other", maxNesting)
		}
		defer func() { s.depth-- }()
		s.i++
		if c == '[' {
			return s.array(path)
		}
		return s.inlineTable(path)
	}
	// A number, a boolean or a date and time (which may hold a space):
	// up to what ends a value.
	start := s.i
	for s.i < len(s.data) && bytes.IndexByte([]byte(",]}#\r\n"), s.data[s.i]) < 0 {
		s.i++
	}
	if s.i == start {
		return errUnexpected
	}
	return nil
}

// array records the elements of the array whose '[' was read.
func (s *keyScanner) array(path []seg) error {
	for n := 0; ; n++ {
		s.skipBlank()
		if s.peek() == ']' {
			s.i++
			return nil
		}
		elem := append(slices.Clip(path), seg{idx: n})
		if s.peek() != '[' { // an array's position is that of its first element
			s.x.addAt(elem, s.i)
		}
		if err := s.value(elem); err != nil {
			return err
		}
		s.skipBlank()
		switch s.peek() {
		case ',':
			s.i++
		case ']':
		default:
			return errUnexpected
		}
	}
}

// inlineTable records the keys of the inline table whose '{' was read
// (TOML 1.1's newlines, comments and trailing comma included).
func (s *keyScanner) inlineTable(path []seg) error {
	for {
		s.skipBlank()
		switch s.peek() {
		case '}':
			s.i++
			return nil
		case ',':
			s.i++
			continue
		}
		parts, err := s.key()
		if err != nil {
			return err
		}
		if err := s.keyValue(slices.Clip(path), parts); err != nil {
			return err
		}
	}
}

// str skips the string (basic or literal, one-line or multi-line) that
// starts at s.i with quote q.
func (s *keyScanner) str(q byte) error {
	if bytes.HasPrefix(s.data[s.i:], []byte{q, q, q}) {
		// Multi-line: up to the first run of three or more quotes not
		// escaped; the run's first one or two quotes are content.
		for i := s.i + 3; i < len(s.data); i++ {
			switch c := s.data[i]; {
			case c == '\\' && q == '"':
				i++
			case c == q && bytes.HasPrefix(s.data[i:], []byte{q, q, q}):
				j := i + 3
				for j < len(s.data) && s.data[j] == q && j < i+5 {
					j++
				}
				s.i = j
				return nil
			}
		}
		return errUnexpected
	}
	if q == '\'' {
		j := bytes.IndexByte(s.data[s.i+1:], '\'')
		if j < 0 {
			return errUnexpected
		}
		s.i += j + 2
		return nil
	}
	end, err := s.basicEnd(s.i + 1)
	if err != nil {
		return err
	}
	s.i = end
	return nil
}
