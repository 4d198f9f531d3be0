package terminal

import "unicode/utf8"

// renderCols is the screen width RenderText assumes (the PTY width): long
// lines wrap into rows of this many columns, and carriage returns, erasing
// and cursor movement act on the current row only, as on a real terminal.
// This also keeps every operation's cost bounded by the row width.
const renderCols = ptyCols

// maxParam caps numeric CSI parameters.
const maxParam = 1 << 16

// RenderText resolves terminal control sequences in raw to the text a person
// would see, line by line; it is meant for the output a model reads. raw is
// untrusted and may be anything; the result is valid UTF-8, and RenderText
// runs in time linear in len(raw).
//
//   - Lines wrap at 120 columns like on the PTY; wrapped rows are joined
//     back without a line break, so long lines come out whole.
//   - "\r" returns to the start of the row and later text overwrites it, so
//     progress output ("10%\r50%\r100%") collapses to its final state;
//     "\b" moves one column left; "\n", "\v" and "\f" end the line. Tabs are
//     kept as characters; every other C0 control, DEL and C1 control is
//     dropped.
//   - CSI sequences: erase in line ("\x1b[K", "\x1b[1K", "\x1b[2K") and
//     horizontal cursor movement (CUF "C", CUB "D", CHA "G", HPA "`") are
//     applied to the current row; everything else (colours and other SGR,
//     vertical movement, erase in display, private modes) is removed.
//   - OSC sequences (window titles, hyperlinks) and DCS, SOS, PM and APC
//     strings are removed up to their terminator (BEL or ESC \); other
//     escape sequences (charset selection, keypad modes) are removed.
//     Unterminated sequences at the end of raw are removed.
//   - Invalid UTF-8 bytes become U+FFFD.
//
// Each character occupies one column (wide characters are not modelled).
// RenderText is safe for concurrent use.
func RenderText(raw []byte) string {
	s := screen{out: make([]byte, 0, len(raw))}
	for i := 0; i < len(raw); {
		b := raw[i]
		switch {
		case b == 0x1b:
			i = s.escape(raw, i)
			continue
		case b < 0x20 || b == 0x7f:
			s.control(b)
			i++
			continue
		}
		r, size := utf8.DecodeRune(raw[i:])
		i += size
		if r >= 0x80 && r <= 0x9f { // C1 controls
			continue
		}
		s.put(r) // utf8.RuneError for invalid bytes
	}
	s.writeRow()
	return string(s.out)
}

// screen is the current row of a terminal screen; finished rows go to out.
type screen struct {
	out []byte
	row []rune // len(row) <= renderCols
	col int    // 0..renderCols; renderCols means "wrap before the next character"
}

func (s *screen) put(r rune) {
	if s.col >= renderCols {
		s.writeRow() // soft wrap: no line break in the text
	}
	if s.col < len(s.row) {
		s.row[s.col] = r
	} else {
		for len(s.row) < s.col {
			s.row = append(s.row, ' ')
		}
		s.row = append(s.row, r)
	}
	s.col++
}

// writeRow appends the current row to out and starts a new one.
func (s *screen) writeRow() {
	for _, r := range s.row {
		if r < utf8.RuneSelf {
			s.out = append(s.out, byte(r))
		} else {
			s.out = utf8.AppendRune(s.out, r)
		}
	}
	s.row = s.row[:0]
	s.col = 0
}

func (s *screen) control(b byte) {
	switch b {
	case '\n', '\v', '\f':
		s.writeRow()
		s.out = append(s.out, '\n')
	case '\r':
		s.col = 0
	case '\b':
		s.col = max(min(s.col, renderCols-1)-1, 0)
	case '\t':
		s.put('\t')
	}
}

// escape consumes the escape sequence starting at raw[i] (ESC) and returns
// the index after it.
func (s *screen) escape(raw []byte, i int) int {
	j := i + 1
	if j >= len(raw) {
		return j
	}
	switch raw[j] {
	case '[':
		return s.csi(raw, j+1)
	case ']', 'P', 'X', '^', '_':
		return skipString(raw, j+1)
	}
	// nF / Fp / Fe / Fs: intermediates 0x20–0x2F, then a final 0x30–0x7E.
	for j < len(raw) && raw[j] >= 0x20 && raw[j] <= 0x2f {
		j++
	}
	if j < len(raw) && raw[j] >= 0x30 && raw[j] <= 0x7e {
		return j + 1
	}
	// Malformed: drop the ESC (and intermediates), keep what follows.
	return j
}

// skipString skips a control string (OSC, DCS, ...) starting at raw[j] up
// to and including its terminator, BEL or ST (ESC \). A bare ESC ends the
// string and starts a new sequence.
func skipString(raw []byte, j int) int {
	for ; j < len(raw); j++ {
		switch raw[j] {
		case 0x07:
			return j + 1
		case 0x1b:
			if j+1 < len(raw) && raw[j+1] == '\\' {
				return j + 2
			}
			return j
		}
	}
	return j
}

// csi parses a control sequence whose parameters start at raw[j], applies
// the line-editing ones and returns the index after it.
func (s *screen) csi(raw []byte, j int) int {
	start := j
	for j < len(raw) && raw[j] >= 0x30 && raw[j] <= 0x3f {
		j++
	}
	params := raw[start:j]
	for j < len(raw) && raw[j] >= 0x20 && raw[j] <= 0x2f {
		j++
	}
	if j >= len(raw) {
		return j
	}
	final := raw[j]
	if final < 0x40 || final > 0x7e {
		// Malformed: drop what was parsed, keep the offending byte.
		return j
	}
	if j > start+len(params) || (len(params) > 0 && params[0] >= 0x3c) {
		// Intermediates or private parameters ("?", ">", ...): ignore.
		return j + 1
	}
	n := firstParam(params)
	switch final {
	case 'K':
		switch n {
		case 0:
			if s.col < len(s.row) {
				s.row = s.row[:s.col]
			}
		case 1:
			for k := 0; k <= s.col && k < len(s.row); k++ {
				s.row[k] = ' '
			}
		case 2:
			s.row = s.row[:0]
		}
	case 'C':
		s.col = min(s.col+max(n, 1), renderCols-1)
	case 'D':
		s.col = max(min(s.col, renderCols-1)-max(n, 1), 0)
	case 'G', '`':
		s.col = min(max(n, 1)-1, renderCols-1)
	}
	return j + 1
}

// firstParam returns the first numeric parameter (0 when absent).
func firstParam(p []byte) int {
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			break
		}
		n = min(n*10+int(c-'0'), maxParam)
	}
	return n
}
