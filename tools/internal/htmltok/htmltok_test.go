package htmltok

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"golang.org/x/net/html"
)

// tokenizer is the API htmltok shares with x/net/html's Tokenizer.
type tokenizer[T ~uint32] interface {
	Next() T
	Err() error
	Text() []byte
	TagName() ([]byte, bool)
	TagAttr() ([]byte, []byte, bool)
}

var typeNames = [...]string{"Error", "Text", "StartTag", "EndTag", "SelfClosingTag", "Comment", "Doctype"}

// tokens returns the tokens z reads, one line each: its type and text, or
// its name, whether it has attributes and its attributes; and the error
// that ends them. It fails the test if z does not end within max tokens or
// if Next after the end returns another token.
func tokens[T ~uint32](t *testing.T, z tokenizer[T], max int) ([]string, error) {
	t.Helper()
	var out []string
	for range max {
		tt := z.Next()
		if int(tt) >= len(typeNames) {
			t.Fatalf("token type %d", tt)
		}
		line := typeNames[tt]
		switch TokenType(tt) {
		case ErrorToken:
			err := z.Err()
			if z.Next() != 0 || z.Err() != err {
				t.Fatalf("a token after the end (%v)", err)
			}
			return out, err
		case TextToken, CommentToken, DoctypeToken:
			line += fmt.Sprintf(" %q", z.Text())
		case StartTagToken, EndTagToken, SelfClosingTagToken:
			name, more := z.TagName()
			line += fmt.Sprintf(" %q %v", name, more)
			for more {
				var k, v []byte
				k, v, more = z.TagAttr()
				line += fmt.Sprintf(" %q=%q", k, v)
			}
		}
		out = append(out, line)
	}
	t.Fatalf("no end after %d tokens", max)
	return nil, nil
}

// chunks is an input read at most n bytes at a time, then err (io.EOF if
// nil).
type chunks struct {
	s   []byte
	n   int
	err error
}

func (c *chunks) Read(b []byte) (int, error) {
	if len(c.s) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), c.n)], c.s)
	c.s = c.s[n:]
	return n, nil
}

var errRead = errors.New("read error")

// compare fails the test if htmltok's tokens of doc, read n bytes at a
// time then failing with err, are not x/net/html's.
func compare(t *testing.T, doc []byte, n int, err error) {
	t.Helper()
	// Every token but the last one takes at least a byte.
	max := len(doc) + 2
	want, wantErr := tokens(t, html.NewTokenizer(&chunks{bytes.Clone(doc), n, err}), max)
	got, gotErr := tokens(t, NewTokenizer(&chunks{bytes.Clone(doc), n, err}), max)
	if strings.Join(got, "\n") != strings.Join(want, "\n") || gotErr != wantErr {
		t.Fatalf("%q read %d bytes at a time (then %v):\ngot\n%s\n%v\nwant (x/net/html)\n%s\n%v",
			doc, n, err, strings.Join(got, "\n"), gotErr, strings.Join(want, "\n"), wantErr)
	}
}

// tricky are inputs at the edges of the tokenizer's states.
var tricky = []string{
	"", "plain", "a<b>c</b>d", "<", "<<", "a<", "</", "</>", "</ x>", "<?xml version=1?>", "<!", "<!>", "<!>x", "<!-", "<!x",
	"<!--", "<!---", "<!---->", "<!-->", "<!--->", "<!--a--!>b", "<!--a--!", "<!--a--", "<!--a-", "<!--a--!-->", "<!--a--!x-->", "<!-- &amp; \x00 \r\n -->",
	"<!DOCTYPE html>", "<!doctype>", "<!DOCTYPE", "<!DOC", "<!DOCTYPEhtml>", "<!DOCTYPE \x00 &amp;>", "<![CDATA[x]]>",
	"<a href=x>", "<A HREF='X' Title=\"T\">", "<a b c=d e = 'f' g=\"h\"/>", "<a b=/>", "<p a=/ >", "<br/>", "<br />", "<a / b>", "<a =b>", "<a ==b>",
	"<a b==c>", "<a x=1 X=2 x=3>", "<a x=1 x=/>", "<a b='c", "<a b", "<a", "<a\x00b c\x00=d\x00>", "<a b=\"c\r\nd\rE\">", "<a\tb\fc\nd\re>",
	"<a href='&amp;&lt&notit;&noti=&amp=&ampx'>", "&amp;&lt&notit;&noti=&amp=&ampx&#65;&#x41;&#X41&#;&#x;&#0;&#128;&#x9f;&#xD800;&#x110000;&#99999999999;",
	"&nvgt;&NotEqualTilde;&#x26;&", "&&&", "&;", "&a;", "& x", "\r\n\r\r\n\n\r", "a\x00b",
	"<script>a<b></script>", "<script>a</script >b", "<SCRIPT>x</SCRIPT>", "<script><!--<script></script>--></script>x", "<script><!--<script>-></script>--></script>y",
	"<script><!-- --></script>", "<script><!--a</script>", "<script><!--<SCRIPT>a</script>b</script>", "<script><!--<scriptx></script>", "<script><!-", "<script><!--<script",
	"<script><!--<script>--<-->", "<script>\x00</script>", "<script></script>", "<script/>x</script>", "<script>a</scrip", "<script>a</",
	"<style>&amp;<b></style>", "<textarea>&amp;<b></textarea>", "<title>&lt;\x00</title>", "<title></title>", "<xmp><p></xmp>", "<iframe><b></iframe>",
	"<noembed>&amp;</noembed>", "<noframes>a</noframes>", "<noscript>a</noscript>", "<plaintext>a</plaintext><b>&amp;\x00", "<plaintext>", "<title>a</titlex></title>",
	"<TiTlE>a</tItLe>", "<title>a</title\x00>", "<textarea>a</textarea/b>",
}

func TestTokens(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"a&amp;b<p class=x>c", "Text \"a&b\"|StartTag \"p\" true \"class\"=\"x\"|Text \"c\""},
		{"<A HREF='&lt;X'>", "StartTag \"a\" true \"href\"=\"<X\""},
		{"<br/><p a=/>", "SelfClosingTag \"br\" false|StartTag \"p\" true \"a\"=\"/\""},
		{"<a x=1 X=2>", "StartTag \"a\" true \"x\"=\"1\""},
		{"<script>a<b>&amp;</script>", "StartTag \"script\" false|Text \"a<b>&amp;\"|EndTag \"script\" false"},
		{"<title>&lt;b&gt;</title>", "StartTag \"title\" false|Text \"<b>\"|EndTag \"title\" false"},
		{"<!--x--><!DOCTYPE html><?pi>", "Comment \"x\"|Doctype \"html\"|Comment \"?pi\""},
		{"&notit; &#150; &#0; a\r\nb", "Text \"¬it; – \ufffd a\\nb\""},
		{"<a href='&notit=1&amp=2'>", "StartTag \"a\" true \"href\"=\"&notit=1&amp=2\""},
		{"<p", ""},
	} {
		got, err := tokens(t, NewTokenizer(strings.NewReader(c.doc)), 100)
		if strings.Join(got, "|") != c.want || err != io.EOF {
			t.Errorf("%q:\ngot  %s (%v)\nwant %s", c.doc, strings.Join(got, "|"), err, c.want)
		}
	}
}

// TestSameAsXNetHTML: the tricky inputs, and all of them at once, read
// whole, in small pieces and a byte at a time, to the end or to an error.
func TestSameAsXNetHTML(t *testing.T) {
	docs := append(tricky, strings.Join(tricky, ""), strings.Join(tricky, "\n"))
	for _, doc := range docs {
		for _, n := range []int{1, 3, 1 << 20} {
			compare(t, []byte(doc), n, nil)
			compare(t, []byte(doc), n, errRead)
		}
	}
}

// TestEntities: every named reference decodes as x/net/html decodes it, in
// text and in an attribute value, alone and followed by a letter, a digit,
// '=' or ';'.
func TestEntities(t *testing.T) {
	var text, attrs strings.Builder
	for _, e := range entities {
		for _, after := range []string{"", "x", "1", "=", ";", " "} {
			text.WriteString("&" + e.name() + after + " ")
			attrs.WriteString("<a b='&" + e.name() + after + "'>")
		}
	}
	if len(entities) != 2231 {
		t.Errorf("%d entities, want 2231", len(entities))
	}
	compare(t, []byte(text.String()), 1<<20, nil)
	compare(t, []byte(attrs.String()), 1<<20, nil)
}

// TestLongTokens: a long token read a byte at a time takes linear time (a
// quadratic tokenizer would take minutes), and the buffer stays within
// about twice the longest token.
func TestLongTokens(t *testing.T) {
	const size = 1 << 20
	for _, doc := range []string{
		"<!--" + strings.Repeat("-x", size/2) + "-->",
		"<a " + strings.Repeat("k", size) + "=v>",
		"<script>" + strings.Repeat("<!--<script>", size/12) + "</script>",
		strings.Repeat("&ampx", size/5),
	} {
		z := NewTokenizer(iotest.OneByteReader(strings.NewReader(doc)))
		for z.Next() != ErrorToken {
			z.Text()
		}
		if z.Err() != io.EOF {
			t.Errorf("%.20q…: %v", doc, z.Err())
		}
		if cap(z.buf) > 2*len(doc)+4096 {
			t.Errorf("%.20q…: a buffer of %d bytes for %d", doc, cap(z.buf), len(doc))
		}
	}
}

// TestSmallTokensSmallBuffer: many small tokens keep the buffer at its
// first size.
func TestSmallTokensSmallBuffer(t *testing.T) {
	doc := strings.Repeat("<p class=x>text &amp; more</p>\n", 1<<15)
	z := NewTokenizer(strings.NewReader(doc))
	n := 0
	for z.Next() != ErrorToken {
		n++
	}
	if n != 4<<15 || cap(z.buf) > 4096 {
		t.Errorf("%d tokens, a buffer of %d bytes", n, cap(z.buf))
	}
}

// TestManyAttributes: a tag of many distinct attributes takes linear time
// (their keys are not compared pairwise), duplicates dropped as x/net/html
// drops them.
func TestManyAttributes(t *testing.T) {
	var b strings.Builder
	b.WriteString("<a")
	for i := range 100000 {
		fmt.Fprintf(&b, " k%d=%d K%d=x", i, i, i)
	}
	b.WriteString(">")
	z := NewTokenizer(strings.NewReader(b.String()))
	if z.Next() != StartTagToken {
		t.Fatal("no start tag")
	}
	n := 0
	for more := true; more; n++ {
		var k, v []byte
		k, v, more = z.TagAttr()
		if want := fmt.Sprint(n); string(k) != "k"+want || string(v) != want {
			t.Fatalf("attribute %d: %s=%s", n, k, v)
		}
	}
	if n != 100000 {
		t.Errorf("%d attributes", n)
	}
	compare(t, []byte(b.String()[:20000]+">"), 1<<20, nil)
}

// TestNoInit: the package has no initialisation code. A program that
// links it (testdata/noinit) has no htmltok.init function (a package-level
// map or a value computed at start-up would make one, which the linker
// keeps), GODEBUG=inittrace=1 names no htmltok, and the table of entities
// is data laid out by the linker: not zeroed memory filled at start-up,
// and (where the program is ELF) in .noptrdata, which the garbage
// collector does not scan.
func TestNoInit(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	bin := filepath.Join(t.TempDir(), "noinit")
	if out, err := exec.Command(goTool, "build", "-o", bin, "./testdata/noinit").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	syms, err := exec.Command(goTool, "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	const entitiesSym = "acpd/tools/internal/htmltok.entities"
	entities := false
	for _, l := range strings.Split(string(syms), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 || !strings.HasPrefix(f[2], "acpd/tools/internal/htmltok.") {
			continue
		}
		switch name := strings.TrimPrefix(f[2], "acpd/tools/internal/htmltok."); {
		case strings.HasPrefix(name, "init"):
			t.Errorf("the package has initialisation code: %s", l)
		case name == "entities":
			entities = true
			if f[1] != "D" && f[1] != "R" {
				t.Errorf("the entities are not static data: %s", l)
			}
		}
	}
	if !entities {
		t.Errorf("go tool nm lists no htmltok.entities:\n%.2000s", syms)
	}
	if f, err := elf.Open(bin); err == nil {
		defer f.Close()
		syms, err := f.Symbols()
		if err != nil {
			t.Fatal(err)
		}
		section := ""
		for _, s := range syms {
			if s.Name == entitiesSym && int(s.Section) < len(f.Sections) {
				section = f.Sections[s.Section].Name
			}
		}
		if section != ".noptrdata" {
			t.Errorf("htmltok.entities is in section %q, not .noptrdata", section)
		}
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	cmd.Stdin = strings.NewReader("a&amp;b")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "a&b") || strings.Contains(string(out), "htmltok") {
		t.Errorf("GODEBUG=inittrace=1 noinit: %v\n%s", err, out)
	}
}

// FuzzTokenizer: for any input, read in pieces of any size and ended by
// io.EOF or a read error, htmltok's tokens (types, text, tag names,
// attributes) and final error are x/net/html's. tokens also checks that
// the tokenizer ends (within a token per byte) and stays ended; the fuzzer
// that it does not panic.
func FuzzTokenizer(f *testing.F) {
	for _, s := range tricky {
		f.Add([]byte(s), uint16(1<<15), false)
	}
	f.Add([]byte(strings.Join(tricky, "")), uint16(7), true)
	f.Fuzz(func(t *testing.T, doc []byte, n uint16, fail bool) {
		var err error
		if fail {
			err = errRead
		}
		compare(t, doc, int(n)+1, err)
	})
}
