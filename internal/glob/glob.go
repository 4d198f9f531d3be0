// Package glob is acpd's one glob dialect, shared by the search tools (glob,
// grep's include) and the permission rules (tool names, paths, command
// words). It is doublestar's (github.com/bmatcuk/doublestar/v4) on
// slash-separated paths: "*" matches any characters but "/", "?" one
// character but "/"; "**" as a whole path segment matches zero or more
// segments ("src/**", "**/*.go") and elsewhere acts as "*"; "[abc]" is a
// character class ("[!abc]" and "[^abc]" negate it, "a-z" is a range);
// "{a,b}" are alternatives, which may hold patterns and nest; a backslash
// makes the next character literal. A pattern matches the whole name.
package glob

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// maxAlternatives bounds the {...} groups of a pattern: each is tried
// alternative by alternative, so a match costs up to the product of their
// sizes.
const maxAlternatives = 10

// Pattern is a compiled glob. The zero Pattern matches only "".
type Pattern struct{ p string }

// Compile checks pattern; the error says what is wrong with it.
func Compile(pattern string) (Pattern, error) {
	if !doublestar.ValidatePattern(pattern) {
		return Pattern{}, errors.New("unbalanced [ ] or { }, or a trailing \\")
	}
	if n := countUnescaped(pattern, '{'); n > maxAlternatives {
		return Pattern{}, fmt.Errorf("more than %d { } groups", maxAlternatives)
	}
	return Pattern{pattern}, nil
}

// Match reports whether the slash-separated name matches the pattern.
func (p Pattern) Match(name string) bool {
	return doublestar.MatchUnvalidated(p.p, name)
}

// String returns the pattern as written.
func (p Pattern) String() string { return p.p }

// special are the characters Escape escapes.
const special = `\*?[]{}`

// Escape returns a pattern matching exactly s.
func Escape(s string) string {
	if !strings.ContainsAny(s, special) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(special, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func countUnescaped(s string, c byte) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case c:
			n++
		}
	}
	return n
}
