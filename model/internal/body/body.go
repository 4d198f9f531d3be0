// Package body builds the JSON request bodies of the model dialects without
// copying long texts. A dialect maps a [model.Request] to its own request
// value as usual, but puts each long text (an answer, an image's base64,
// a long prompt) in it through a [Builder], which stands the text in for a
// short placeholder; json.Marshal then encodes a small value, and the
// [Payload] the Builder makes of that encoding writes it with every
// placeholder replaced by its text, escaped exactly as encoding/json escapes
// it, straight from the transcript's strings through a small buffer. A
// request after a 32 MiB answer thus holds the answer once (in the
// transcript), not two or three times (a marshalled value, the growing
// buffer it was encoded in, the copy json.Marshal returns).
//
// Placeholders are NUL, 32 random hexadecimal digits, a number and NUL: a
// text cannot hold one by chance, and nobody can forge one, since the
// digits are drawn per Builder. A dialect may concatenate a placeholder
// with other text (a label, a data: URL prefix) or with other
// placeholders, but must not otherwise look into it.
package body

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"acpd/internal/jsonesc"
	"acpd/model"
)

// Inline is the length from which a text goes out of line: shorter texts
// are put in the request value as they are. It is small, so that the
// encoding json.Marshal builds stays small however long the conversation
// (its messages are written from the transcript too, not copied), and
// large enough that a placeholder (46 bytes encoded) costs little.
const Inline = 1 << 10

// Builder collects the long texts of one request body. The zero value is
// ready to use; a Builder serves one body and is not safe for concurrent
// use.
type Builder struct {
	tag     string // "\x00" and the random digits, once a placeholder was made
	entries []entry
}

// entry is what a placeholder stands for: a text (its pieces) or a list of
// fragments.
type entry struct {
	text  []string
	list  []*Fragment
	empty []byte // a list's encoding when its fragments encode nothing
	// n is the list's fragments' length with their commas, when known
	// (a Run's).
	n     int64
	known bool
}

// placeholder returns the placeholder of e.
func (b *Builder) placeholder(e entry) string {
	if b.tag == "" {
		var r [16]byte
		_, _ = rand.Read(r[:])
		b.tag = "\x00" + hex.EncodeToString(r[:])
	}
	b.entries = append(b.entries, e)
	return b.tag + strconv.Itoa(len(b.entries)-1) + "\x00"
}

// Text returns the concatenation of pieces, or a placeholder for it when
// it is Inline bytes or longer (see the package documentation). Pieces
// must be cut at rune boundaries: each is escaped on its own, so are the
// texts of two placeholders put side by side, and invalid UTF-8 becomes
// U+FFFD per piece. A rune cut between two pieces or texts is thus two or
// more U+FFFD where json.Marshal of the whole would keep it; the texts of
// a transcript are whole strings (decoded JSON, Go strings), so nothing
// is cut.
func (b *Builder) Text(pieces ...string) string {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	if n < Inline {
		return strings.Join(pieces, "")
	}
	return b.placeholder(entry{text: pieces})
}

// List returns a value that [Builder.Marshal] encodes as the JSON array of
// the elements of frags, in order (json.Marshal's encoding of a slice of
// the values they encode), or as null when they encode none (a nil
// slice's encoding).
func (b *Builder) List(frags []*Fragment) json.RawMessage {
	q, _ := json.Marshal(b.placeholder(entry{list: frags, empty: null}))
	return q
}

// Array is [Builder.List] for a non-nil slice: it is encoded as [] when
// frags encode no value.
func (b *Builder) Array(frags []*Fragment) json.RawMessage {
	q, _ := json.Marshal(b.placeholder(entry{list: frags, empty: emptyArray}))
	return q
}

// ListRun is [Builder.List] of r's fragments: the payload takes r's length
// as it is, without visiting them.
func (b *Builder) ListRun(r *Run) json.RawMessage {
	q, _ := json.Marshal(b.placeholder(entry{list: r.frags, empty: null, n: r.n, known: true}))
	return q
}

// ArrayRun is [Builder.Array] of r's fragments, as ListRun is List's.
func (b *Builder) ArrayRun(r *Run) json.RawMessage {
	q, _ := json.Marshal(b.placeholder(entry{list: r.frags, empty: emptyArray, n: r.n, known: true}))
	return q
}

// A Run is a list of fragments with the length of their encoding, which
// the requests of a conversation extend: a dialect keeps the run of a
// request's messages (see model.Prefix) and makes the next request's by
// appending the fragments of the messages added since, so that a request
// of a long conversation neither visits nor copies the fragments of the
// history before the first byte of its body is written. A Run is not
// modified once made (Extend makes another) and is safe for concurrent
// use.
type Run struct {
	frags []*Fragment
	n     int64 // the fragments' lengths with their commas
	// grown: a run was made from this one in frags' spare capacity
	// (only the first Extend of a run may use it).
	grown atomic.Bool
}

// NewRun returns the run of frags (which it keeps: they must not be
// modified after).
func NewRun(frags ...*Fragment) *Run {
	r := &Run{frags: frags}
	for _, f := range frags {
		r.n += f.n
	}
	return r
}

// Len is the number of fragments in r.
func (r *Run) Len() int { return len(r.frags) }

// Extend returns the run of r's fragments followed by frags (r itself
// when there are none). The first
// Extend of a run appends in its array's spare capacity, the elements
// past r's length that no other run holds; a later one copies, as does
// one that needs a larger array (which grows by half, so that a
// conversation's requests copy the fragment list O(log n) times).
func (r *Run) Extend(frags ...*Fragment) *Run {
	if len(frags) == 0 {
		return r
	}
	next := &Run{n: r.n}
	for _, f := range frags {
		next.n += f.n
	}
	need := len(r.frags) + len(frags)
	if need <= cap(r.frags) && !r.grown.Swap(true) {
		next.frags = append(r.frags, frags...)
		return next
	}
	next.frags = make([]*Fragment, need, need+need/2+4)
	copy(next.frags, r.frags)
	copy(next.frags[len(r.frags):], frags)
	return next
}

// Message returns m as a dialect maps it: each run of parts that is one
// text split in pieces (see [model.Part]) becomes one part, its last (not
// Continued), and every long text and data of the parts (and of their
// content) goes out of line through [Builder.Text]. m is not modified.
func (b *Builder) Message(m model.Message) model.Message {
	m.Parts = b.parts(m.Parts, true)
	return m
}

func (b *Builder) parts(ps []model.Part, merge bool) []model.Part {
	if len(ps) == 0 {
		return ps
	}
	out := make([]model.Part, 0, len(ps))
	for i := 0; i < len(ps); {
		j := i + 1
		if merge {
			for j < len(ps) && ps[j].Continued && ps[j].Type == ps[i].Type {
				j++
			}
		}
		p := ps[j-1]
		p.Continued = false
		if j-i > 1 {
			pieces := make([]string, 0, j-i)
			for _, q := range ps[i:j] {
				pieces = append(pieces, q.Text)
			}
			p.Text = b.Text(pieces...)
		} else {
			p.Text = b.Text(p.Text)
		}
		p.Data = b.Text(p.Data)
		p.Content = b.parts(p.Content, false)
		out = append(out, p)
		i = j
	}
	return out
}

// Marshal encodes v with json.Marshal and returns the encoding with the
// Builder's texts and lists in place of their placeholders.
func (b *Builder) Marshal(v any) (*Payload, error) {
	enc, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	p := &Payload{}
	if err := b.resolve(enc, p.add, p.addList); err != nil {
		return nil, err
	}
	return p, nil
}

// resolve cuts enc at the Builder's placeholders, passing on the bytes
// between them, the texts and the lists they stand for (a list's
// placeholder with its quotes), in order.
func (b *Builder) resolve(enc []byte, add func(segment), list func(entry)) error {
	if b.tag == "" {
		add(segment{raw: enc})
		return nil
	}
	// The tag as json.Marshal encodes it: NUL is \u0000.
	mark := []byte(`\u0000` + b.tag[1:])
	for len(enc) > 0 {
		k := bytes.Index(enc, mark)
		if k < 0 {
			add(segment{raw: enc})
			break
		}
		rest := enc[k+len(mark):]
		end := bytes.Index(rest, []byte(`\u0000`))
		if end < 0 {
			return errors.New("body: placeholder cut short")
		}
		i, err := strconv.Atoi(string(rest[:end]))
		if err != nil || i < 0 || i >= len(b.entries) {
			return errors.New("body: bad placeholder")
		}
		rest = rest[end+len(`\u0000`):]
		e := b.entries[i]
		if e.list == nil && e.text != nil {
			add(segment{raw: enc[:k]})
			add(segment{text: e.text})
			enc = rest
			continue
		}
		// A list stands for the whole string, quotes included.
		if k == 0 || enc[k-1] != '"' || len(rest) == 0 || rest[0] != '"' {
			return errors.New("body: list placeholder inside a text")
		}
		add(segment{raw: enc[:k-1]})
		list(e)
		enc = rest[1:]
	}
	return nil
}

// Encode encodes vs with json.Marshal as a [Fragment]: their encodings,
// joined by commas (the elements of a JSON array), with the Builder's
// texts in place of their placeholders. vs must not hold lists.
func (b *Builder) Encode(vs ...any) (*Fragment, error) {
	f := &Fragment{}
	if len(vs) == 0 {
		return f, nil
	}
	// The raw bytes and kept texts since the last long text, from the
	// comma that separates the fragment from the one before it in a list
	// (Fragment.segs).
	var raw []byte
	nested := false
	for _, v := range vs {
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		raw = append(raw, ',')
		err = b.resolve(enc, func(s segment) {
			if s.text == nil {
				raw = append(raw, s.raw...)
				return
			}
			n := 0
			for _, t := range s.text {
				n += jsonesc.Len(t)
			}
			seg := segment{text: s.text, n: int64(n)}
			if n <= Keep {
				seg.esc = make([][]uint16, len(s.text))
				k := 0
				for i, t := range s.text {
					seg.esc[i] = escapes(t)
					k += len(seg.esc[i])
				}
				if k*denseRun > n {
					// Dense: copying an escaped copy beats many short runs.
					for _, t := range s.text {
						raw, _ = jsonesc.Append(raw, t, n)
					}
					return
				}
			}
			if len(raw) > 0 {
				f.segs = append(f.segs, segment{raw: raw})
				f.n += int64(len(raw))
				raw = nil
			}
			f.segs = append(f.segs, seg)
			f.n += int64(n)
		}, func(entry) { nested = true })
		if err != nil {
			return nil, err
		}
		if nested {
			return nil, errors.New("body: a list in a fragment")
		}
	}
	if len(raw) > 0 {
		f.segs = append(f.segs, segment{raw: raw})
		f.n += int64(len(raw))
	}
	return f, nil
}

// Keep is the longest text, escaped, whose escapes a [Fragment] keeps: the
// offsets of the bytes JSON escapes, two bytes each, beside a reference to
// the text, so that writing the fragment copies the text's runs between
// them instead of scanning it again. A longer text is scanned anew
// whenever the fragment is written. A fragment holds a text's escaped
// copy only when its runs are short (see denseRun): otherwise a message
// is held once, in the transcript, however many requests it goes in (a
// memo of copies doubled a conversation's prose, and the live heap a 32
// MiB answer streams beside).
const Keep = 64 << 10

// denseRun is the mean run between escapes below which a kept text is
// held escaped instead: each run costs a copy of its own, and source code
// (a newline every 30 bytes, tabs and quotes) written in runs took 2.5 to
// 4 times as long as its escaped copy (BenchmarkRequestLong in package
// openai). Prose, logs and answers have longer runs.
const denseRun = 64

// Fragment is a piece of a body's encoding made by [Builder.Encode]: its
// bytes, and references to its texts (of Inline bytes or more) with their
// escaped lengths and, up to Keep, their escapes. It
// is not modified once made and can be part of any number of payloads,
// concurrently (through [Builder.List]); a dialect keeps a message's
// fragment between requests (see [model.Memo]).
type Fragment struct {
	// segs start with a raw segment, whose first byte is a comma (each
	// value's encoding is preceded by one), unless the fragment is empty;
	// n counts the commas.
	segs []segment
	n    int64
}

// Len is the length of the fragment's encoding in bytes.
func (f *Fragment) Len() int64 { return max(0, f.n-1) }

// Payload is a request body that can be read any number of times (for
// retries and redirects). It holds the small encoding and references to
// the long texts and to the fragments of its lists; it is safe for
// concurrent reads.
type Payload struct {
	segs []segment
	n    int64
}

// segment is raw encoded bytes, a text to escape (without its quotes,
// which are in the raw bytes around it), or the elements of a JSON array
// (list: fragments, whose first comma is left out); n is a text's escaped
// length once known; esc, when not nil, holds each piece's escapes (see
// [escapes]).
type segment struct {
	raw  []byte
	text []string
	esc  [][]uint16
	list []*Fragment
	n    int64
}

func (p *Payload) add(s segment) {
	if s.text == nil {
		if len(s.raw) == 0 {
			return
		}
		p.n += int64(len(s.raw))
	} else {
		for _, t := range s.text {
			s.n += int64(jsonesc.Len(t))
		}
		p.n += s.n
	}
	p.segs = append(p.segs, s)
}

// addList adds the JSON array of the elements of e's fragments (e.empty
// when there are none). The fragments are referred to, not copied: a
// request of a long conversation costs a pointer per message.
func (p *Payload) addList(e entry) {
	n := e.n
	if !e.known {
		for _, f := range e.list {
			n += f.n
		}
	}
	if n == 0 {
		p.add(segment{raw: e.empty})
		return
	}
	p.add(segment{raw: open})
	p.segs = append(p.segs, segment{list: e.list})
	p.n += n - 1 // the first comma
	p.add(segment{raw: closing})
}

// The bytes addList writes around fragments (never modified).
var open, closing, null, emptyArray = []byte("["), []byte("]"), []byte("null"), []byte("[]")

// Raw returns the payload of an encoded body.
func Raw(b []byte) *Payload {
	p := &Payload{}
	p.add(segment{raw: b})
	return p
}

// Len returns the body's length in bytes.
func (p *Payload) Len() int64 { return p.n }

// Reader returns a reader of the body from its start.
func (p *Payload) Reader() io.Reader {
	r := &reader{p: p, seg: -1}
	r.next()
	return r
}

// WriteTo writes the body to w.
func (p *Payload) WriteTo(w io.Writer) (int64, error) {
	r := &reader{p: p, seg: -1}
	r.next()
	return r.WriteTo(w)
}

// WriteTo writes the rest of the body to w through a buffer kept for the
// next body: io.Copy (net/http's copy of a request body among its
// callers) uses it instead of allocating a buffer of its own per body.
func (r *reader) WriteTo(w io.Writer) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	// The wrappers hide r's WriteTo and w's ReadFrom from CopyBuffer,
	// which would otherwise call back here or copy without the buffer.
	return io.CopyBuffer(struct{ io.Writer }{w}, struct{ io.Reader }{r}, *bp)
}

// copyBufs are the buffers of [reader.WriteTo].
var copyBufs = sync.Pool{New: func() any { b := make([]byte, chunk); return &b }}

// Bytes returns the whole body (for tests and short bodies: it holds the
// texts once more).
func (p *Payload) Bytes() []byte {
	b := make([]byte, p.n)
	n, _ := io.ReadFull(p.Reader(), b)
	return b[:n]
}

// chunk is the most a reader escapes at once.
const chunk = 32 << 10

// reader reads a Payload: raw segments as they are, texts escaped through
// buf, lists fragment by fragment.
type reader struct {
	p *Payload
	// The current segment, cur: p.segs[seg], or in a list the segment fs
	// of its fragment frag; nil at the end. some: a fragment of the list
	// has been read.
	seg, frag, fs int
	some          bool
	cur           *segment
	off           int // in the raw segment, or in the current piece of a text
	piece         int
	esc           int    // the piece's next escape, when the segment has them
	buf           []byte // escaped text not yet read, in back
	back          []byte
}

// next moves r to the next segment that is not a list.
func (r *reader) next() {
	r.off, r.piece, r.esc = 0, 0, 0
	for {
		if r.seg >= 0 && r.seg < len(r.p.segs) {
			if l := r.p.segs[r.seg].list; l != nil {
				for r.frag < len(l) {
					f := l[r.frag]
					if r.fs < len(f.segs) {
						r.cur = &f.segs[r.fs]
						if r.fs == 0 && !r.some {
							r.off = 1 // the first fragment's comma
						}
						r.fs++
						r.some = true
						return
					}
					r.frag, r.fs = r.frag+1, 0
				}
			}
		}
		r.seg, r.frag, r.fs, r.some = r.seg+1, 0, 0, false
		if r.seg >= len(r.p.segs) {
			r.cur = nil
			return
		}
		if r.p.segs[r.seg].list == nil {
			r.cur = &r.p.segs[r.seg]
			return
		}
	}
}

func (r *reader) Read(out []byte) (int, error) {
	n := 0
	for n < len(out) {
		if len(r.buf) > 0 {
			k := copy(out[n:], r.buf)
			r.buf = r.buf[k:]
			n += k
			continue
		}
		s := r.cur
		if s == nil {
			if n == 0 {
				return 0, io.EOF
			}
			break
		}
		if s.text == nil {
			k := copy(out[n:], s.raw[r.off:])
			r.off += k
			n += k
			if r.off == len(s.raw) {
				r.next()
			}
			continue
		}
		if r.piece >= len(s.text) {
			r.next()
			continue
		}
		t := s.text[r.piece]
		if r.off == len(t) {
			r.piece, r.off, r.esc = r.piece+1, 0, 0
			continue
		}
		if s.esc != nil {
			k := 0
			k, r.off, r.esc = writeEscapes(out[n:], t, s.esc[r.piece], r.off, r.esc)
			n += k
			if k > 0 || r.off == len(t) {
				continue
			}
			// No room in out for the next escape: write it through buf.
			if r.back == nil {
				r.back = make([]byte, 0, chunk+utf8.UTFMax*6)
			}
			b, used := jsonesc.Append(r.back[:0], t[r.off:], 1)
			r.off += used
			r.esc++
			r.buf = b
			continue
		}
		// Escape straight into out when it has room, else through buf.
		if len(out)-n >= chunk+utf8.UTFMax*6 {
			b, used := jsonesc.Append(out[n:n], t[r.off:], chunk)
			r.off += used
			n += len(b)
			continue
		}
		if r.back == nil {
			r.back = make([]byte, 0, chunk+utf8.UTFMax*6)
		}
		b, used := jsonesc.Append(r.back[:0], t[r.off:], chunk)
		r.off += used
		r.buf = b
	}
	return n, nil
}

// escapes returns the offsets in s (of Keep bytes at most) of the bytes
// and runes jsonesc.Append does not write as they are, in order; nil when
// there are none.
func escapes(s string) []uint16 {
	var e []uint16
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if !jsonesc.Plain(c) {
				e = append(e, uint16(i))
			}
			i++
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 || c == '\u2028' || c == '\u2029' {
			e = append(e, uint16(i))
		}
		i += size
	}
	return e
}

// writeEscapes writes t from off escaped into out, as jsonesc.Append
// would, copying the runs between its escapes e (see [escapes]) from the
// next one, ei; it stops when out has no room for the next run's byte or
// escape, and returns the bytes written and where t and e stand then.
func writeEscapes(out []byte, t string, e []uint16, off, ei int) (int, int, int) {
	n := 0
	for {
		stop := len(t)
		if ei < len(e) {
			stop = int(e[ei])
		}
		k := copy(out[n:], t[off:stop])
		n += k
		off += k
		if off < stop || off == len(t) {
			return n, off, ei
		}
		var esc string
		size := 1
		if c := t[off]; c < utf8.RuneSelf {
			esc = jsonesc.ASCII(c)
		} else if r, sz := utf8.DecodeRuneInString(t[off:]); r == utf8.RuneError && sz == 1 {
			esc = `\ufffd`
		} else {
			esc, size = lineSeparator[r&1], sz
		}
		if len(out)-n < len(esc) {
			return n, off, ei
		}
		n += copy(out[n:], esc)
		off += size
		ei++
	}
}

// lineSeparator is how jsonesc.Append writes U+2028 and U+2029.
var lineSeparator = [2]string{`\u2028`, `\u2029`}
