// Package jsonesc escapes text as encoding/json writes a string's content,
// without reflection or an intermediate value: for writers of long texts
// (request bodies, streamed chunks) that json.Marshal would copy through
// its growing, pooled buffers several times.
package jsonesc

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Len is the length of s as Append writes it.
func Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if e := ascii[c]; e != "" {
				n += len(e)
			} else {
				n++
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			n += len(`\ufffd`)
		case c == '\u2028' || c == '\u2029':
			n += len(`\u2028`)
		default:
			n += size
		}
		i += size
	}
	return n
}

// ascii is how Append writes each ASCII byte it escapes ("" for one it
// writes as it is): the two-byte escapes, \u00XX for the other control
// characters and for <, > and & (json.Marshal's HTML escaping). It is a
// literal, laid out as data, not a table built at start-up.
var ascii = [utf8.RuneSelf]string{
	'"': `\"`, '\\': `\\`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`,
	0x00: `\u0000`, 0x01: `\u0001`, 0x02: `\u0002`, 0x03: `\u0003`, 0x04: `\u0004`, 0x05: `\u0005`, 0x06: `\u0006`, 0x07: `\u0007`,
	0x0b: `\u000b`, 0x0e: `\u000e`, 0x0f: `\u000f`,
	0x10: `\u0010`, 0x11: `\u0011`, 0x12: `\u0012`, 0x13: `\u0013`, 0x14: `\u0014`, 0x15: `\u0015`, 0x16: `\u0016`, 0x17: `\u0017`,
	0x18: `\u0018`, 0x19: `\u0019`, 0x1a: `\u001a`, 0x1b: `\u001b`, 0x1c: `\u001c`, 0x1d: `\u001d`, 0x1e: `\u001e`, 0x1f: `\u001f`,
	'<': `\u003c`, '>': `\u003e`, '&': `\u0026`,
}

// ASCII returns how Append writes the ASCII byte c: "" when as it is.
func ASCII(c byte) string { return ascii[c&0x7f] }

// Append appends s escaped as encoding/json escapes a string's
// content (with HTML escaping, as json.Marshal does: invalid UTF-8 becomes
// U+FFFD, U+2028 and U+2029 are escaped) until dst has grown by limit
// bytes or s ends, whole runes at a time, and returns dst and the bytes of
// s it used.
func Append(dst []byte, s string, limit int) ([]byte, int) {
	stop := len(dst) + limit
	start, i := 0, 0
	for i < len(s) && len(dst)+(i-start) < stop {
		c := s[i]
		if c < utf8.RuneSelf {
			e := ascii[c]
			if e == "" {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, e...)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:i]...)
	return dst, i
}

// Plain reports whether Append writes the ASCII byte c as it is.
func Plain(c byte) bool { return c < utf8.RuneSelf && ascii[c] == "" }

// AppendString appends s as a JSON string, quotes included, as json.Marshal
// writes it.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst, _ = Append(dst, s, len(s)*6)
	return append(dst, '"')
}
