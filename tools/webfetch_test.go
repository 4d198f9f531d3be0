package tools

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestHTMLText(t *testing.T) {
	doc := `<!doctype html><html><head><title>T</title><style>p{color:red}</style></head>
<body><h1>Install</h1><!-- hidden --><p>Run <code>go&nbsp;install</code> &amp; enjoy.</p>
<script>alert("x<p>")</script><ul><li>one</li><li><a href="/docs?a=1&amp;b=2">the docs</a></li></ul>
<table><tr><td>a</td><td>b</td></tr></table></body></html>`
	want := "# Install\n\nRun go install & enjoy.\n\n- one\n- [the docs](/docs?a=1&b=2)\n\n| a | b\n"
	if got := htmlText(doc); got != want {
		t.Errorf("htmlText:\n%q\nwant\n%q", got, want)
	}
}

func FuzzHTMLText(f *testing.F) {
	f.Add(`<p>a <a href='x'>b</a></p><script>`)
	f.Add(`<<<>>><!-- <a href="`)
	f.Fuzz(func(t *testing.T, doc string) {
		out := htmlText(doc)
		if utf8.ValidString(doc) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 from valid input: %q", out)
		}
		if strings.Contains(out, "\n\n\n") {
			t.Fatalf("blank lines not collapsed: %q", out)
		}
	})
}
