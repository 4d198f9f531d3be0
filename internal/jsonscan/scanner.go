// The Scanner reads JSON text of a known shape without reflection or
// intermediate values: the streaming decoders' fast path for the chunks
// that make up almost all of a stream (a text delta), where
// encoding/json's reflection and its per-field allocations are most of
// a delta's cost.
//
// A Scanner is strict where it reads and validating where it skips: every
// value it steps over is checked against the JSON grammar, so text it
// accepts is JSON. It gives up (ok false) rather than guess: on anything it
// does not handle, the caller decodes the text with encoding/json instead,
// which then also produces the error for text that is not JSON. A Scanner
// serves one goroutine.

package jsonscan

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Scanner reads one JSON text. The zero value is not usable: use New.
type Scanner struct {
	s   string
	i   int
	buf []byte // scratch for strings with escapes, reused
}

// New returns a Scanner of s.
func New(s string) *Scanner { return &Scanner{s: s} }

// Reset makes sc read s, keeping its scratch buffer.
func (sc *Scanner) Reset(s string) { sc.s, sc.i = s, 0 }

func (sc *Scanner) ws() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// Peek returns the first byte of the next value (after white space), 0
// at the end.
func (sc *Scanner) Peek() byte {
	sc.ws()
	if sc.i < len(sc.s) {
		return sc.s[sc.i]
	}
	return 0
}

// End reports whether only white space is left.
func (sc *Scanner) End() bool {
	sc.ws()
	return sc.i == len(sc.s)
}

// Null reads a null if one is next.
func (sc *Scanner) Null() bool {
	if sc.Peek() == 'n' && strings.HasPrefix(sc.s[sc.i:], "null") {
		sc.i += 4
		return true
	}
	return false
}

// Object reads an object, calling field for each member with its key
// (undecoded: a key with an escape or a byte outside ASCII gives up);
// field must read the member's value and return whether it did. It
// reports whether the object was read whole.
func (sc *Scanner) Object(field func(key string) bool) bool {
	if sc.Peek() != '{' {
		return false
	}
	sc.i++
	if sc.Peek() == '}' {
		sc.i++
		return true
	}
	for {
		if sc.Peek() != '"' {
			return false
		}
		start := sc.i + 1
		j := start
		for j < len(sc.s) && sc.s[j] != '"' {
			if c := sc.s[j]; c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
				return false
			}
			j++
		}
		if j == len(sc.s) {
			return false
		}
		key := sc.s[start:j]
		sc.i = j + 1
		if sc.Peek() != ':' {
			return false
		}
		sc.i++
		if !field(key) {
			return false
		}
		switch sc.Peek() {
		case ',':
			sc.i++
		case '}':
			sc.i++
			return true
		default:
			return false
		}
	}
}

// Array reads an array, calling elem for each element, which must read
// it and return whether it did. It reports whether the array was read
// whole.
func (sc *Scanner) Array(elem func() bool) bool {
	if sc.Peek() != '[' {
		return false
	}
	sc.i++
	if sc.Peek() == ']' {
		sc.i++
		return true
	}
	for {
		if !elem() {
			return false
		}
		switch sc.Peek() {
		case ',':
			sc.i++
		case ']':
			sc.i++
			return true
		default:
			return false
		}
	}
}

// String reads a string as encoding/json decodes it (escapes, surrogate
// pairs, U+FFFD for invalid UTF-8 and lone surrogates). The result may
// share memory with the text being read; Clone it to keep it past the
// text.
func (sc *Scanner) String() (string, bool) {
	if sc.Peek() != '"' {
		return "", false
	}
	start := sc.i + 1
	plain := true
	j := start
	for ; j < len(sc.s); j++ {
		c := sc.s[j]
		if c == '"' {
			break
		}
		if c < 0x20 {
			return "", false
		}
		if c == '\\' {
			plain = false
			j++ // the escaped byte cannot end the string
		} else if c >= utf8.RuneSelf {
			plain = false
		}
	}
	if j >= len(sc.s) {
		return "", false
	}
	raw := sc.s[start:j]
	sc.i = j + 1
	if plain || (!strings.Contains(raw, `\`) && utf8.ValidString(raw)) {
		return raw, true
	}
	return sc.unquote(raw)
}

// unquote decodes the body of a string that has escapes or bytes outside
// ASCII, as encoding/json's unquote does.
func (sc *Scanner) unquote(raw string) (string, bool) {
	b := sc.buf[:0]
	for r := 0; r < len(raw); {
		c := raw[r]
		switch {
		case c == '\\':
			if r+1 >= len(raw) {
				return "", false
			}
			switch e := raw[r+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
				r += 2
			case 'b':
				b, r = append(b, '\b'), r+2
			case 'f':
				b, r = append(b, '\f'), r+2
			case 'n':
				b, r = append(b, '\n'), r+2
			case 'r':
				b, r = append(b, '\r'), r+2
			case 't':
				b, r = append(b, '\t'), r+2
			case 'u':
				rr := getu4(raw[r:])
				if rr < 0 {
					return "", false
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if dec := utf16.DecodeRune(rr, getu4(raw[r:])); dec != utf8.RuneError {
						r += 6
						b = utf8.AppendRune(b, dec)
						break
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
			default:
				return "", false
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRuneInString(raw[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	sc.buf = b
	return string(b), true
}

// getu4 decodes \uXXXX at the start of s, or returns -1.
func getu4(s string) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range []byte(s[2:6]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// Int reads a number that is an integer of at most 18 digits (no
// fraction or exponent: encoding/json refuses those for an int).
func (sc *Scanner) Int() (int, bool) {
	sc.ws()
	j, neg := sc.i, false
	if j < len(sc.s) && sc.s[j] == '-' {
		neg = true
		j++
	}
	start := j
	n := 0
	for j < len(sc.s) && '0' <= sc.s[j] && sc.s[j] <= '9' {
		n = n*10 + int(sc.s[j]-'0')
		j++
	}
	digits := j - start
	if digits == 0 || digits > 18 || (digits > 1 && sc.s[start] == '0') {
		return 0, false
	}
	if j < len(sc.s) {
		switch sc.s[j] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	sc.i = j
	if neg {
		n = -n
	}
	return n, true
}

// Skip reads any value, checking it against the JSON grammar.
func (sc *Scanner) Skip() bool { return sc.skip(0) }

// Span reads any value as Skip does and returns where its text starts and
// ends in the scanned text, so that a caller holding that text as bytes
// keeps the value without a copy.
func (sc *Scanner) Span() (start, end int, ok bool) {
	sc.ws()
	start = sc.i
	if !sc.skip(0) {
		return 0, 0, false
	}
	return start, sc.i, true
}

// scanDepth bounds the nesting Skip follows (encoding/json's own limit is
// 10000); deeper text gives up.
const scanDepth = 64

func (sc *Scanner) skip(depth int) bool {
	if depth > scanDepth {
		return false
	}
	switch c := sc.Peek(); {
	case c == '{':
		return sc.Object(func(string) bool { return sc.skip(depth + 1) })
	case c == '[':
		return sc.Array(func() bool { return sc.skip(depth + 1) })
	case c == '"':
		_, ok := sc.String()
		return ok
	case c == 't':
		return sc.literal("true")
	case c == 'f':
		return sc.literal("false")
	case c == 'n':
		return sc.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return sc.number()
	}
	return false
}

func (sc *Scanner) literal(lit string) bool {
	if !strings.HasPrefix(sc.s[sc.i:], lit) {
		return false
	}
	sc.i += len(lit)
	return true
}

// number reads a number as the JSON grammar has it.
func (sc *Scanner) number() bool {
	j := numberEnd(sc.s, sc.i)
	if j < 0 {
		return false
	}
	sc.i = j
	return true
}

// FoldsTo reports whether key is one of names but for case: encoding/json
// matches member names without regard to case, so a decoder's fast path
// leaves text with such a key to it.
func FoldsTo(key string, names ...string) bool {
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return true
		}
	}
	return false
}

// Seen records which of an object's members (at most eight, one bit each)
// a fast path read, so that it can give up on a repeated one (where
// encoding/json keeps the last, or merges).
type Seen uint8

// First reports whether bit is seen for the first time, and marks it.
func (s *Seen) First(bit uint8) bool {
	if *s&Seen(bit) != 0 {
		return false
	}
	*s |= Seen(bit)
	return true
}
