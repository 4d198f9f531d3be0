package uihost

import (
	"html"
	"testing"
)

// TestEscapeHTML: escapeHTML escapes as html.EscapeString does.
func TestEscapeHTML(t *testing.T) {
	for _, s := range []string{"", "plain", `<a href="x">'&amp;'</a>`, "é<\x00>\"'", "&&<<>>"} {
		if got, want := escapeHTML(s), html.EscapeString(s); got != want {
			t.Errorf("escapeHTML(%q) = %q, want %q", s, got, want)
		}
	}
}

func FuzzEscapeHTML(f *testing.F) {
	f.Add(`<a href="x">'&'</a>`)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := escapeHTML(s), html.EscapeString(s); got != want {
			t.Fatalf("escapeHTML(%q) = %q, want %q", s, got, want)
		}
	})
}
