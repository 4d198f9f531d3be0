package tools

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"acpd/internal/lazy"
	"acpd/tools/internal/htmltok"
)

// maxMarkdownBytes bounds the text htmlMarkdown produces (links resolved
// against a long base URL could make it larger than the page).
const maxMarkdownBytes = 2 * maxFetchBytes

// maxNesting bounds the list, quote and link levels rendered: deeper ones
// are rendered as the deepest (so a page of nested tags costs no more per
// byte than any other).
const maxNesting = 16

// ctxCheckTokens is how many tokens htmlMarkdown reads between checks of
// its context.
const ctxCheckTokens = 256

// skipped reports the elements whose content is not text for a reader.
// (A switch, not a map: a package-level map is built at every start.)
func skipped(name string) bool {
	switch name {
	case "script", "style", "noscript", "svg", "math", "template",
		"head", "iframe", "object", "canvas", "select", "textarea":
		return true
	}
	return false
}

// blocks reports the elements that start and end a paragraph.
func blocks(name string) bool {
	switch name {
	case "p", "div", "section", "article", "header", "footer",
		"main", "nav", "aside", "table", "blockquote", "hr",
		"dl", "dt", "dd", "title", "figure", "figcaption",
		"form", "fieldset", "details", "summary", "address",
		"caption":
		return true
	}
	return false
}

// htmlText renders an HTML document as Markdown text (see htmlMarkdown),
// with relative links kept as they are.
func htmlText(doc string) string {
	s, _ := htmlMarkdown(context.Background(), strings.NewReader(doc), nil)
	return s
}

// htmlMarkdown renders the HTML document r reads as Markdown text for a
// model: headings become "#" lines, links [text](href) (relative ones
// resolved against base when base is not nil; fragment-only and javascript:
// links keep only their text), lists "-" or "1." items indented by their
// depth, blockquotes "> " lines, table rows "| a | b", and <pre> blocks
// fenced code blocks (their language from a language-* or lang-* class)
// whose lines are kept as written. Scripts, styles, the head, comments and
// similar elements are dropped, entities are decoded, whitespace outside
// code blocks is collapsed, and no two blank lines follow each other
// (a run of blank lines in a code block is kept as one).
//
// It reads r once, in time linear in its size, and checks ctx as it goes:
// it returns ctx's error once ctx is done, and the text so far with it.
// Output beyond maxMarkdownBytes is dropped with a note saying so.
func htmlMarkdown(ctx context.Context, r io.Reader, base *url.URL) (string, error) {
	z := htmltok.NewTokenizer(r)
	w := &mdWriter{base: base}
	var err error
	for n := 0; ; n++ {
		if n%ctxCheckTokens == 0 {
			if err = ctx.Err(); err != nil {
				break
			}
		}
		tt := z.Next()
		if tt == htmltok.ErrorToken {
			if e := z.Err(); !errors.Is(e, io.EOF) {
				err = e
			}
			break
		}
		w.token(z, tt)
		if w.out.Len() > maxMarkdownBytes {
			w.cut = true
			break
		}
	}
	return w.finish(), err
}

// mdWriter turns a token stream into Markdown.
type mdWriter struct {
	base *url.URL
	out  bytes.Buffer
	cut  bool

	// skip is the element whose content is being dropped ("" for none),
	// skipDepth how many of it are open.
	skip      string
	skipDepth int

	// Pending layout: newlines before the next text (at most 2, a blank
	// line), a space before it, and whether anything was written yet.
	newlines int
	space    bool
	started  bool
	// marker is a list item's marker waiting for the item's first text.
	marker string
	// glued means the last write opened something ("# ", "["): the next
	// text follows it without a space.
	glued bool

	lists []listLevel
	quote int
	links []openLink
	// deepLists and deepLinks count the levels opened beyond maxNesting.
	deepLists, deepLinks int

	// pre collects the text of an open <pre> (preDepth of them).
	pre      strings.Builder
	preDepth int
	preLang  string
}

// openLink is an <a> being written.
type openLink struct {
	href string // "" for a link that leads nowhere: only its text is kept
	// at is the output's length after its "["; before is the layout
	// before the "[", restored when the link gets no text (an image).
	at     int
	before layout
}

// layout is the mdWriter's pending layout.
type layout struct {
	outLen         int
	newlines       int
	space, started bool
	marker         string
}

func (w *mdWriter) layout() layout {
	return layout{w.out.Len(), w.newlines, w.space, w.started, w.marker}
}

type listLevel struct {
	ordered bool
	n       int  // the last item's number
	items   bool // an item was started: text in the list is indented
}

func (w *mdWriter) token(z *htmltok.Tokenizer, tt htmltok.TokenType) {
	switch tt {
	case htmltok.TextToken:
		if w.skip != "" {
			return
		}
		if w.preDepth > 0 {
			w.pre.Write(z.Text())
			return
		}
		w.text(string(z.Text()))
	case htmltok.StartTagToken, htmltok.SelfClosingTagToken:
		name, hasAttr := z.TagName()
		w.start(z, string(name), hasAttr, tt == htmltok.SelfClosingTagToken)
	case htmltok.EndTagToken:
		name, _ := z.TagName()
		w.end(string(name))
	}
}

// attr returns the value of the current tag's attribute key.
func attr(z *htmltok.Tokenizer, hasAttr bool, key string) string {
	for hasAttr {
		var k, v []byte
		k, v, hasAttr = z.TagAttr()
		if string(k) == key {
			return string(v)
		}
	}
	return ""
}

func (w *mdWriter) start(z *htmltok.Tokenizer, name string, hasAttr, selfClosing bool) {
	if w.skip != "" {
		if name == w.skip && !selfClosing {
			w.skipDepth++
		}
		if !(w.skip == "head" && name == "body") {
			return
		}
		w.skip, w.skipDepth = "", 0 // <body> ends an unclosed <head>
	}
	if skipped(name) {
		if !selfClosing {
			w.skip, w.skipDepth = name, 1
		}
		return
	}
	if w.preDepth > 0 {
		switch name {
		case "pre":
			w.preDepth++
		case "br":
			w.pre.WriteByte('\n')
		case "code":
			if w.preLang == "" {
				w.preLang = codeLang(attr(z, hasAttr, "class"))
			}
		}
		return
	}
	switch name {
	case "pre":
		w.block(2)
		w.preDepth, w.preLang = 1, codeLang(attr(z, hasAttr, "class"))
		w.pre.Reset()
	case "br":
		w.lineBreak()
	case "h1", "h2", "h3", "h4", "h5", "h6":
		w.block(2)
		w.write(strings.Repeat("#", int(name[1]-'0')) + " ")
		w.glued = true
	case "ul", "ol":
		w.block(w.listGap())
		if len(w.lists) == maxNesting {
			w.deepLists++
			break
		}
		w.lists = append(w.lists, listLevel{ordered: name == "ol"})
		if n, err := strconv.Atoi(attr(z, hasAttr, "start")); err == nil && name == "ol" && n >= 0 && n < 1e9 {
			w.lists[len(w.lists)-1].n = n - 1
		}
	case "li":
		w.item()
	case "blockquote":
		w.block(2)
		w.quote++
	case "a":
		if len(w.links) == maxNesting {
			w.deepLinks++
			break
		}
		l := openLink{href: w.link(attr(z, hasAttr, "href")), before: w.layout()}
		if l.href != "" {
			w.write("[")
			w.glued = true
		}
		l.at = w.out.Len()
		w.links = append(w.links, l)
	case "tr":
		w.block(1)
	case "td", "th":
		w.space = true
		w.write("|")
		w.space = true
	default:
		if blocks(name) {
			w.block(2)
		}
	}
}

func (w *mdWriter) end(name string) {
	if w.skip != "" {
		if name == w.skip {
			w.skipDepth--
			if w.skipDepth == 0 {
				w.skip = ""
			}
		}
		return
	}
	if w.preDepth > 0 {
		if name == "pre" {
			w.preDepth--
			if w.preDepth == 0 {
				w.codeBlock()
			}
		}
		return
	}
	switch name {
	case "h1", "h2", "h3", "h4", "h5", "h6":
		w.block(2)
	case "ul", "ol":
		if w.deepLists > 0 {
			w.deepLists--
		} else if len(w.lists) > 0 {
			w.lists = w.lists[:len(w.lists)-1]
		}
		w.marker = ""
		w.block(w.listGap())
	case "li":
		w.marker = ""
		w.block(1)
	case "blockquote":
		if w.quote > 0 {
			w.quote--
		}
		w.block(2)
	case "a":
		if w.deepLinks > 0 {
			w.deepLinks--
			return
		}
		if len(w.links) == 0 {
			return
		}
		l := w.links[len(w.links)-1]
		w.links = w.links[:len(w.links)-1]
		switch {
		case l.href == "":
		case w.out.Len() == l.at:
			// No text (an image): take the "[" back.
			b := l.before
			w.out.Truncate(b.outLen)
			w.newlines, w.space, w.started, w.marker = b.newlines, b.space, b.started, b.marker
			w.glued = false
		default:
			space := w.space
			w.space = false
			w.write("](" + l.href + ")")
			w.space = space
		}
	case "tr":
		w.block(1)
	default:
		if blocks(name) {
			w.block(2)
		}
	}
}

// listGap is the break around a list: a blank line at the outermost level,
// a line break inside an item.
func (w *mdWriter) listGap() int {
	if len(w.lists) > 0 {
		return 1
	}
	return 2
}

// item starts a list item.
func (w *mdWriter) item() {
	if len(w.lists) == 0 {
		w.lists = append(w.lists, listLevel{}) // a stray <li>
	}
	w.block(1)
	l := &w.lists[len(w.lists)-1]
	l.n++
	l.items = true
	w.marker = "- "
	if l.ordered {
		w.marker = strconv.Itoa(l.n) + ". "
	}
}

// link is the target shown for an href: resolved against the base, or ""
// when it leads nowhere a reader could follow.
func (w *mdWriter) link(href string) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
		return ""
	}
	if w.base != nil {
		if u, err := w.base.Parse(href); err == nil {
			href = u.String()
		}
	}
	return hrefEscaper.Get().Replace(href)
}

// hrefEscaper keeps a link's Markdown intact: no raw spaces, newlines or
// parentheses in its target.
var hrefEscaper = lazy.Value[*strings.Replacer]{New: func() *strings.Replacer {
	return strings.NewReplacer(" ", "%20", "\n", "", "\r", "", "\t", "", "(", "%28", ")", "%29")
}}

// codeLang is the language a class attribute names (language-go, lang-go).
func codeLang(class string) string {
	for _, c := range strings.Fields(class) {
		for _, p := range []string{"language-", "lang-"} {
			if l, ok := strings.CutPrefix(c, p); ok && l != "" && !strings.ContainsAny(l, "`~") {
				return l
			}
		}
	}
	return ""
}

// block asks for a line break (n 1) or a blank line (n 2) before the next
// text. Inside a list item that has no text yet it asks for nothing: the
// text follows the marker.
func (w *mdWriter) block(n int) {
	if w.marker != "" {
		return
	}
	w.newlines = max(w.newlines, n)
	w.space = false
}

// lineBreak is a <br>: a line break, even after another one.
func (w *mdWriter) lineBreak() {
	if w.marker != "" {
		return
	}
	if w.newlines == 0 {
		w.newlines = 1
	} else {
		w.newlines = 2
	}
	w.space = false
}

// writePrefix writes what starts a line at the current depth: quote
// marks, then the list indentation (the marker on an item's first line).
func (w *mdWriter) writePrefix() {
	for range min(w.quote, maxNesting) {
		w.out.WriteString("> ")
	}
	depth := 0
	for _, l := range w.lists {
		if l.items {
			depth++
		}
	}
	if w.marker != "" {
		depth--
	}
	for range depth {
		w.out.WriteString("  ")
	}
	w.out.WriteString(w.marker)
}

// writeQuoteMarks starts an empty line: only the quote marks, without
// trailing spaces.
func (w *mdWriter) writeQuoteMarks() {
	for i := range min(w.quote, maxNesting) {
		if i > 0 {
			w.out.WriteByte(' ')
		}
		w.out.WriteByte('>')
	}
}

// write writes s, after the pending line breaks (with the prefix) or space.
func (w *mdWriter) write(s string) {
	if !w.started {
		w.newlines = 0
		w.started = true
		w.writePrefix()
	} else if w.newlines > 0 {
		if w.newlines > 1 {
			w.out.WriteByte('\n')
			w.writeQuoteMarks()
		}
		w.out.WriteByte('\n')
		w.writePrefix()
	} else if w.space {
		w.out.WriteByte(' ')
	} else if w.marker != "" {
		w.out.WriteString(w.marker)
	}
	w.newlines, w.space, w.marker, w.glued = 0, false, "", false
	w.out.WriteString(s)
}

// text writes running text with its whitespace collapsed.
func (w *mdWriter) text(t string) {
	first := true
	for len(t) > 0 {
		r, size := utf8.DecodeRuneInString(t)
		if unicode.IsSpace(r) {
			t = t[size:]
			if w.started && w.newlines == 0 && !w.glued {
				w.space = true
			}
			continue
		}
		end := strings.IndexFunc(t, unicode.IsSpace)
		if end < 0 {
			end = len(t)
		}
		if first && w.atLineStart() {
			w.space = false
		}
		first = false
		w.write(t[:end])
		t = t[end:]
	}
}

// atLineStart reports whether the next text starts a line.
func (w *mdWriter) atLineStart() bool {
	return !w.started || w.newlines > 0 || w.marker != ""
}

// codeBlock writes the collected <pre> text as a fenced code block.
func (w *mdWriter) codeBlock() {
	code := w.pre.String()
	w.pre.Reset()
	code = strings.TrimPrefix(code, "\n") // HTML drops a newline right after <pre>
	code = strings.ReplaceAll(code, "\r\n", "\n")
	var lines []string
	blank := false
	for _, l := range strings.Split(strings.TrimRight(code, " \t\r\n"), "\n") {
		l = strings.TrimRightFunc(l, unicode.IsSpace)
		if l == "" {
			if blank || len(lines) == 0 {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return
	}
	fence := strings.Repeat("`", max(3, longestRun(code, '`')+1))
	w.block(2)
	w.write(fence + w.preLang)
	for _, l := range lines {
		w.newlines = 1
		if l == "" {
			// An empty line: only the quote marks, no trailing spaces.
			w.out.WriteByte('\n')
			w.writeQuoteMarks()
			w.newlines = 0
			continue
		}
		w.write(l)
	}
	w.newlines = 1
	w.write(fence)
	w.block(2)
	w.preLang = ""
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// finish ends the text: an open code block is written, trailing space is
// trimmed and the text ends with one newline ("" for no text).
func (w *mdWriter) finish() string {
	if w.preDepth > 0 {
		w.preDepth = 0
		w.codeBlock()
	}
	w.out.Truncate(len(bytes.TrimRightFunc(w.out.Bytes(), unicode.IsSpace)))
	if w.out.Len() == 0 {
		return ""
	}
	if w.cut {
		w.out.WriteString("\n\n[… the rest of the page was cut: the text is longer than " + strconv.Itoa(maxMarkdownBytes>>20) + " MB …]")
	}
	w.out.WriteByte('\n')
	return w.out.String()
}
