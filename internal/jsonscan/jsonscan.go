// Package jsonscan finds the bounds of values in JSON that json.Valid has
// already accepted: it never allocates and never decodes. On other input it
// returns bounds within the input but of no meaning.
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
	// The common string has no escape: find its closing quote at memchr's
	// speed and check the bytes before it for non-ASCII eight at a time.
	if q := bytes.IndexByte(b[i+1:], '"'); q >= 0 {
		s := b[i+1 : i+1+q]
		if bytes.IndexByte(s, '\\') < 0 {
			return i + 2 + q, !ascii(s)
		}
	}
	complex := false
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '\\':
			complex = true
			j++
		case c == '"':
			return j + 1, complex
		case c >= 0x80:
			complex = true
		}
	}
	return len(b), complex
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
