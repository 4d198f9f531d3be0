package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// selfWriting is a payload that writes its own JSON: a string of n bytes,
// written in pieces of step bytes, failing after fail bytes when fail > 0.
type selfWriting struct {
	n, step, fail int
}

var errWriteJSON = errors.New("encoder failed")

func (p selfWriting) WriteJSON(w io.Writer) error {
	if _, err := io.WriteString(w, `{"s":"`); err != nil {
		return err
	}
	piece := []byte(strings.Repeat("x", p.step))
	for done := 0; done < p.n; done += p.step {
		if p.fail > 0 && done >= p.fail {
			return errWriteJSON
		}
		if _, err := w.Write(piece[:min(p.step, p.n-done)]); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, `"}`)
	return err
}

func (p selfWriting) want() json.RawMessage {
	return json.RawMessage(`{"s":"` + strings.Repeat("x", p.n) + `"}`)
}

func TestAppendSelfWriting(t *testing.T) {
	s := newStore(t)
	l, err := s.Create(Meta{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	small, large := selfWriting{n: 10, step: 3}, selfWriting{n: 1 << 20, step: 1000}
	ra := mustAppend(t, l, "a", small)
	rb := mustAppend(t, l, "b", large) // many write(2)s
	// A failing encoder, after some of its record reached the file, leaves
	// no trace: the next record follows the last complete one.
	if _, err := l.Append("c", selfWriting{n: 1 << 20, step: 1000, fail: 300_000}); !errors.Is(err, errWriteJSON) {
		t.Fatalf("failing WriteJSON: got %v", err)
	}
	if _, err := l.Append("c", selfWriting{n: maxLineBytes, step: 1 << 20}); err == nil {
		t.Fatal("a record over the line limit was appended")
	}
	rd := mustAppend(t, l, "d", json.RawMessage(`{"after":true}`))
	// Pieces larger than the record's buffer pass through to the file
	// (in writes of at most streamChunk), after what it holds.
	mid, huge := selfWriting{n: 100_000, step: 40_000}, selfWriting{n: 1 << 20, step: 3 * streamChunk / 2}
	re := mustAppend(t, l, "e", mid)
	rf := mustAppend(t, l, "f", huge)
	mustClose(t, l)
	recs, err := s.Records(l.ID())
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, recs, []Record{
		{Seq: 1, Time: ra.Time, Kind: "a", Data: small.want()},
		{Seq: 2, Time: rb.Time, Kind: "b", Data: large.want()},
		{Seq: 3, Time: rd.Time, Kind: "d", Data: json.RawMessage(`{"after":true}`)},
		{Seq: 4, Time: re.Time, Kind: "e", Data: mid.want()},
		{Seq: 5, Time: rf.Time, Kind: "f", Data: huge.want()},
	})
	if m, err := s.Get(l.ID()); err != nil || m.Records != 5 {
		t.Fatalf("index entry %+v, %v; want 5 records", m, err)
	}
	if b := readLog(t, s, l.ID()); bytes.Count(b, []byte("\n")) != 6 {
		t.Fatalf("log has %d lines, want header and 5 records", bytes.Count(b, []byte("\n")))
	}
}
