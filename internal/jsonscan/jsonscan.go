// Package jsonscan reads JSON without reflection. Space, StringEnd and
// ValueEnd find the bounds of values in JSON that json.Valid (or Check)
// has already accepted: they never allocate and never decode, and on
// other input return bounds within the input but of no meaning. Check is
// json.Valid and a compactness test in one pass. A Scanner (scanner.go)
// decodes text of a known shape, validating what it skips, for the model
// dialects' fast path over streamed deltas.
package jsonscan

import (
	"bytes"
	"encoding/binary"
)

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// Space returns the index of the first byte at or after i that is not
// white space.
func Space(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

// StringEnd returns the index just past the string starting at b[i] == '"'
// and whether the string needs unescaping (escapes or non-ASCII bytes, which
// encoding/json may rewrite).
func StringEnd(b []byte, i int) (int, bool) {
	// Quote to quote at memchr's speed: a quote ends the string unless an
	// odd run of backslashes escapes it. The bytes before each quote are
	// checked for escapes and non-ASCII eight at a time, until one is found.
	complex := false
	for j := i + 1; ; {
		q := bytes.IndexByte(b[j:], '"')
		if q < 0 {
			return len(b), true
		}
		end := j + q
		if !complex {
			seg := b[j:end]
			complex = bytes.IndexByte(seg, '\\') >= 0 || !ascii(seg)
		}
		n := 0
		for end-1-n > i && b[end-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return end + 1, complex
		}
		j = end + 1
	}
}

// ascii reports whether s is all ASCII.
func ascii(s []byte) bool {
	for len(s) >= 8 {
		if binary.LittleEndian.Uint64(s)&0x8080808080808080 != 0 {
			return false
		}
		s = s[8:]
	}
	for _, c := range s {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// ValueEnd returns the index just past the JSON value starting at b[i].
func ValueEnd(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		end, _ := StringEnd(b, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := StringEnd(b, j)
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(b)
	default:
		j := i
		for j < len(b) {
			switch b[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j
			}
			j++
		}
		return j
	}
}
