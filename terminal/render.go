package terminal

import (
	"io"
	"unicode/utf8"
)

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
	s.feed(raw, true)
	s.writeRow()
	return string(s.out)
}

// maxPending bounds the bytes of an unfinished escape sequence a
// [Renderer] holds back waiting for its end; a longer one (no real
// terminal sequence is) is treated as unterminated and removed.
const maxPending = 4 << 10

// Renderer is [RenderText] over a stream: Write takes raw output in chunks
// of any size (split anywhere, even inside an escape sequence or a UTF-8
// character) and writes the rendered text of every finished row to the
// underlying writer; Close renders the rest. The text written equals
// RenderText of all the bytes written (escape sequences longer than 4 KiB
// excepted), and like RenderText it takes time linear in the input. A
// Renderer is not safe for concurrent use.
type Renderer struct {
	w    io.Writer
	s    screen
	pend []byte // the start of an unfinished sequence or character
	err  error
}

// NewRenderer returns a Renderer writing the rendered text to w.
func NewRenderer(w io.Writer) *Renderer { return &Renderer{w: w} }

// Write renders p; it returns len(p) and the first error of the underlying
// writer (after which nothing more is written to it).
func (r *Renderer) Write(p []byte) (int, error) {
	data := p
	if len(r.pend) > 0 {
		data = append(r.pend, p...)
	}
	n := r.s.feed(data, false)
	if len(data)-n > maxPending {
		n = len(data) - r.s.feedFinal(data[n:])
	}
	r.pend = append(r.pend[:0], data[n:]...)
	r.flush()
	return len(p), r.err
}

// Close renders what is held back (an unterminated sequence is removed, as
// at the end of RenderText's input) and the last row. It does not close
// the underlying writer.
func (r *Renderer) Close() error {
	r.s.feed(r.pend, true)
	r.pend = nil
	r.s.writeRow()
	r.flush()
	return r.err
}

// Row returns the open row (the text after the last line written, which a
// carriage return may still overwrite) as Close would write it now.
func (r *Renderer) Row() string {
	var b []byte
	for _, c := range r.s.row {
		b = utf8.AppendRune(b, c)
	}
	return string(b)
}

func (r *Renderer) flush() {
	if len(r.s.out) > 0 && r.err == nil {
		_, r.err = r.w.Write(r.s.out)
	}
	r.s.out = r.s.out[:0]
}

// feedFinal renders raw as the end of the input and returns 0 (all
// consumed).
func (s *screen) feedFinal(raw []byte) int {
	s.feed(raw, true)
	return 0
}

// feed renders raw into s. Unless final (the end of the input), it stops
// before an escape sequence or a UTF-8 character that raw ends in the
// middle of and returns where: the caller passes those bytes again with
// what follows. It returns len(raw) when everything was consumed.
func (s *screen) feed(raw []byte, final bool) int {
	i := 0
	for i < len(raw) {
		if s.inString {
			j, ok := s.skipString(raw, i, final)
			if !ok {
				return j
			}
			i = j
			continue
		}
		b := raw[i]
		switch {
		case b == 0x1b:
			j, ok := s.escape(raw, i, final)
			if !ok {
				return i
			}
			i = j
			continue
		case b < 0x20 || b == 0x7f:
			s.control(b)
			i++
			continue
		}
		if b >= utf8.RuneSelf && !final && !utf8.FullRune(raw[i:]) {
			return i
		}
		r, size := utf8.DecodeRune(raw[i:])
		i += size
		if r >= 0x80 && r <= 0x9f { // C1 controls
			continue
		}
		s.put(r) // utf8.RuneError for invalid bytes
	}
	return i
}

// screen is the current row of a terminal screen; finished rows go to out.
type screen struct {
	out []byte
	// inString: inside an OSC, DCS, SOS, PM or APC string, which is
	// removed up to its terminator.
	inString bool
	row      []rune // len(row) <= renderCols
	col      int    // 0..renderCols; renderCols means "wrap before the next character"
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
// the index after it. ok is false when raw ends inside the sequence and
// more may follow (not final).
func (s *screen) escape(raw []byte, i int, final bool) (next int, ok bool) {
	j := i + 1
	if j >= len(raw) {
		return j, final
	}
	switch raw[j] {
	case '[':
		return s.csi(raw, j+1, final)
	case ']', 'P', 'X', '^', '_':
		s.inString = true
		return j + 1, true
	}
	// nF / Fp / Fe / Fs: intermediates 0x20–0x2F, then a final 0x30–0x7E.
	for j < len(raw) && raw[j] >= 0x20 && raw[j] <= 0x2f {
		j++
	}
	if j < len(raw) && raw[j] >= 0x30 && raw[j] <= 0x7e {
		return j + 1, true
	}
	if j >= len(raw) && !final {
		return j, false
	}
	// Malformed: drop the ESC (and intermediates), keep what follows.
	return j, true
}

// skipString skips the rest of a control string (OSC, DCS, ...) from raw[j]
// up to and including its terminator, BEL or ST (ESC \), and ends the
// string state there. A bare ESC ends the string and starts a new
// sequence. Without a terminator in raw everything is skipped and the
// string goes on; ok is false when raw ends in an ESC that may start ST
// (not final), returned as next.
func (s *screen) skipString(raw []byte, j int, final bool) (next int, ok bool) {
	for ; j < len(raw); j++ {
		switch raw[j] {
		case 0x07:
			s.inString = false
			return j + 1, true
		case 0x1b:
			if j+1 < len(raw) {
				s.inString = false
				if raw[j+1] == '\\' {
					return j + 2, true
				}
				return j, true
			}
			if !final {
				return j, false
			}
			s.inString = false
			return j, true
		}
	}
	return j, true
}

// csi parses a control sequence whose parameters start at raw[j], applies
// the line-editing ones and returns the index after it.
func (s *screen) csi(raw []byte, j int, final bool) (next int, ok bool) {
	start := j
	for j < len(raw) && raw[j] >= 0x30 && raw[j] <= 0x3f {
		j++
	}
	params := raw[start:j]
	for j < len(raw) && raw[j] >= 0x20 && raw[j] <= 0x2f {
		j++
	}
	if j >= len(raw) {
		return j, final
	}
	fin := raw[j]
	if fin < 0x40 || fin > 0x7e {
		// Malformed: drop what was parsed, keep the offending byte.
		return j, true
	}
	if j > start+len(params) || (len(params) > 0 && params[0] >= 0x3c) {
		// Intermediates or private parameters ("?", ">", ...): ignore.
		return j + 1, true
	}
	n := firstParam(params)
	switch fin {
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
	return j + 1, true
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
