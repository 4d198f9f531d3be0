// Package htmltok splits HTML into tokens as golang.org/x/net/html's
// Tokenizer does: for every input, the same tokens with the same text, tag
// names and attributes (FuzzTokenizer compares the two). It has the part
// of x/net/html's API that web_fetch uses, and none of its start-up cost:
// the package has no initialisation code (no init function, no variable
// built at start-up), and its table of named character references is a
// literal of constants without pointers, searched by binary search: static
// data, untouched (by the garbage collector too) until a lookup.
//
// The tokenizer reads its input as it goes; its buffer holds the current
// token and what the last read brought beyond it, so it grows to at most
// twice the longest token (4 KiB at least). It takes time linear in the
// input's size.
package htmltok

//go:generate go run ./internal/gen

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// A TokenType is the type of a token.
type TokenType uint32

// The types of tokens, with x/net/html's values.
const (
	// ErrorToken ends the tokens: Err tells why (io.EOF at the end of
	// the input).
	ErrorToken TokenType = iota
	// TextToken is text.
	TextToken
	// StartTagToken is a tag like <a>.
	StartTagToken
	// EndTagToken is a tag like </a>.
	EndTagToken
	// SelfClosingTagToken is a tag like <br/>.
	SelfClosingTagToken
	// CommentToken is a comment like <!--x-->, or a bogus one: <?x>, <!x>
	// or </ followed by other than a letter.
	CommentToken
	// DoctypeToken is a declaration like <!DOCTYPE x>.
	DoctypeToken
)

// span is a range of the current token's bytes: offsets from its start.
type span struct{ start, end int }

// A Tokenizer splits the HTML its reader reads into tokens. It is not safe
// for concurrent use, and the slices its methods return are valid only
// until the next call of Next.
type Tokenizer struct {
	r       io.Reader
	readErr error // the reader's error, reported once buf is used up
	err     error // why the tokens ended; set, it stays

	// buf[start:] is the input not tokenized yet, buf[start:start+n] the
	// current token's bytes so far (n is the tokenizer's position). The
	// spans count from start, so moving the token to the front of buf
	// changes only start.
	buf      []byte
	start, n int

	tt TokenType
	// data is the text of a text, comment or doctype token, or the name
	// of a tag.
	data span
	// attrs are a start tag's attributes (key, value), each key's first;
	// nAttr of them were returned by TagAttr. keys holds the lower-cased
	// keys of a tag with many attributes.
	attrs [][2]span
	nAttr int
	keys  map[string]bool

	// rawTag, when not "", is the element whose raw text (or RCDATA) the
	// next token is: one of rawElements, lower-cased.
	rawTag string
	// textIsRaw is whether the text token's entities are kept as written,
	// convertNUL whether its NUL bytes become U+FFFD.
	textIsRaw, convertNUL bool
}

// NewTokenizer returns a Tokenizer of the UTF-8 HTML that r reads.
func NewTokenizer(r io.Reader) *Tokenizer {
	return &Tokenizer{r: r}
}

// Err is why the tokens ended, after Next returned ErrorToken (io.EOF at
// the end of the input), and nil before.
func (z *Tokenizer) Err() error {
	if z.tt != ErrorToken {
		return nil
	}
	return z.err
}

// bytes returns the current token's bytes in s.
func (z *Tokenizer) bytes(s span) []byte {
	return z.buf[z.start+s.start : z.start+s.end]
}

// readByte returns the token's next byte, reading more input when buf is
// used up. At the end of the input (or on a read error) it returns false
// with z.err set.
func (z *Tokenizer) readByte() (byte, bool) {
	if z.start+z.n == len(z.buf) && !z.fill() {
		return 0, false
	}
	c := z.buf[z.start+z.n]
	z.n++
	return c, true
}

// fill reads more input into buf, after the current token.
func (z *Tokenizer) fill() bool {
	if z.readErr != nil {
		z.err = z.readErr
		return false
	}
	// Move the token to the front of buf (once per token: start stays 0
	// until the next one), into a buffer twice the size when it fills buf.
	tok := z.buf[z.start:]
	if len(tok) == cap(z.buf) {
		buf := make([]byte, len(tok), max(2*cap(z.buf), 4096))
		copy(buf, tok)
		z.buf = buf
	} else if z.start > 0 {
		z.buf = z.buf[:copy(z.buf, tok)]
	}
	z.start = 0
	var n int
	n, z.readErr = readSome(z.r, z.buf[len(z.buf):cap(z.buf)])
	if n == 0 {
		z.err = z.readErr
		return false
	}
	z.buf = z.buf[:len(z.buf)+n]
	return true
}

// readSome reads at least one byte into b, or returns an error:
// io.ErrNoProgress after 100 empty reads without one.
func readSome(r io.Reader, b []byte) (int, error) {
	for range 100 {
		if n, err := r.Read(b); n != 0 || err != nil {
			return n, err
		}
	}
	return 0, io.ErrNoProgress
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f'
}

func isLetter(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// skipSpace skips white space.
func (z *Tokenizer) skipSpace() {
	for z.err == nil {
		c, ok := z.readByte()
		if !ok {
			return
		}
		if !isSpace(c) {
			z.n--
			return
		}
	}
}

// readFold reads the letters of lower, in either case. It returns false
// on a byte that does not match, unread, or at the end of the input, with
// z.err set.
func (z *Tokenizer) readFold(lower string) bool {
	for i := 0; i < len(lower); i++ {
		c, ok := z.readByte()
		if !ok {
			return false
		}
		if c|0x20 != lower[i] {
			z.n--
			return false
		}
	}
	return true
}

// Next reads the next token and returns its type.
func (z *Tokenizer) Next() TokenType {
	z.start += z.n
	z.n = 0
	z.data = span{}
	if z.err != nil {
		z.tt = ErrorToken
		return z.tt
	}
	if z.rawTag != "" {
		if z.rawTag == "plaintext" {
			// The rest of the input is text.
			for z.err == nil {
				z.n = len(z.buf) - z.start
				z.fill()
			}
			z.data.end = z.n
			z.textIsRaw = true
		} else {
			z.readRawText()
		}
		if z.data.end > 0 {
			z.tt, z.convertNUL = TextToken, true
			return z.tt
		}
	}
	z.textIsRaw, z.convertNUL = false, false
	for {
		c, ok := z.readByte()
		if !ok {
			break
		}
		if c != '<' {
			continue
		}
		// Does the '<' start a tag, comment or doctype? If not, it is
		// text.
		if c, ok = z.readByte(); !ok {
			break
		}
		if !isLetter(c) && c != '/' && c != '!' && c != '?' {
			z.n--
			continue
		}
		if z.n > 2 {
			// The text before it is a token of its own.
			z.n -= 2
			z.data.end = z.n
			z.tt = TextToken
			return z.tt
		}
		switch {
		case isLetter(c):
			z.tt = z.readStartTag()
		case c == '/':
			z.tt = z.readEndTag()
		case c == '!':
			z.tt = z.readMarkupDeclaration()
		default: // '?'
			z.n--
			z.readUntilCloseAngle()
			z.tt = CommentToken
		}
		return z.tt
	}
	if z.n > 0 {
		z.data.end = z.n
		z.tt = TextToken
		return z.tt
	}
	z.tt = ErrorToken
	return z.tt
}

// readEndTag reads an end tag after its "</": a comment if a letter does
// not follow ("</>" an empty one), text if the input ends.
func (z *Tokenizer) readEndTag() TokenType {
	c, ok := z.readByte()
	switch {
	case !ok:
		z.data.end = z.n
		return TextToken
	case c == '>':
		return CommentToken
	case !isLetter(c):
		z.n--
		z.readUntilCloseAngle()
		return CommentToken
	}
	if z.readTag(false); z.err != nil {
		return ErrorToken
	}
	return EndTagToken
}

// rawElements are the elements whose content is raw text (RCDATA for
// textarea and title: text with entities but no tags).
var rawElements = [...]string{"iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp"}

// readRawText reads the raw text of z.rawTag up to its end tag (or the end
// of the input).
func (z *Tokenizer) readRawText() {
	if z.rawTag == "script" {
		z.readScript()
		z.data.end = z.n
		z.textIsRaw = true
		z.rawTag = ""
		return
	}
	for {
		c, ok := z.readByte()
		if !ok {
			break
		}
		if c != '<' {
			continue
		}
		if c, ok = z.readByte(); !ok {
			break
		}
		if c != '/' {
			z.n--
			continue
		}
		if z.readRawEndTag() || z.err != nil {
			break
		}
	}
	z.data.end = z.n
	z.textIsRaw = z.rawTag != "textarea" && z.rawTag != "title"
	z.rawTag = ""
}

// readRawEndTag reports whether the "</" just read starts z.rawTag's end
// tag: its name in any case, then white space, '/' or '>'. If it does, it
// unreads the tag; if not, it unreads the byte that did not match.
func (z *Tokenizer) readRawEndTag() bool {
	if !z.readFold(z.rawTag) {
		return false
	}
	c, ok := z.readByte()
	if !ok {
		return false
	}
	if isSpace(c) || c == '/' || c == '>' {
		z.n -= len("</") + len(z.rawTag) + 1
		return true
	}
	z.n--
	return false
}

// The states of readScript.
const (
	scriptData = iota
	scriptLessThan
	scriptEscapeStart
	scriptEscapeStartDash
	scriptEscaped
	scriptEscapedDash
	scriptEscapedDashDash
	scriptEscapedLessThan
	scriptDoubleEscaped
	scriptDoubleEscapedDash
	scriptDoubleEscapedDashDash
	scriptDoubleEscapedLessThan
)

// readScript reads a script's text up to its end tag "</script" (or the
// end of the input), as the HTML standard's script data states do: after
// a "<!--", a "<script" hides the end tags that follow up to a "-->" or
// the "</script" that ends it.
func (z *Tokenizer) readScript() {
	state := scriptData
	for {
		c, ok := z.readByte()
		if !ok {
			return
		}
		switch state {
		case scriptData:
			if c == '<' {
				state = scriptLessThan
			}
		case scriptLessThan:
			switch c {
			case '/':
				if z.readRawEndTag() || z.err != nil {
					return
				}
				state = scriptData
			case '!':
				state = scriptEscapeStart
			default:
				z.n--
				state = scriptData
			}
		case scriptEscapeStart, scriptEscapeStartDash:
			switch {
			case c != '-':
				z.n--
				state = scriptData
			case state == scriptEscapeStart:
				state = scriptEscapeStartDash
			default:
				state = scriptEscapedDashDash
			}
		case scriptEscaped, scriptEscapedDash, scriptEscapedDashDash:
			switch {
			case c == '-' && state == scriptEscaped:
				state = scriptEscapedDash
			case c == '-':
				state = scriptEscapedDashDash
			case c == '<':
				state = scriptEscapedLessThan
			case c == '>' && state == scriptEscapedDashDash:
				state = scriptData
			default:
				state = scriptEscaped
			}
		case scriptEscapedLessThan:
			switch {
			case c == '/':
				if z.readRawEndTag() || z.err != nil {
					return
				}
				state = scriptEscaped
			case isLetter(c):
				// "<script" and white space, '/' or '>' start the
				// double-escaped text.
				z.n--
				state = scriptEscaped
				if !z.readFold("script") {
					if z.err != nil {
						return
					}
					break
				}
				c, ok := z.readByte()
				if !ok {
					return
				}
				if isSpace(c) || c == '/' || c == '>' {
					state = scriptDoubleEscaped
				} else {
					z.n--
				}
			default:
				z.n--
				state = scriptData
			}
		case scriptDoubleEscaped, scriptDoubleEscapedDash, scriptDoubleEscapedDashDash:
			switch {
			case c == '-' && state == scriptDoubleEscaped:
				state = scriptDoubleEscapedDash
			case c == '-':
				state = scriptDoubleEscapedDashDash
			case c == '<':
				state = scriptDoubleEscapedLessThan
			case c == '>' && state == scriptDoubleEscapedDashDash:
				state = scriptData
			default:
				state = scriptDoubleEscaped
			}
		case scriptDoubleEscapedLessThan:
			state = scriptDoubleEscaped
			if c != '/' {
				z.n--
				break
			}
			if z.readRawEndTag() {
				// "</script" ends the double escape, not the script.
				z.n += len("</script>")
				state = scriptEscaped
			} else if z.err != nil {
				return
			}
		}
	}
}

// readComment reads a comment after its "<!--".
func (z *Tokenizer) readComment() {
	z.data.start = z.n
	dashes, beginning := 0, true
loop:
	for {
		c, ok := z.readByte()
		if !ok {
			z.data.end = z.abruptCommentEnd()
			break
		}
		switch c {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || beginning {
				z.data.end = z.n - len("-->")
				break loop
			}
		case '!':
			if dashes >= 2 {
				if c, ok = z.readByte(); !ok {
					z.data.end = z.abruptCommentEnd()
					break loop
				}
				if c == '>' {
					z.data.end = z.n - len("--!>")
					break loop
				}
				if c == '-' {
					dashes, beginning = 1, false
					continue
				}
			}
		}
		dashes, beginning = 0, false
	}
	// An empty comment like "<!-->".
	z.data.end = max(z.data.end, z.data.start)
}

// abruptCommentEnd is the end of the data of a comment cut by the end of
// the input: without its trailing "--!", "--" or "-".
func (z *Tokenizer) abruptCommentEnd() int {
	data := z.bytes(span{len("<!--"), z.n})
	for _, end := range []string{"--!", "--", "-"} {
		if bytes.HasSuffix(data, []byte(end)) {
			return z.n - len(end)
		}
	}
	return z.n
}

// readUntilCloseAngle reads a bogus comment's data, up to the next '>'.
func (z *Tokenizer) readUntilCloseAngle() {
	z.data.start = z.n
	for {
		c, ok := z.readByte()
		if !ok {
			z.data.end = z.n
			return
		}
		if c == '>' {
			z.data.end = z.n - 1
			return
		}
	}
}

// readMarkupDeclaration reads a comment, doctype or bogus comment after
// its "<!".
func (z *Tokenizer) readMarkupDeclaration() TokenType {
	z.data.start = z.n
	var c [2]byte
	for i := range c {
		var ok bool
		if c[i], ok = z.readByte(); !ok {
			z.data.end = z.n
			if i == 1 && c[0] == '>' {
				z.data.end--
			}
			return CommentToken
		}
	}
	if c == [2]byte{'-', '-'} {
		z.readComment()
		return CommentToken
	}
	z.n -= 2
	if z.readDoctype() {
		return DoctypeToken
	}
	z.readUntilCloseAngle()
	return CommentToken
}

// readDoctype reads a doctype after its "<!" and reports whether it was
// one. If not, it unreads what it read (but a read error other than
// io.EOF stays, as in x/net/html).
func (z *Tokenizer) readDoctype() bool {
	if !z.readFold("doctype") {
		switch {
		case z.err == io.EOF:
			z.err = nil // the end is reported once the rest is read
			z.n = z.data.start
		case z.err != nil:
			z.data.end = z.n
		default:
			z.n = z.data.start
		}
		return false
	}
	if z.skipSpace(); z.err != nil {
		z.data = span{z.n, z.n}
		return true
	}
	z.readUntilCloseAngle()
	return true
}

// readStartTag reads a start tag after its "<" and first letter.
func (z *Tokenizer) readStartTag() TokenType {
	if z.readTag(true); z.err != nil {
		return ErrorToken
	}
	name := z.bytes(z.data)
	for _, e := range rawElements {
		if equalFold(name, e) {
			z.rawTag = e
			break
		}
	}
	// Self-closing is a '/' before the '>' that is not the end of the
	// last attribute's unquoted value, as in <p a=/>.
	last := len(z.attrs) - 1
	if z.buf[z.start+z.n-2] == '/' && (last < 0 || z.n-2 != z.attrs[last][1].end-1) {
		return SelfClosingTagToken
	}
	return StartTagToken
}

// equalFold reports whether a and b are equal but for the case of their
// ASCII letters.
func equalFold[S string | []byte](a []byte, b S) bool {
	if len(a) != len(b) {
		return false
	}
	for i, c := range a {
		if d := b[i]; c != d && (c|0x20 != d|0x20 || !isLetter(c)) {
			return false
		}
	}
	return true
}

// readTag reads a tag's name and attributes after its "<" (or "</") and
// first letter; it keeps the attributes if saveAttr.
func (z *Tokenizer) readTag(saveAttr bool) {
	z.attrs, z.nAttr, z.keys = z.attrs[:0], 0, nil
	z.readTagName()
	if z.skipSpace(); z.err != nil {
		return
	}
	for {
		c, ok := z.readByte()
		if !ok || c == '>' {
			return
		}
		z.n--
		key := z.readAttrKey()
		val := z.readAttrVal()
		if saveAttr && key.start != key.end {
			z.saveAttr(key, val)
		}
		if z.skipSpace(); z.err != nil {
			return
		}
	}
}

// maxScannedAttrs is how many attributes a tag can have before their keys
// are looked up in a map rather than compared one by one.
const maxScannedAttrs = 16

// saveAttr adds an attribute to z.attrs, unless the tag has one with the
// same key (in any case): the first one counts.
func (z *Tokenizer) saveAttr(key, val span) {
	k := z.bytes(key)
	if len(z.attrs) < maxScannedAttrs {
		for _, a := range z.attrs {
			if equalFold(k, z.bytes(a[0])) {
				return
			}
		}
	} else {
		if z.keys == nil {
			z.keys = make(map[string]bool)
			for _, a := range z.attrs {
				z.keys[string(lower(bytes.Clone(z.bytes(a[0]))))] = true
			}
		}
		lk := string(lower(bytes.Clone(k)))
		if z.keys[lk] {
			return
		}
		z.keys[lk] = true
	}
	z.attrs = append(z.attrs, [2]span{key, val})
}

// readTagName sets z.data to the tag's name, whose first letter was read.
func (z *Tokenizer) readTagName() {
	z.data.start = z.n - 1
	for {
		c, ok := z.readByte()
		switch {
		case !ok:
			z.data.end = z.n
			return
		case isSpace(c):
			z.data.end = z.n - 1
			return
		case c == '/' || c == '>':
			z.n--
			z.data.end = z.n
			return
		}
	}
}

// readAttrKey reads an attribute's key.
func (z *Tokenizer) readAttrKey() span {
	key := span{z.n, z.n}
	for {
		c, ok := z.readByte()
		switch {
		case !ok:
			key.end = z.n
			return key
		case c == '=' && key.start+1 == z.n:
			// A key can start with '='.
		case c == '=' || isSpace(c) || c == '/' || c == '>':
			z.n--
			key.end = z.n
			return key
		}
	}
}

// readAttrVal reads an attribute's value, if it has one: if not, an empty
// span at the key's end (which readStartTag's test of self-closing tags
// looks at, as x/net/html's does).
func (z *Tokenizer) readAttrVal() span {
	val := span{z.n, z.n}
	if z.skipSpace(); z.err != nil {
		return val
	}
	c, ok := z.readByte()
	if !ok || c == '/' {
		return val
	}
	if c != '=' {
		z.n--
		return val
	}
	if z.skipSpace(); z.err != nil {
		return val
	}
	quote, ok := z.readByte()
	if !ok {
		return val
	}
	switch quote {
	case '>':
		z.n--
		return val
	case '\'', '"':
		val.start = z.n
		for {
			c, ok := z.readByte()
			if !ok {
				val.end = z.n
				return val
			}
			if c == quote {
				val.end = z.n - 1
				return val
			}
		}
	default:
		val.start = z.n - 1
		for {
			c, ok := z.readByte()
			switch {
			case !ok:
				val.end = z.n
				return val
			case isSpace(c):
				val.end = z.n - 1
				return val
			case c == '>':
				z.n--
				val.end = z.n
				return val
			}
		}
	}
}

// Text returns the text of a text, comment or doctype token: its entities
// decoded (but not in the raw text of script, style and the like), "\r\n"
// and "\r" made "\n", and NUL bytes made U+FFFD in comments and raw text
// (other text keeps them, as x/net/html's does). It returns nil for other
// tokens, and no text when called again for the same token.
func (z *Tokenizer) Text() []byte {
	switch z.tt {
	case TextToken, CommentToken, DoctypeToken:
		s := z.bytes(z.data)
		z.data = span{z.n, z.n}
		s = convertNewlines(s)
		if z.convertNUL || z.tt == CommentToken {
			s = replaceNUL(s)
		}
		if !z.textIsRaw {
			s = unescape(s, false)
		}
		return s
	}
	return nil
}

// TagName returns the name of a tag token, its ASCII letters lower-cased
// and its NUL bytes made U+FFFD, and whether TagAttr has attributes to
// return; nil for other tokens, and when called again for the same token.
func (z *Tokenizer) TagName() (name []byte, hasAttr bool) {
	switch z.tt {
	case StartTagToken, EndTagToken, SelfClosingTagToken:
		if z.data.start < z.data.end {
			s := z.bytes(z.data)
			z.data = span{z.n, z.n}
			return lower(replaceNUL(s)), z.nAttr < len(z.attrs)
		}
	}
	return nil, false
}

// TagAttr returns the next attribute of a start tag token, its key's
// ASCII letters lower-cased and its value's entities decoded (both with
// NUL bytes made U+FFFD, "\r\n" and "\r" "\n" in the value), and whether
// it has more. A tag's attributes are those with a non-empty key, the
// first of each key (in any case).
func (z *Tokenizer) TagAttr() (key, val []byte, more bool) {
	switch z.tt {
	case StartTagToken, SelfClosingTagToken:
		if z.nAttr < len(z.attrs) {
			a := z.attrs[z.nAttr]
			z.nAttr++
			key = lower(replaceNUL(z.bytes(a[0])))
			val = unescape(convertNewlines(replaceNUL(z.bytes(a[1]))), true)
			return key, val, z.nAttr < len(z.attrs)
		}
	}
	return nil, nil, false
}

// lower lower-cases the ASCII letters of b in place.
func lower(b []byte) []byte {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

// replaceNUL returns s with its NUL bytes made U+FFFD (a copy if it has
// any).
func replaceNUL(s []byte) []byte {
	if bytes.IndexByte(s, 0) < 0 {
		return s
	}
	return bytes.ReplaceAll(s, []byte{0}, []byte("\ufffd"))
}

// convertNewlines makes "\r\n" and "\r" in s "\n", in place.
func convertNewlines(s []byte) []byte {
	i := bytes.IndexByte(s, '\r')
	if i < 0 {
		return s
	}
	out := s[:i]
	for ; i < len(s); i++ {
		c := s[i]
		if c == '\r' {
			c = '\n'
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
		}
		out = append(out, c)
	}
	return out
}

// unescape decodes the character references in b, in place while the
// text does not get longer. In an attribute value (attr) a named
// reference without its ';' is decoded only when neither a letter, a
// digit nor '=' follows it.
func unescape(b []byte, attr bool) []byte {
	i := bytes.IndexByte(b, '&')
	if i < 0 {
		return b
	}
	out, inPlace := b[:i], true
	for i < len(b) {
		if b[i] != '&' {
			out = append(out, b[i])
			i++
			continue
		}
		r1, r2, n := charRef(b[i:], attr)
		if n == 0 {
			out = append(out, '&')
			i++
			continue
		}
		size := utf8.RuneLen(r1)
		if r2 != 0 {
			size += utf8.RuneLen(r2)
		}
		if size > n && inPlace {
			out, inPlace = bytes.Clone(out), false
		}
		out = utf8.AppendRune(out, r1)
		if r2 != 0 {
			out = utf8.AppendRune(out, r2)
		}
		i += n
	}
	return out
}

// windows1252 are the characters that numeric references to 0x80–0x9F
// stand for: Windows-1252's, as the HTML standard says.
var windows1252 = [32]rune{
	'\u20AC', '\u0081', '\u201A', '\u0192', '\u201E', '\u2026', '\u2020', '\u2021',
	'\u02C6', '\u2030', '\u0160', '\u2039', '\u0152', '\u008D', '\u017D', '\u008F',
	'\u0090', '\u2018', '\u2019', '\u201C', '\u201D', '\u2022', '\u2013', '\u2014',
	'\u02DC', '\u2122', '\u0161', '\u203A', '\u0153', '\u009D', '\u017E', '\u0178',
}

// charRef decodes the character reference that s (which starts with '&')
// starts: one or two runes (r2 0 for one) and the length of the reference,
// n 0 if it is none.
func charRef(s []byte, attr bool) (r1, r2 rune, n int) {
	if len(s) < 2 {
		return 0, 0, 0
	}
	if s[1] == '#' {
		return numericRef(s)
	}
	// The longest run of letters and digits, with a ';' after it.
	i := 1
	for i < len(s) && (isLetter(s[i]) || '0' <= s[i] && s[i] <= '9') {
		i++
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	name := s[1:i]
	switch {
	case len(name) == 0:
	case attr && name[len(name)-1] != ';' && i < len(s) && s[i] == '=':
	default:
		if r1, r2, ok := lookup(name); ok {
			return r1, r2, i
		}
		if attr {
			break
		}
		// The longest name without a ';' that starts the text.
		for j := min(len(name)-1, longestLegacyName); j > 1; j-- {
			if r1, r2, ok := lookup(name[:j]); ok && r2 == 0 {
				return r1, 0, j + 1
			}
		}
	}
	return 0, 0, 0
}

// numericRef decodes a numeric character reference, "&#" and decimal
// digits or "&#x" and hexadecimal ones, and its ';' if it has one.
func numericRef(s []byte) (r rune, _ rune, n int) {
	i := 2
	hex := i < len(s) && (s[i] == 'x' || s[i] == 'X')
	if hex {
		i++
	}
	base, digits := rune(10), i
	if hex {
		base = 16
	}
	for ; i < len(s); i++ {
		d := digit(s[i])
		if d >= base {
			break
		}
		if r <= utf8.MaxRune { // beyond, it stays invalid: stop counting
			r = base*r + d
		}
	}
	if i == digits {
		return 0, 0, 0
	}
	if i < len(s) && s[i] == ';' {
		i++
	}
	switch {
	case 0x80 <= r && r <= 0x9F:
		r = windows1252[r-0x80]
	case r == 0 || 0xD800 <= r && r <= 0xDFFF || r > utf8.MaxRune:
		r = utf8.RuneError
	}
	return r, 0, i
}

// digit is the value of the hexadecimal digit c, 16 if it is none.
func digit(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return rune(c-'A') + 10
	}
	return 16
}

// entity is a named character reference: its name without the '&',
// entityNames[off:off+n], and the one or two runes it stands for (r2 0 for
// one). It has no pointers, so that the garbage collector need not scan
// entities.
type entity struct {
	off    uint16
	n      uint8
	r1, r2 rune
}

func (e *entity) name() string {
	return entityNames[e.off : int(e.off)+int(e.n)]
}

// lookup finds the named character reference name in entities.
func lookup(name []byte) (r1, r2 rune, ok bool) {
	if len(name) > longestName {
		return 0, 0, false
	}
	key := string(name)
	lo, hi := 0, len(entities)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		switch c := strings.Compare(entities[m].name(), key); {
		case c == 0:
			return entities[m].r1, entities[m].r2, true
		case c < 0:
			lo = m + 1
		default:
			hi = m
		}
	}
	return 0, 0, false
}
