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
			n += asciiLen[c]
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

// asciiLen is the escaped length of each ASCII byte.
var asciiLen = func() (t [utf8.RuneSelf]int) {
	for c := range t {
		switch {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			t[c] = 2
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			t[c] = 6
		default:
			t[c] = 1
		}
	}
	return t
}()

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
			if asciiLen[c] == 1 {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
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
func Plain(c byte) bool { return c < utf8.RuneSelf && asciiLen[c] == 1 }

// AppendString appends s as a JSON string, quotes included, as json.Marshal
// writes it.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst, _ = Append(dst, s, len(s)*6)
	return append(dst, '"')
}
