package tools

import (
	"fmt"
	"strings"
	"testing"
)

// scriptPage is a page with n inline scripts; with 4,000 it is the 4.8 MB
// page that took the old string scanner, quadratic in the scripts, 17.7 s.
func scriptPage(n int) string {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>Many scripts</title></head><body>\n")
	code := strings.Repeat("x", 1100)
	for i := range n {
		fmt.Fprintf(&b, "<p>Paragraph %d with <a href=\"/p/%d\">a link</a>.</p>\n<script>var v%d = \"%s\";</script>\n", i, i, i, code)
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// BenchmarkHTMLText converts pages of 1,000 and 4,000 scripts: the time
// per byte stays the same (linear).
func BenchmarkHTMLText(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		b.Run(fmt.Sprintf("scripts=%d", n), func(b *testing.B) {
			page := scriptPage(n)
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				htmlText(page)
			}
		})
	}
}

// BenchmarkHTMLTextNested converts 4.8 MB of nested lists, quotes and
// links, which the renderer caps at maxNesting levels: no cost per level.
func BenchmarkHTMLTextNested(b *testing.B) {
	for name, unit := range map[string]string{
		"lists":  "<ul><li>item ",
		"quotes": "<blockquote>quote ",
		"links":  "<a href=/x>link ",
	} {
		b.Run(name, func(b *testing.B) {
			page := strings.Repeat(unit, 4800<<10/len(unit))
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				htmlText(page)
			}
		})
	}
}
