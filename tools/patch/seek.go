package patch

import (
	"strings"

	"acpd/internal/lazy"
)

// Seek returns the index of the first occurrence of pattern in lines at or
// after start, or -1. It tries, in order of decreasing strictness: exact
// lines, lines ignoring trailing whitespace, lines ignoring surrounding
// whitespace, and lines with typographic dashes, quotes and spaces folded to
// ASCII. With eof, pattern must end the file. An empty pattern matches at
// start.
func Seek(lines, pattern []string, start int, eof bool) int {
	if len(pattern) == 0 {
		return min(max(start, 0), len(lines))
	}
	if len(pattern) > len(lines) {
		return -1
	}
	last := len(lines) - len(pattern)
	start = max(start, 0)
	if eof {
		start = max(start, last)
	}
	for _, eq := range []func(a, b string) bool{
		func(a, b string) bool { return a == b },
		func(a, b string) bool { return strings.TrimRight(a, " \t\r") == strings.TrimRight(b, " \t\r") },
		func(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) },
		func(a, b string) bool { return norm(a) == norm(b) },
	} {
	next:
		for i := start; i <= last; i++ {
			for j, p := range pattern {
				if !eq(lines[i+j], p) {
					continue next
				}
			}
			return i
		}
	}
	return -1
}

// norm trims s and folds typographic punctuation and odd spaces to ASCII.
func norm(s string) string {
	return strings.TrimSpace(punct.Get().Replace(s))
}

var punct = lazy.Value[*strings.Replacer]{New: func() *strings.Replacer {
	return strings.NewReplacer(
		"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
		"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'",
		"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`,
		"\u00A0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ",
		"\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
	)
}}
