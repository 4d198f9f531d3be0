// Package textedit finds and replaces text the way a model means it, for
// acpd's edit_file and multi_edit tools.
//
// A model copies old_string from what it read, and the copy is often not
// byte-exact: the file has CRLF line endings (read_file shows lines without
// them), trailing whitespace the model dropped, a different indentation
// depth, typographic quotes or dashes it typed as ASCII, or read_file's
// "   12\t" line-number prefixes. [Replace] first matches exactly (on
// normalised line endings), then tries progressively looser matchers, and
// accepts a loose match only when it is unique. The file keeps its own line
// endings and byte order mark.
package textedit

import (
	"fmt"
	"regexp"
	"strings"

	"acpd/internal/lazy"
)

// Matchers, from strictest to loosest, as reported in [Result.Matcher].
const (
	Exact              = "exact"
	TrailingWhitespace = "ignoring trailing whitespace"
	Indentation        = "ignoring indentation (new_string re-indented to match)"
	Punctuation        = "ignoring whitespace and typographic quotes and dashes"
	// LineNumbers prefixes another matcher's name: old_string carried
	// read_file's line-number prefixes, which were removed.
	LineNumbers = "without line-number prefixes, "
)

// Result is a successful replacement.
type Result struct {
	// Content is the file's new content.
	Content string
	// Matcher names the matcher that found old_string (see the constants).
	Matcher string
	// Count is the number of replaced occurrences.
	Count int
	// First and Last are the 1-based lines of Content that the first
	// replacement occupies (Last < First when it removed whole lines).
	First, Last int
	// Snippet is the first replaced region with 3 lines around it, as
	// numbered lines ("%6d\t%s\n"), for the model to check the result.
	Snippet string
}

// Error is an old_string that does not match; its message is written for
// the model and says what to do.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// match is one occurrence in the LF-normalised content: bytes [start, end)
// are replaced by with.
type match struct {
	start, end int
	with       string
}

// Replace replaces old by new in content: the only occurrence, or every
// occurrence of the strictest matcher that finds one when all is set.
func Replace(content, old, new string, all bool) (Result, error) {
	d := decode(content)
	old, new = lf(old), lf(new)
	if old == "" {
		return Result{}, &Error{"old_string is empty; to create a file use write_file"}
	}
	if old == new {
		return Result{}, &Error{"old_string and new_string are the same; nothing to change"}
	}
	name, ms := find(d.text, old, new)
	if len(ms) == 0 {
		return Result{}, &Error{"old_string was not found in the file." + closest(d.text, old)}
	}
	if len(ms) > 1 && !all {
		var at []string
		for i, m := range ms {
			if i == 5 {
				at = append(at, "…")
				break
			}
			at = append(at, fmt.Sprint(lineOf(d.text, m.start)))
		}
		return Result{}, &Error{fmt.Sprintf("old_string occurs %d times (at lines %s); include more surrounding lines to make it unique, or set replace_all to change every occurrence", len(ms), strings.Join(at, ", "))}
	}
	var b strings.Builder
	pos, delta := 0, 0
	for i, m := range ms {
		b.WriteString(d.text[pos:m.start])
		b.WriteString(m.with)
		pos = m.end
		if i == 0 {
			delta = m.start
		}
	}
	b.WriteString(d.text[pos:])
	text := b.String()
	first := lineOf(text, delta)
	last := lineOf(text, delta+len(ms[0].with))
	if strings.HasSuffix(ms[0].with, "\n") || ms[0].with == "" {
		last--
	}
	return Result{
		Content: d.encode(text),
		Matcher: name,
		Count:   len(ms),
		First:   first,
		Last:    last,
		Snippet: numbered(text, first-3, max(last, first)+3),
	}, nil
}

// Edit is one replacement of a multi-edit.
type Edit struct {
	Old, New string
	All      bool
}

// ReplaceEach applies edits in order, each to the result of the previous
// one, all or nothing: an error names the failing edit (1-based) and
// nothing is changed.
func ReplaceEach(content string, edits []Edit) (string, []Result, error) {
	if len(edits) == 0 {
		return "", nil, &Error{"edits is empty"}
	}
	rs := make([]Result, 0, len(edits))
	for i, e := range edits {
		r, err := Replace(content, e.Old, e.New, e.All)
		if err != nil {
			return "", nil, &Error{fmt.Sprintf("edit %d of %d: %v (no edit was applied)", i+1, len(edits), err)}
		}
		content = r.Content
		rs = append(rs, r)
	}
	return content, rs, nil
}

// find runs the matchers in order and returns the first that matches, with
// its matches.
func find(text, old, new string) (string, []match) {
	if ms := exact(text, old, new); len(ms) > 0 {
		return Exact, ms
	}
	if name, ms := findLines(text, old, new); len(ms) > 0 {
		return name, ms
	}
	if o, n, ok := stripNumbers(old, new); ok && o != "" {
		if ms := exact(text, o, n); len(ms) > 0 {
			return LineNumbers + Exact, ms
		}
		if name, ms := findLines(text, o, n); len(ms) > 0 {
			return LineNumbers + name, ms
		}
	}
	return "", nil
}

func findLines(text, old, new string) (string, []match) {
	for _, lm := range []struct {
		name string
		eq   func(a, b string) bool
	}{
		{TrailingWhitespace, func(a, b string) bool { return trimRight(a) == trimRight(b) }},
		{Indentation, nil},
		{Punctuation, func(a, b string) bool { return norm(a) == norm(b) }},
	} {
		if ms := lineMatches(text, old, new, lm.name == Indentation, lm.eq); len(ms) > 0 {
			return lm.name, ms
		}
	}
	return "", nil
}

func exact(text, old, new string) []match {
	var ms []match
	for i := 0; ; {
		j := strings.Index(text[i:], old)
		if j < 0 {
			return ms
		}
		ms = append(ms, match{i + j, i + j + len(old), new})
		i += j + len(old)
	}
}

// lineMatches matches old as whole lines of text. With indent, lines are
// compared after removing each side's common indentation (and trailing
// whitespace); otherwise with eq. The replacement is new, re-indented by the
// difference between the matched lines' indentation and old's (except for
// the trailing-whitespace matcher, where indentation is equal).
func lineMatches(text, old, new string, indent bool, eq func(a, b string) bool) []match {
	withNL := strings.HasSuffix(old, "\n")
	ol := strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	tl, starts := splitLines(text)
	if len(ol) > len(tl) || strings.TrimSpace(old) == "" {
		return nil
	}
	oIndent := commonIndent(ol)
	var ms []match
	for i := 0; i+len(ol) <= len(tl); {
		win := tl[i : i+len(ol)]
		ok := true
		var wIndent string
		if indent {
			wIndent = commonIndent(win)
			for j := range ol {
				if trimRight(strings.TrimPrefix(ol[j], oIndent)) != trimRight(strings.TrimPrefix(win[j], wIndent)) {
					ok = false
					break
				}
			}
		} else {
			for j := range ol {
				if !eq(win[j], ol[j]) {
					ok = false
					break
				}
			}
			wIndent, oIndent = leadingIndent(firstNonBlank(win)), leadingIndent(firstNonBlank(ol))
		}
		if !ok {
			i++
			continue
		}
		start := starts[i]
		end := starts[i+len(ol)-1] + len(tl[i+len(ol)-1])
		with := reindent(new, oIndent, wIndent)
		if withNL {
			if end < len(text) {
				end++ // the newline of the last matched line
			} else {
				with = strings.TrimSuffix(with, "\n") // the file has no final newline
			}
		}
		ms = append(ms, match{start, end, with})
		i += len(ol)
	}
	return ms
}

// splitLines splits text into lines (without "\n") and their start offsets;
// a final newline does not start an empty line.
func splitLines(text string) ([]string, []int) {
	body := strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil, nil
	}
	ls := strings.Split(body, "\n")
	starts := make([]int, len(ls))
	off := 0
	for i, l := range ls {
		starts[i] = off
		off += len(l) + 1
	}
	return ls, starts
}

func trimRight(s string) string { return strings.TrimRight(s, " \t\r") }

func leadingIndent(s string) string { return s[:len(s)-len(strings.TrimLeft(s, " \t"))] }

func firstNonBlank(ls []string) string {
	for _, l := range ls {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}

// commonIndent is the longest whitespace prefix shared by the non-blank
// lines.
func commonIndent(ls []string) string {
	var c string
	set := false
	for _, l := range ls {
		if strings.TrimSpace(l) == "" {
			continue
		}
		in := leadingIndent(l)
		if !set {
			c, set = in, true
			continue
		}
		n := 0
		for n < len(c) && n < len(in) && c[n] == in[n] {
			n++
		}
		c = c[:n]
	}
	return c
}

// reindent moves new's lines from indentation from to to: a line starting
// with from gets to instead; other non-blank lines get to prepended when
// from is empty, and are kept otherwise.
func reindent(new, from, to string) string {
	if from == to {
		return new
	}
	ls := strings.Split(new, "\n")
	for i, l := range ls {
		switch {
		case strings.TrimSpace(l) == "":
		case strings.HasPrefix(l, from):
			ls[i] = to + l[len(from):]
		case from == "":
			ls[i] = to + l
		}
	}
	return strings.Join(ls, "\n")
}

// numberPrefix is read_file's line-number prefix ("%6d\t"), or a looser
// "12: "/"12 | " a model may copy from elsewhere.
var numberPrefix = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^ *[0-9]+(\t|: | \| )`) }}

// stripNumbers removes line-number prefixes from old when every non-empty
// line has one, and from new's lines that have one.
func stripNumbers(old, new string) (string, string, bool) {
	ol := strings.Split(old, "\n")
	n := 0
	for i, l := range ol {
		if l == "" {
			continue
		}
		loc := numberPrefix.Get().FindStringIndex(l)
		if loc == nil {
			return "", "", false
		}
		ol[i] = l[loc[1]:]
		n++
	}
	if n == 0 {
		return "", "", false
	}
	nl := strings.Split(new, "\n")
	for i, l := range nl {
		if loc := numberPrefix.Get().FindStringIndex(l); loc != nil {
			nl[i] = l[loc[1]:]
		}
	}
	return strings.Join(ol, "\n"), strings.Join(nl, "\n"), true
}

// norm trims s and folds typographic punctuation and odd spaces to ASCII.
func norm(s string) string { return strings.TrimSpace(punct.Get().Replace(s)) }

var punct = lazy.Value[*strings.Replacer]{New: func() *strings.Replacer {
	return strings.NewReplacer(
		"\u2010", "-", "\u2011", "-", "\u2012", "-", "\u2013", "-", "\u2014", "-", "\u2015", "-", "\u2212", "-",
		"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u201B", "'", "\u2032", "'",
		"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u201F", `"`, "\u2033", `"`,
		"\u2026", "...",
		"\u00A0", " ", "\u2002", " ", "\u2003", " ", "\u2004", " ", "\u2005", " ", "\u2006", " ",
		"\u2007", " ", "\u2008", " ", "\u2009", " ", "\u200A", " ", "\u202F", " ", "\u205F", " ", "\u3000", " ",
		"\t", " ",
	)
}}

// lineOf is the 1-based line of byte offset off in text.
func lineOf(text string, off int) int { return strings.Count(text[:min(off, len(text))], "\n") + 1 }

// numbered renders lines from..to (1-based, clamped) of text as numbered
// lines.
func numbered(text string, from, to int) string {
	ls, _ := splitLines(text)
	from, to = max(from, 1), min(to, len(ls))
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i, ls[i-1])
	}
	return b.String()
}

// closest describes the lines of text most like old, for a failed match.
func closest(text, old string) string {
	ol := strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	tl, _ := splitLines(text)
	if o, _, ok := stripNumbers(old, ""); ok {
		ol = strings.Split(strings.TrimSuffix(o, "\n"), "\n")
	}
	nt := make([]string, len(tl))
	for i, l := range tl {
		nt[i] = norm(l)
	}
	no := make([]string, len(ol))
	for i, l := range ol {
		no[i] = norm(l)
	}
	best, score := -1, 0
	for i := 0; i < len(tl); i++ {
		s := 0
		for j := 0; j < len(ol) && i+j < len(tl); j++ {
			if a, b := nt[i+j], no[j]; a != "" && (a == b || len(b) >= 8 && strings.Contains(a, b)) {
				s++
			}
		}
		if s > score {
			best, score = i, s
		}
	}
	if best < 0 {
		return " No line of old_string occurs in the file: read the file again (it may have changed) and copy the text exactly."
	}
	return fmt.Sprintf(" The closest lines (%d of %d lines of old_string similar) are:\n%sRead the file again and copy the text exactly, including whitespace.", score, len(ol), numbered(text, best-1, best+len(ol)+1))
}
