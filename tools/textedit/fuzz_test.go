package textedit

import (
	"strings"
	"testing"
)

// FuzzReplace: Replace never panics; a success changes the content only
// inside the replaced region, keeps the file's CRLF endings, and with the
// exact matcher equals strings.Replace.
func FuzzReplace(f *testing.F) {
	f.Add("a\r\nb\r\nc\r\n", "a\nb", "x", false)
	f.Add("\t\tif x {\n\t\t\ty()\n\t\t}\n", "if x {\n\ty()\n}", "if y {\n}", false)
	f.Add("say “hi” — ok\n", "say \"hi\" - ok", "q", true)
	f.Add("a\nb\n", "     1\ta\n     2\tb", "     1\tc", false)
	f.Fuzz(func(t *testing.T, content, old, new string, all bool) {
		r, err := Replace(content, old, new, all)
		if err != nil {
			return
		}
		d := decode(content)
		if d.crlf && strings.Count(r.Content, "\n") != strings.Count(r.Content, "\r\n") {
			t.Fatalf("CRLF file got LF endings: %q", r.Content)
		}
		if r.Matcher == Exact && !d.crlf && !d.bom && !strings.Contains(old, "\r") && !strings.Contains(new, "\r") {
			n := 1
			if all {
				n = -1
			}
			if want := strings.Replace(content, old, new, n); r.Content != want {
				t.Fatalf("exact: got %q, want %q", r.Content, want)
			}
		}
		_, ms := find(d.text, lf(old), lf(new))
		if len(ms) == 0 {
			t.Fatal("success without a match")
		}
		first, last := ms[0], ms[len(ms)-1]
		text := strings.TrimPrefix(r.Content, "\ufeff")
		if d.crlf {
			text = strings.ReplaceAll(text, "\r\n", "\n")
		}
		if !strings.HasPrefix(text, d.text[:first.start]) || !strings.HasSuffix(text, d.text[last.end:]) {
			t.Fatalf("content outside the region changed: %q -> %q", d.text, text)
		}
		if r.First < 1 || r.Count != len(ms) {
			t.Fatalf("bad result %+v", r)
		}
	})
}
