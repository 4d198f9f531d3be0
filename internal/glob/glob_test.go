package glob

import (
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pat, name string
		want      bool
	}{
		{"**/*.go", "a.go", true},
		{"**/*.go", "x/y/a.go", true},
		{"*.go", "x/a.go", false},
		{"src/**", "src/a/b", true},
		{"docs/**", "docs", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a?c", "abc", true},
		{"a?c", "a/c", false},
		{"[!a]x", "bx", true},
		{"[!a]x", "ax", false},
		{"[^a]x", "ax", false},
		{"*.{ts,tsx}", "a.tsx", true},
		{"{src/*,docs}", "src/a", true},
		{`\*`, "*", true},
		{`\*`, "a", false},
	} {
		p, err := Compile(c.pat)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.pat, err)
			continue
		}
		if got := p.Match(c.name); got != c.want {
			t.Errorf("%q matching %q = %v, want %v", c.pat, c.name, got, c.want)
		}
	}
	for _, bad := range []string{"[a", "{a", `a\`, strings.Repeat("{a,b}", maxAlternatives+1)} {
		if _, err := Compile(bad); err == nil {
			t.Errorf("Compile(%q) accepted", bad)
		}
	}
}

func TestEscape(t *testing.T) {
	for _, s := range []string{"plain", "a*b", "[x].go", "{a,b}", `back\slash`, "q?"} {
		p, err := Compile(Escape(s))
		if err != nil {
			t.Fatalf("Compile(Escape(%q)): %v", s, err)
		}
		if !p.Match(s) {
			t.Errorf("Escape(%q) = %q does not match it", s, Escape(s))
		}
		if s != "plain" && p.Match("plain") {
			t.Errorf("Escape(%q) matches other names", s)
		}
	}
}

// FuzzMatch: any pattern either fails to compile or matches without
// panicking, and without classes, braces or "**" a match never has more
// slashes than the pattern.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"**/*.go", "*.{ts,tsx}", "a?c", "[!a-z]*", "src/**", "{", "[", "**", "a/**/b"} {
		f.Add(s, "a/b")
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		p, err := Compile(pat)
		if err != nil {
			return
		}
		if p.Match(name) && !strings.ContainsAny(pat, "[{\\") && !strings.Contains(pat, "**") && strings.Count(name, "/") > strings.Count(pat, "/") {
			t.Fatalf("pattern %q matched %q across a directory", pat, name)
		}
	})
}
