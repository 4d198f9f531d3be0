package jsonscan

import "encoding/binary"

// maxDepth is encoding/json's bound on nesting: deeper input is invalid.
const maxDepth = 10000

// Check reports whether b is valid JSON, exactly as json.Valid does, and
// whether it is compact besides (no white space outside strings: json.Compact
// would leave it as it is). It is one pass over b, several times faster than
// json.Valid, and allocates only for nesting deeper than 64.
func Check(b []byte) (valid, compact bool) {
	var stackBuf [64]byte
	stack := stackBuf[:0] // '{' or '[' per open container
	compact = true
	i := 0
	// ws skips white space, noting it.
	ws := func() {
		for i < len(b) && IsSpace(b[i]) {
			compact = false
			i++
		}
	}
	ws()
	for {
		// A value starts at i.
		if i >= len(b) {
			return false, false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(stack) >= maxDepth {
				return false, false
			}
			stack = append(stack, c)
			i++
			ws()
			if i < len(b) && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
				stack = stack[:len(stack)-1]
				i++
				break // an empty container: a complete value
			}
			if c == '{' {
				var spaced bool
				if i, spaced = member(b, i); i < 0 {
					return false, false
				}
				compact = compact && !spaced
				ws()
			}
			continue
		case c == '"':
			if i = stringEnd(b, i); i < 0 {
				return false, false
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = numberEnd(b, i); i < 0 {
				return false, false
			}
		case c == 't':
			if !literal(b, i, "true") {
				return false, false
			}
			i += 4
		case c == 'f':
			if !literal(b, i, "false") {
				return false, false
			}
			i += 5
		case c == 'n':
			if !literal(b, i, "null") {
				return false, false
			}
			i += 4
		default:
			return false, false
		}
		// A value ended at i: close containers, or go to the next member.
		for {
			ws()
			if len(stack) == 0 {
				if i != len(b) {
					return false, false
				}
				return true, compact
			}
			if i >= len(b) {
				return false, false
			}
			top := stack[len(stack)-1]
			if b[i] == ',' {
				i++
				ws()
				if top == '{' {
					var spaced bool
					if i, spaced = member(b, i); i < 0 {
						return false, false
					}
					compact = compact && !spaced
					ws()
				}
				break
			}
			if top == '{' && b[i] != '}' || top == '[' && b[i] != ']' {
				return false, false
			}
			stack = stack[:len(stack)-1]
			i++
		}
	}
}

// member returns the index past the object key (a string) at b[i] and the
// colon after it, or -1, and whether white space stood between the two.
func member(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return -1, false
	}
	if i = stringEnd(b, i); i < 0 {
		return -1, false
	}
	k := Space(b, i)
	if k >= len(b) || b[k] != ':' {
		return -1, false
	}
	return k + 1, k != i
}

// stringEnd returns the index past the valid JSON string at b[i] == '"',
// or -1.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		// Eight bytes at a time while none is special.
		for j+8 <= len(b) && !special8(binary.LittleEndian.Uint64(b[j:])) {
			j += 8
		}
		for j < len(b) && !special[b[j]] {
			j++
		}
		if j >= len(b) {
			return -1
		}
		switch b[j] {
		case '"':
			return j + 1
		case '\\':
			j++
			if j >= len(b) {
				return -1
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return -1
				}
				for _, h := range b[j+1 : j+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				j += 4
			default:
				return -1
			}
		default:
			return -1 // a control character
		}
	}
	return -1
}

const ones, highs = 0x0101010101010101, 0x8080808080808080

// special8 reports whether one of the eight bytes of x is a control
// character, a quote or a backslash (exactly: the borrows of the
// subtractions reach a byte's top bit only above a byte that matched).
func special8(x uint64) bool {
	zero := func(v uint64) uint64 { return (v - ones) &^ v & highs }
	return (x-ones*0x20)&^x&highs|zero(x^(ones*'"'))|zero(x^(ones*'\\')) != 0
}

// special marks the bytes that do not stand for themselves in a JSON
// string: control characters, the quote and the backslash. A keyed
// literal of constants, it is static data (a table built by a function
// would run at every start of the process).
var special = [256]bool{
	'"': true, '\\': true,
	0x00: true, 0x01: true, 0x02: true, 0x03: true, 0x04: true, 0x05: true, 0x06: true, 0x07: true,
	0x08: true, 0x09: true, 0x0a: true, 0x0b: true, 0x0c: true, 0x0d: true, 0x0e: true, 0x0f: true,
	0x10: true, 0x11: true, 0x12: true, 0x13: true, 0x14: true, 0x15: true, 0x16: true, 0x17: true,
	0x18: true, 0x19: true, 0x1a: true, 0x1b: true, 0x1c: true, 0x1d: true, 0x1e: true, 0x1f: true,
}

// numberEnd returns the index past the valid JSON number at b[i], or -1.
func numberEnd[T string | []byte](b T, i int) int {
	if b[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i >= len(b):
		return -1
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return -1
		}
	}
	return i
}

func literal(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}
