// Package clip bounds what the file and command tools give the model,
// always at line boundaries and always saying exactly what was left out and
// how to get it.
package clip

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// WindowBytes is the most a read_file window shows (about 50 KB); a window
// stops at the last whole line that fits.
const WindowBytes = 50_000

// Window renders lines (the file's lines starting at 1-based line first)
// as numbered lines ("%6d\t%s\n"), stopping before the line that would take
// the text past maxBytes (at least one line is shown). total is the file's
// line count (-1: unknown) and more reports that the file has lines after
// the given ones. The footer names the last line shown and the exact offset
// to continue from.
func Window(lines []string, first, total int, more bool, maxBytes int) string {
	var b strings.Builder
	shown := 0
	for i, l := range lines {
		row := fmt.Sprintf("%6d\t%s\n", first+i, l)
		if shown > 0 && b.Len()+len(row) > maxBytes {
			break
		}
		b.WriteString(row)
		shown++
	}
	last := first + shown - 1
	of := ""
	if total >= 0 {
		of = fmt.Sprintf(" of %d", total)
	}
	switch {
	case total == 0:
		b.WriteString("(the file is empty)\n")
	case len(lines) == 0:
		fmt.Fprintf(&b, "(no lines at offset %d; the file has %d lines)\n", first, total)
	case shown < len(lines):
		fmt.Fprintf(&b, "(showing lines %d-%d%s: the window stops at about %d KB; read on with offset %d)\n", first, last, of, maxBytes/1000, last+1)
	case more:
		fmt.Fprintf(&b, "(showing lines %d-%d%s; read on with offset %d)\n", first, last, of, last+1)
	}
	return b.String()
}

// Binary reports whether data (a file's start) looks binary: it holds a NUL
// byte, or more than a tenth of it is not valid UTF-8 or is control
// characters other than tab, newline, carriage return, form feed and escape.
func Binary(data []byte) bool {
	if bytes.IndexByte(data, 0) >= 0 {
		return true
	}
	bad, n := 0, 0
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size == 1 && len(data) >= utf8.UTFMax {
			bad++ // an incomplete rune at the very end is a cut, not binary
		} else if r < 0x20 && r != '\t' && r != '\n' && r != '\r' && r != '\f' && r != 0x1b {
			bad++
		}
		n++
		data = data[size:]
	}
	return n > 0 && bad*10 > n
}

// OutputBytes is the most of a command's output given to the model (about
// 30 KB): its head and its tail.
const OutputBytes = 30_000

// HeadTail bounds s to about maxBytes, keeping its first and last lines
// (half each, cut at line boundaries) and replacing the middle with a note;
// saved, when not empty, is where the whole output was written, named in the
// note. It reports whether anything was cut.
func HeadTail(s string, maxBytes int, saved string) (string, bool) {
	if len(s) <= maxBytes {
		return s, false
	}
	half := maxBytes / 2
	head := s[:half]
	if i := strings.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	} else {
		head = cutRunes(head)
	}
	tail := s[len(s)-half:]
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
		tail = tail[i+1:]
	} else {
		tail = skipRunes(tail)
	}
	mid := s[len(head) : len(s)-len(tail)]
	lines := strings.Count(mid, "\n")
	firstCut := strings.Count(head, "\n") + 1
	note := fmt.Sprintf("[… %d lines (%d bytes) cut from the middle of the output, lines %d-%d …", lines, len(mid), firstCut, firstCut+max(lines-1, 0))
	if saved != "" {
		note += fmt.Sprintf(" The whole output is saved in %s: read it with read_file (offset %d) or search it with grep.", saved, firstCut)
	}
	note += "]\n"
	if !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	return head + note + tail, true
}

// cutRunes drops a partial UTF-8 sequence at the end of s.
func cutRunes(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.ValidString(s[i:]) {
				return s[:i]
			}
			break
		}
	}
	return s
}

// skipRunes drops continuation bytes at the start of s.
func skipRunes(s string) string {
	i := 0
	for i < len(s) && i < utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
