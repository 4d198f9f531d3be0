package body

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"acpd/internal/jsonesc"
	"acpd/model"
)

type doc struct {
	Model string   `json:"model"`
	Items []item   `json:"items"`
	Tags  []string `json:"tags,omitempty"`
}

type item struct {
	Text string `json:"text,omitempty"`
	URL  string `json:"url,omitempty"`
}

// check builds a doc whose texts go through a Builder and compares the
// payload, read whole and through small and odd reads, with json.Marshal
// of the same doc holding the texts themselves.
func check(t *testing.T, texts ...string) {
	t.Helper()
	var b Builder
	real, out := doc{Model: "m<&>"}, doc{Model: "m<&>"}
	for i, s := range texts {
		half := len(s) / 2
		for half > 0 && half < len(s) && !utf8.RuneStart(s[half]) {
			half--
		}
		real.Items = append(real.Items, item{Text: s, URL: "data:x;base64," + s})
		out.Items = append(out.Items, item{Text: b.Text(s), URL: "data:x;base64," + b.Text(s[:half], s[half:])})
		if i%2 == 0 {
			real.Tags = append(real.Tags, s+s)
			out.Tags = append(out.Tags, b.Text(s)+b.Text(s))
		}
	}
	want, err := json.Marshal(real)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	same(t, p, want)
	var w bytes.Buffer
	if n, err := p.WriteTo(&w); err != nil || n != int64(len(want)) || !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("WriteTo wrote %d bytes (%v), want %d", n, err, len(want))
	}
	// io.Copy (net/http's copy of a request body) takes the reader's
	// WriteTo, after part of the body was read.
	r := p.Reader()
	head := make([]byte, min(5, len(want)))
	io.ReadFull(r, head)
	w.Reset()
	w.Write(head)
	if _, ok := r.(io.WriterTo); !ok {
		t.Fatal("a payload's reader is no io.WriterTo")
	}
	if n, err := io.Copy(&w, r); err != nil || n != int64(len(want)-len(head)) || !bytes.Equal(w.Bytes(), want) {
		t.Fatalf("io.Copy of the reader copied %d bytes (%v), want %d", n, err, len(want)-len(head))
	}
}

// smallReads reads at most 7 bytes at a time.
type smallReads struct{ r io.Reader }

func (s smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), 7)]) }

func TestPayloadIsTheEncoding(t *testing.T) {
	long := strings.Repeat("plain ", Inline/6+1)
	check(t, "short", "")
	check(t, long, "short")
	check(t, strings.Repeat("\"\\\n\r\t\b\f\x01\x1f<>&é€😀\u2028\u2029\xff\xc3", Inline/10), long+"\x00tail")
	check(t, strings.Repeat("x", 3*chunk+5)+strings.Repeat("é", chunk))
}

func FuzzPayload(f *testing.F) {
	f.Add("a<b>\"c\"\\\u2028\xff", 3)
	f.Add("", 0)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = (n%4+4)%4 + 1
		if s == "" {
			s = "x"
		}
		long := strings.Repeat(s, Inline/len(s)+n)
		// Texts end at a rune boundary (see Builder.Text): the check
		// puts two side by side, and a rune cut at the end of one could
		// be completed by the start of the other.
		check(t, whole(s), long, whole(long[:len(long)-n]))
	})
}

// whole returns s without the first bytes of a rune it may end in, so
// that another string after it escapes the same as on its own.
func whole(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return whole(s[:i])
			}
			break
		}
	}
	return s
}

// TestTextsEscapeOnTheirOwn pins what whole guards against: a rune
// cut between two texts is replaced in each, as Builder.Text says.
func TestTextsEscapeOnTheirOwn(t *testing.T) {
	var b Builder
	head := strings.Repeat("a", Inline) + "\xf0\x9f"
	p, err := b.Marshal([]string{b.Text(head) + b.Text("\x98\x80"+strings.Repeat("b", Inline))})
	if err != nil {
		t.Fatal(err)
	}
	want := `["` + strings.Repeat("a", Inline) + strings.Repeat(`\ufffd`, 4) + strings.Repeat("b", Inline) + `"]`
	if got := string(p.Bytes()); got != want || p.Len() != int64(len(want)) {
		t.Fatalf("got %d bytes %.40q…, want %d", len(got), got[Inline:], len(want))
	}
}

// Message merges runs, and only those, and puts long texts and data out
// of line.
func TestMessage(t *testing.T) {
	long := strings.Repeat("y", Inline)
	var b Builder
	am := model.Message{Role: model.RoleAssistant, Parts: []model.Part{
		{Type: model.PartReasoning, Text: "r1"}, {Type: model.PartReasoning, Text: "r2", Signature: "s", Provider: "p", Continued: true},
		{Type: model.PartText, Text: "t1"}, {Type: model.PartText, Text: "t2", Continued: true}, {Type: model.PartText, Text: long, Continued: true},
		{Type: model.PartText, Text: "not continued"},
		{Type: model.PartToolUse, ToolCallID: "c", Input: json.RawMessage(`{}`)},
		{Type: model.PartText, Text: "after"},
	}}
	got := b.Message(am)
	if len(got.Parts) != 5 || got.Parts[0].Text != "r1r2" || got.Parts[0].Signature != "s" || got.Parts[0].Continued || got.Parts[2].Text != "not continued" || got.Parts[3].Type != model.PartToolUse || got.Parts[4].Text != "after" {
		t.Fatalf("merged parts: %+v", got.Parts)
	}
	if pl := got.Parts[1].Text; len(pl) >= Inline || !strings.HasPrefix(pl, "\x00") {
		t.Fatalf("the long run is not out of line: %d bytes", len(pl))
	}
	if am.Parts[0].Text != "r1" || len(am.Parts) != 8 {
		t.Fatal("Message modified its argument")
	}
	um := model.Message{Role: model.RoleUser, Parts: []model.Part{
		{Type: model.PartText, Text: "a"}, {Type: model.PartText, Text: "b"},
		{Type: model.PartImage, MimeType: "image/png", Data: long},
		{Type: model.PartToolResult, ToolCallID: "c", Content: []model.Part{{Type: model.PartText, Text: long}}},
	}}
	got = b.Message(um)
	if len(got.Parts) != 4 || got.Parts[0].Text != "a" || got.Parts[1].Text != "b" {
		t.Fatalf("a user message's parts were merged: %+v", got.Parts)
	}
	if len(got.Parts[2].Data) >= Inline || len(got.Parts[3].Content[0].Text) >= Inline {
		t.Fatal("long data or tool output not out of line")
	}
	if um.Parts[3].Content[0].Text != long {
		t.Fatal("Message modified a tool result")
	}
	p, err := b.Marshal([]model.Message{got})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal([]model.Message{um})
	if !bytes.Equal(p.Bytes(), want) {
		t.Fatal("the payload of a user message differs from its encoding")
	}
}

// same compares p, read whole, through small and odd reads and written,
// with want, and its length with want's.
func same(t *testing.T, p *Payload, want []byte) {
	t.Helper()
	if p.Len() != int64(len(want)) {
		t.Fatalf("Len = %d, want %d", p.Len(), len(want))
	}
	if got := p.Bytes(); !bytes.Equal(got, want) {
		t.Fatalf("Bytes differ from json.Marshal:\n%.300q\nwant\n%.300q", got, want)
	}
	for _, r := range []io.Reader{p.Reader(), iotest.HalfReader(p.Reader()), smallReads{p.Reader()}} {
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read %d bytes (%v), want the %d of json.Marshal", len(got), err, len(want))
		}
	}
}

type listDoc struct {
	Model string          `json:"model"`
	Items json.RawMessage `json:"items"`
	Tags  []string        `json:"tags,omitempty"`
}

// A list of fragments is the encoding of the slice of their values: empty
// fragments are skipped, none at all is null, and fragments kept from
// other Builders (earlier bodies) serve in any number of bodies; an Array
// of none is [].
func TestListIsTheEncoding(t *testing.T) {
	long := strings.Repeat("\"\\\n<>&é€😀\u2028\xff plain ", Inline/20+1)
	huge := strings.Repeat("x\u2029\x01", Keep/4+1) // escaped, longer than Keep
	groups := [][]item{
		{{Text: "a"}},
		{},
		{{Text: long, URL: "u"}, {Text: "b"}},
		{{Text: huge}},
		{{URL: long}, {Text: huge + long}, {}},
		{},
	}
	var kept []*Fragment // from one Builder, reused by the bodies below
	var old Builder
	for _, g := range groups {
		var vs []any
		for _, it := range g {
			vs = append(vs, item{Text: old.Text(it.Text), URL: old.Text(it.URL)})
		}
		f, err := old.Encode(vs...)
		if err != nil {
			t.Fatal(err)
		}
		enc, _ := json.Marshal(g)
		if len(g) == 0 {
			enc = []byte("[]")
		}
		if f.Len() != int64(len(enc)-2) {
			t.Fatalf("fragment of %d items: Len %d, want %d", len(g), f.Len(), len(enc)-2)
		}
		kept = append(kept, f)
	}
	for lo := range groups {
		for hi := lo; hi <= len(groups); hi++ {
			for _, array := range []bool{false, true} {
				var b Builder
				d := listDoc{Model: b.Text(long), Items: b.List(kept[lo:hi]), Tags: []string{b.Text(huge), "t"}}
				var items []item
				if array {
					d.Items, items = b.Array(kept[lo:hi]), []item{}
				}
				p, err := b.Marshal(d)
				if err != nil {
					t.Fatal(err)
				}
				for _, g := range groups[lo:hi] {
					items = append(items, g...)
				}
				want, _ := json.Marshal(struct {
					Model string   `json:"model"`
					Items []item   `json:"items"`
					Tags  []string `json:"tags,omitempty"`
				}{long, items, []string{huge, "t"}})
				same(t, p, want)
			}
		}
	}
}

// A fragment holds its texts by reference, so that a message is held once
// however many bodies it goes in: the escapes of a text up to Keep, the
// text alone beyond; only a text of short runs between escapes is held
// escaped. Written, it is the encoding.
func TestFragmentHoldsTextsOnce(t *testing.T) {
	huge := strings.Repeat("é", Keep)
	const line = "A line of prose, as a model writes it, runs on for a while before it ends: this one, a hundred and fifty bytes long, holds two escapes. <\n"
	sparse := strings.Repeat(line, Inline/len(line)+1)
	dense := strings.Repeat("\tx\"\u2028\xff\n", Inline/8)
	var b Builder
	f, err := b.Encode(item{Text: b.Text(huge), URL: b.Text(sparse)}, item{Text: b.Text(dense)})
	if err != nil {
		t.Fatal(err)
	}
	raw, texts := 0, 0
	for _, s := range f.segs {
		raw += len(s.raw)
		if s.text == nil {
			continue
		}
		texts++
		switch s.text[0] {
		case huge:
			if s.n != int64(len(huge)) || s.esc != nil {
				t.Errorf("the long text: escaped length %d, escapes kept %v; want %d, none", s.n, s.esc != nil, len(huge))
			}
		case sparse:
			if want := 2 * (Inline/len(line) + 1); len(s.esc) != 1 || len(s.esc[0]) != want {
				t.Errorf("the sparse text keeps %v escapes, want %d", s.esc, want)
			}
		default:
			t.Errorf("the dense text is held by reference")
		}
	}
	if texts != 2 || raw < jsonesc.Len(dense) || raw > jsonesc.Len(dense)+Inline {
		t.Fatalf("the fragment holds %d texts and %d raw bytes: want two texts by reference and the dense one escaped", texts, raw)
	}
	var p Payload
	p.addList(entry{list: []*Fragment{f}, empty: null})
	a, _ := json.Marshal(item{Text: huge, URL: sparse})
	c, _ := json.Marshal(item{Text: dense})
	same(t, &p, []byte("["+string(a)+","+string(c)+"]"))
}

func TestListInsideTextFails(t *testing.T) {
	var b Builder
	l := b.List(nil)
	if _, err := b.Marshal(map[string]string{"a": "x" + string(l)}); err == nil {
		t.Fatal("a list inside a string was accepted")
	}
	if _, err := b.Encode(l); err == nil {
		t.Fatal("a list inside a fragment was accepted")
	}
}

// TestRunIsTheList: a run, made and extended fragment by fragment (in its
// spare capacity or by copying, from the latest run or an older one), is
// encoded as the List of its fragments, with its length.
func TestRunIsTheList(t *testing.T) {
	long := strings.Repeat("\"\\\n<>&é€😀\u2028\xff plain ", Inline/20+1)
	var kept Builder
	var frags []*Fragment
	for i, s := range []string{"a", "", long, "b", long + "c"} {
		var vs []any
		for range i % 3 {
			vs = append(vs, item{Text: kept.Text(s)})
		}
		f, err := kept.Encode(vs...)
		if err != nil {
			t.Fatal(err)
		}
		frags = append(frags, f)
	}
	body := func(r *Run) *Payload {
		var b Builder
		p, err := b.Marshal(listDoc{Model: "m", Items: b.ListRun(r)})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := func(fs []*Fragment) []byte {
		var b Builder
		p, err := b.Marshal(listDoc{Model: "m", Items: b.List(fs)})
		if err != nil {
			t.Fatal(err)
		}
		return p.Bytes()
	}
	runs := []*Run{NewRun()}
	for i, f := range frags {
		runs = append(runs, runs[i].Extend(f))
	}
	// Two runs extended from one: the second must not see the first's
	// fragment in the array they share.
	other := runs[2].Extend(frags[4])
	for i, r := range runs {
		if r.Len() != i {
			t.Fatalf("run %d: Len %d", i, r.Len())
		}
		same(t, body(r), want(frags[:i]))
	}
	same(t, body(other), want([]*Fragment{frags[0], frags[1], frags[4]}))
	same(t, body(NewRun(frags...)), want(frags))
	// As an array, an empty run is [], and a run its List.
	for _, r := range []*Run{NewRun(), runs[1], runs[3]} {
		var b, w Builder
		p, err := b.Marshal(listDoc{Model: "m", Items: b.ArrayRun(r)})
		if err != nil {
			t.Fatal(err)
		}
		q, err := w.Marshal(listDoc{Model: "m", Items: w.Array(r.frags)})
		if err != nil {
			t.Fatal(err)
		}
		same(t, p, q.Bytes())
	}
}
