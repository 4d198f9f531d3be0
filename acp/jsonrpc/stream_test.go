package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// chunkReader returns its data in reads of the given sizes (cycled).
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := len(r.data)
	if len(r.sizes) > 0 {
		n = max(1, r.sizes[r.i%len(r.sizes)])
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

type frame struct {
	line    string
	tooLong bool
}

// referenceFrames splits data the way lineReader must.
func referenceFrames(data []byte, limit int) []frame {
	var out []frame
	parts := bytes.Split(data, []byte("\n"))
	if len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1] // data ended with "\n" (or was empty)
	}
	for _, p := range parts {
		if len(p) > limit {
			out = append(out, frame{tooLong: true})
			continue
		}
		out = append(out, frame{line: string(trimCR(p))})
	}
	return out
}

// readFrames drains a lineReader, checking its memory bound after each line.
func readFrames(t testing.TB, l *lineReader) []frame {
	var out []frame
	for {
		line, tooLong, err := l.next()
		if cap(l.buf) > l.max {
			t.Fatalf("line buffer capacity %d exceeds the limit %d", cap(l.buf), l.max)
		}
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		out = append(out, frame{line: string(line), tooLong: tooLong})
	}
}

func framesEqual(a, b []frame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLineReader(t *testing.T) {
	cases := []struct {
		name  string
		input string
		limit int
	}{
		{"empty", "", 10},
		{"lines", "a\nbb\n\nccc\n", 10},
		{"crlf", "a\r\nb\r\n\r\n", 10},
		{"final line without newline", "a\nlast", 10},
		{"exactly at limit", "0123456789\n", 10},
		{"one over limit", "0123456789A\nok\n", 10},
		{"cr counts toward the limit", "0123456789\r\nok\n", 10},
		{"long line spanning buffers", strings.Repeat("x", 100) + "\n" + strings.Repeat("y", 40) + "\nz", 50},
		{"too long final line", "ok\n" + strings.Repeat("x", 100), 50},
	}
	for _, tc := range cases {
		for _, sizes := range [][]int{nil, {1}, {3, 7, 1}} {
			l := newLineReader(&chunkReader{data: []byte(tc.input), sizes: sizes}, tc.limit, 16)
			got := readFrames(t, l)
			if want := referenceFrames([]byte(tc.input), tc.limit); !framesEqual(got, want) {
				t.Errorf("%s (reads %v): got %+v, want %+v", tc.name, sizes, got, want)
			}
		}
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func TestLineReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	l := newLineReader(io.MultiReader(strings.NewReader("partial"), errReader{boom}), 100, 16)
	if _, _, err := l.next(); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
}

// repeatReader yields n copies of b.
type repeatReader struct {
	b byte
	n int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), r.n)
	for i := range k {
		p[i] = r.b
	}
	r.n -= k
	return k, nil
}

// A line many times the limit is skipped in bounded memory.
func TestLineReaderBoundedMemory(t *testing.T) {
	const limit = 1024
	const huge = 16 << 20
	input := io.MultiReader(strings.NewReader(`{"s":"`), &repeatReader{b: 'x', n: huge}, strings.NewReader("\"}\nnext\n"))
	l := newLineReader(input, limit, readBufSize)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, tooLong, err := l.next()
	runtime.ReadMemStats(&after)
	if err != nil || !tooLong {
		t.Fatalf("next = tooLong %v, err %v", tooLong, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Fatalf("skipping a %d-byte line allocated %d bytes", huge, grew)
	}
	if line, tooLong, err := l.next(); err != nil || tooLong || string(line) != "next" {
		t.Fatalf("line after the huge one = %q, %v, %v", line, tooLong, err)
	}
}

// FuzzReadLine feeds arbitrary bytes, split at arbitrary points, through the
// framer: it must not panic, must keep its buffer within the limit and must
// deliver exactly the lines a reference splitter finds.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\":2}\r\n\n"), []byte{1, 2, 3}, uint8(8))
	f.Add([]byte(strings.Repeat("x", 300)+"\nshort\n"), []byte{17}, uint8(40))
	f.Add([]byte("no newline at all"), []byte{}, uint8(4))
	f.Add([]byte("\r\n\r\r\n\n"), []byte{0, 1}, uint8(1))
	f.Fuzz(func(t *testing.T, data, sizes []byte, limit uint8) {
		max := int(limit)%200 + 1
		var sz []int
		for _, s := range sizes {
			sz = append(sz, int(s))
		}
		l := newLineReader(&chunkReader{data: data, sizes: sz}, max, 16)
		got := readFrames(t, l)
		if want := referenceFrames(data, max); !framesEqual(got, want) {
			t.Fatalf("got %+v, want %+v", got, want)
		}
	})
}

func TestLineWriterRejectsMultiline(t *testing.T) {
	var buf bytes.Buffer
	lw := newLineWriter(nopCloser{&buf})
	ctx := context.Background()
	for _, bad := range []string{"", "no newline", "two\nlines\n"} {
		if err := lw.writeLine(ctx, []byte(bad)); err == nil {
			t.Errorf("writeLine(%q) succeeded", bad)
		}
	}
	if err := lw.writeLine(ctx, []byte("ok\n")); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "ok\n" {
		t.Fatalf("wrote %q", buf.String())
	}
}

// A failed write poisons the writer: the stream may hold half a line.
func TestLineWriterStickyError(t *testing.T) {
	w := &failWriter{}
	lw := newLineWriter(w)
	ctx := context.Background()
	if err := lw.writeLine(ctx, []byte("a\n")); err == nil {
		t.Fatal("first write succeeded")
	}
	w.ok = true
	if err := lw.writeLine(ctx, []byte("b\n")); err == nil {
		t.Fatal("write after a failed write succeeded")
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

type failWriter struct{ ok bool }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.ok {
		return len(p), nil
	}
	return 1, errors.New("short")
}

func (*failWriter) Close() error { return nil }

func TestDecodeEnvelope(t *testing.T) {
	cases := []struct {
		line    string
		kind    msgKind
		method  string
		id      string
		params  string
		problem bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":1}}`, kindRequest, "a", "1", `{"x":1}`, false},
		{` { "method" : "a\u002fb" , "jsonrpc" : "2.0" } `, kindNotification, "a/b", "", "", false},
		{`{"jsonrpc":"2.0","method":"a","params":null}`, kindNotification, "a", "", "null", false},
		{`{"jsonrpc":"2.0","method":"a","params":[1,2]}`, kindNotification, "a", "", "[1,2]", false},
		{`{"jsonrpc":"2.0","id":null,"method":"a"}`, kindRequest, "a", "null", "", false},
		{`{"jsonrpc":"2.0","id":"x","result":{"a":1}}`, kindResponse, "", `"x"`, "", false},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":1,"message":"m"}}`, kindResponse, "", "3", "", false},
		{`{"jsonrpc":"2.0","id":3,"result":1,"error":{}}`, kindResponse, "", "3", "", true},
		{`{"jsonrpc":"2.0","result":1}`, kindResponse, "", "", "", true},
		{`{"jsonrpc":"2.0","id":1,"result":1,"result":2}`, kindResponse, "", "1", "", true},
		{`{"jsonrpc":"2.0","id":1,"Error":{}}`, kindResponse, "", "1", "", true},
	}
	for _, tc := range cases {
		e := decodeEnvelope([]byte(tc.line))
		if e.kind != tc.kind || e.method != tc.method || string(e.id) != tc.id || string(e.params) != tc.params || (e.problem != "") != tc.problem {
			t.Errorf("decodeEnvelope(%s) = %+v", tc.line, e)
		}
	}
}

// FuzzDecodeMessage checks the envelope decoder against encoding/json.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"hi"}]}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"_meta":{"a":[1,{"b":"\"}"}]}}}`,
		`{"jsonrpc":"2.0","id":"a\u0041","result":null}`,
		`{"jsonrpc":"2.0","id":-1.5e3,"error":{"code":-32603,"message":"x","data":[]}}`,
		`{"Jsonrpc":"2.0","ID":1,"METHOD":"x"}`,
		`[{"jsonrpc":"2.0"}]`, `{"a":`, `"x"`, `{}`, `{"method":1}`, "{\"méthod\":\"x\",\"id\":{}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		e := decodeEnvelope(line)
		if !json.Valid(line) {
			if e.kind != kindInvalid || e.code != codeParseError {
				t.Fatalf("invalid JSON decoded as %+v", e)
			}
			return
		}
		if e.kind == kindInvalid {
			if e.code != codeInvalidRequest || !json.Valid(e.replyID) || e.message == "" {
				t.Fatalf("bad rejection %+v", e)
			}
			// The error response must be one line of valid JSON.
			buf, err := encodeLine(wireResponse{JSONRPC: "2.0", ID: e.replyID, Error: &Error{Code: e.code, Message: e.message}})
			if err != nil || bytes.Count(buf.Bytes(), []byte("\n")) != 1 || !json.Valid(buf.Bytes()) {
				t.Fatalf("error response %q: %v", buf, err)
			}
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil {
			t.Fatalf("accepted %s (%+v) but encoding/json says %v", line, e, err)
		}
		if e.kind == kindResponse && e.problem != "" {
			return
		}
		if string(obj["jsonrpc"]) != `"2.0"` && !isVersion2(obj["jsonrpc"]) {
			t.Fatalf("accepted jsonrpc %s", obj["jsonrpc"])
		}
		if string(obj["id"]) != string(e.id) {
			t.Fatalf("id %s, encoding/json sees %s", e.id, obj["id"])
		}
		for k := range obj {
			for _, name := range envelopeKeys {
				if k != name && strings.EqualFold(k, name) {
					t.Fatalf("accepted case variant %q", k)
				}
			}
		}
		switch e.kind {
		case kindRequest, kindNotification:
			var method string
			if err := json.Unmarshal(obj["method"], &method); err != nil || method != e.method {
				t.Fatalf("method %q, encoding/json sees %s (%v)", e.method, obj["method"], err)
			}
			if string(obj["params"]) != string(e.params) {
				t.Fatalf("params %s, encoding/json sees %s", e.params, obj["params"])
			}
			if (e.kind == kindRequest) != (obj["id"] != nil) {
				t.Fatalf("kind %v with id %s", e.kind, obj["id"])
			}
		case kindResponse:
			if string(obj["result"]) != string(e.result) || string(obj["error"]) != string(e.errObj) {
				t.Fatalf("response members differ: %+v vs %v", e, obj)
			}
		}
	})
}

func TestIDKey(t *testing.T) {
	same := [][2]string{{`"A"`, `"\u0041"`}, {`1`, ` 1 `}, {`null`, `null`}}
	for _, p := range same {
		a, ok1 := idKey([]byte(p[0]))
		b, ok2 := idKey([]byte(p[1]))
		if !ok1 || !ok2 || a != b {
			t.Errorf("idKey(%s)=%q, idKey(%s)=%q", p[0], a, p[1], b)
		}
	}
	different := [][2]string{{`1`, `"1"`}, {`"null"`, `null`}, {`1`, `1.0`}}
	for _, p := range different {
		a, _ := idKey([]byte(p[0]))
		b, _ := idKey([]byte(p[1]))
		if a == b {
			t.Errorf("idKey(%s) == idKey(%s)", p[0], p[1])
		}
	}
	for _, bad := range []string{``, `{}`, `[1]`, `true`, `"x`} {
		if _, ok := idKey([]byte(bad)); ok {
			t.Errorf("idKey(%s) accepted", bad)
		}
	}
}
