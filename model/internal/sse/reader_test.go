package sse

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"acpd/model/internal/sse/ssetest"
)

func readAll(r *Reader) ([]Event, error) {
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want []Event
		err  error
	}{
		{
			name: "lf",
			in:   "event: a\ndata: one\n\ndata: two\n\n",
			want: []Event{{Event: "a", Data: "one"}, {Data: "two"}},
		},
		{
			name: "crlf",
			in:   "event: a\r\ndata: one\r\n\r\ndata: two\r\n\r\n",
			want: []Event{{Event: "a", Data: "one"}, {Data: "two"}},
		},
		{
			name: "cr",
			in:   "event: a\rdata: one\r\rdata: two\r\r",
			want: []Event{{Event: "a", Data: "one"}, {Data: "two"}},
		},
		{
			name: "mixed endings",
			in:   "data: a\r\ndata: b\rdata: c\n\r\n",
			want: []Event{{Data: "a\nb\nc"}},
		},
		{
			name: "multi-line data",
			in:   "data: YHOO\ndata: +2\ndata: 10\n\n",
			want: []Event{{Data: "YHOO\n+2\n10"}},
		},
		{
			name: "comments and pings",
			in:   ": ping\n\n:\ndata: x\n: inside\n\n: trailing\n",
			want: []Event{{Data: "x"}},
		},
		{
			name: "no space after colon",
			in:   "event:e\ndata:x\ndata:  two spaces\n\n",
			want: []Event{{Event: "e", Data: "x\n two spaces"}},
		},
		{
			name: "field without colon",
			in:   "data\ndata\ndata\n\ndata:\n\n",
			want: []Event{{Data: "\n\n"}, {Data: ""}},
		},
		{
			name: "event without data is not dispatched",
			in:   "event: lonely\n\ndata: x\n\n",
			want: []Event{{Data: "x"}},
		},
		{
			name: "bom",
			in:   "\xEF\xBB\xBFdata: x\n\n",
			want: []Event{{Data: "x"}},
		},
		{
			name: "only first bom stripped",
			in:   "\xEF\xBB\xBF\xEF\xBB\xBFdata: x\n\ndata: y\n\n",
			want: []Event{{Data: "y"}},
		},
		{
			name: "id and retry persist",
			in:   "id: 1\nretry: 1500\ndata: a\n\ndata: b\n\nid\nretry: x\ndata: c\n\nid: a\x00b\ndata: d\n\n",
			want: []Event{{Data: "a", ID: "1", Retry: 1500}, {Data: "b", ID: "1", Retry: 1500}, {Data: "c", Retry: 1500}, {Data: "d", Retry: 1500}},
		},
		{
			name: "unknown fields ignored",
			in:   "foo: bar\ndata: x\n\n",
			want: []Event{{Data: "x"}},
		},
		{
			name: "incomplete final event",
			in:   "data: a\n\ndata: b\n",
			want: []Event{{Data: "a"}},
			err:  io.ErrUnexpectedEOF,
		},
		{
			name: "unterminated final line",
			in:   "data: a\n\n: ping",
			want: []Event{{Data: "a"}},
			err:  io.ErrUnexpectedEOF,
		},
		{
			name: "final cr ends the line",
			in:   "data: a\r\r",
			want: []Event{{Data: "a"}},
		},
		{
			name: "line too long",
			in:   "data: a\n\n: " + strings.Repeat("x", 20) + "\n\ndata: b\n\n",
			max:  16,
			want: []Event{{Data: "a"}},
			err:  ErrEventTooLarge,
		},
		{
			name: "data too large",
			in:   "data: 0123456\n\ndata: 0123456\ndata: 0123456\ndata: 0123456\n\n",
			max:  16,
			want: []Event{{Data: "0123456"}},
			err:  ErrEventTooLarge,
		},
		{
			name: "empty",
			in:   "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []string{"whole", "onebyte", "dataerr"} {
				var r io.Reader = strings.NewReader(tt.in)
				switch mode {
				case "onebyte":
					r = iotest.OneByteReader(r)
				case "dataerr":
					r = iotest.DataErrReader(r)
				}
				got, err := readAll(NewReader(r, tt.max))
				if !errors.Is(err, tt.err) {
					t.Errorf("%s: err = %v, want %v", mode, err, tt.err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: events = %#v\nwant %#v", mode, got, tt.want)
				}
			}
		})
	}
}

func TestReaderErrorsAreSticky(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)), 0)
	if ev, err := r.Next(); err != nil || ev.Data != "a" {
		t.Fatalf("Next = %v, %v", ev, err)
	}
	for range 2 {
		if _, err := r.Next(); err != boom {
			t.Fatalf("Next err = %v, want boom", err)
		}
	}
}

func TestReaderNoProgress(t *testing.T) {
	r := NewReader(zeroReader{}, 0)
	if _, err := r.Next(); err != io.ErrNoProgress {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

type zeroReader struct{}

func (zeroReader) Read([]byte) (int, error) { return 0, nil }

// refParse is an independent, whole-input implementation of the event
// stream interpretation rules, used as the fuzzing oracle.
func refParse(in []byte, max int) ([]Event, error) {
	if max <= 0 {
		max = DefaultMaxEventBytes
	}
	in = bytes.TrimPrefix(in, []byte("\xEF\xBB\xBF"))
	var (
		evs             []Event
		data, eventType string
		hasData, pend   bool
		id              string
		retry           int
	)
	for len(in) > 0 {
		i := bytes.IndexAny(in, "\r\n")
		if i < 0 {
			if len(in) > max {
				return evs, ErrEventTooLarge
			}
			return evs, io.ErrUnexpectedEOF
		}
		line := string(in[:i])
		if in[i] == '\r' && i+1 < len(in) && in[i+1] == '\n' {
			in = in[i+2:]
		} else {
			in = in[i+1:]
		}
		if len(line) > max {
			return evs, ErrEventTooLarge
		}
		switch {
		case line == "":
			if hasData {
				evs = append(evs, Event{Event: eventType, Data: strings.TrimSuffix(data, "\n"), ID: id, Retry: retry})
			}
			data, eventType, hasData, pend = "", "", false, false
		case line[0] == ':':
		default:
			name, value, found := strings.Cut(line, ":")
			if found {
				value = strings.TrimPrefix(value, " ")
			}
			switch name {
			case "data":
				if len(data)+len(value)+1 > max {
					return evs, ErrEventTooLarge
				}
				data += value + "\n"
				hasData, pend = true, true
			case "event":
				eventType, pend = value, true
			case "id":
				if !strings.Contains(value, "\x00") {
					id = value
				}
			case "retry":
				if value != "" && strings.Trim(value, "0123456789") == "" {
					if n, err := strconv.Atoi(value); err == nil {
						retry = n
					}
				}
			}
		}
	}
	if pend {
		return evs, io.ErrUnexpectedEOF
	}
	return evs, nil
}

func FuzzReader(f *testing.F) {
	seeds := []string{
		"event: a\ndata: one\n\ndata: two\n\n",
		"event: a\r\ndata: one\r\n\r\ndata: two\r\n\r\n",
		"data: a\rdata: b\r\r: ping\r",
		"\xEF\xBB\xBFid: 7\nretry: 10\ndata\ndata:x\n\n",
		"data: " + strings.Repeat("y", 300) + "\n\n",
		"data: a\r",
		"\xEF\xBB",
		": only a comment\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
		"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint64(i), uint8(0))
		f.Add([]byte(s), uint64(i+100), uint8(32))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, max uint8) {
		want, wantErr := refParse(data, int(max))
		whole, wholeErr := readAll(NewReader(bytes.NewReader(data), int(max)))
		if wholeErr != wantErr || !reflect.DeepEqual(whole, want) {
			t.Fatalf("whole read: %#v, %v\nreference:  %#v, %v", whole, wholeErr, want, wantErr)
		}
		chunked, chunkedErr := readAll(NewReader(ssetest.ChunkReader(data, seed), int(max)))
		if chunkedErr != wantErr || !reflect.DeepEqual(chunked, want) {
			t.Fatalf("chunked read: %#v, %v\nreference:    %#v, %v", chunked, chunkedErr, want, wantErr)
		}
	})
}

func BenchmarkReader(b *testing.B) {
	var buf bytes.Buffer
	for i := range 100_000 {
		buf.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"tok")
		buf.WriteString(strconv.Itoa(i))
		buf.WriteString("\"}}\n\n")
	}
	stream := buf.Bytes()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(stream), 0)
		n := 0
		for {
			if _, err := r.Next(); err != nil {
				break
			}
			n++
		}
		if n != 100_000 {
			b.Fatalf("events = %d", n)
		}
	}
}

// sizedReads records the size of each read asked of it.
type sizedReads struct {
	r     io.Reader
	sizes []int
}

func (s *sizedReads) Read(p []byte) (int, error) {
	s.sizes = append(s.sizes, len(p))
	return s.r.Read(p)
}

// TestReaderBufferGrows: a stream that trickles (each read a few events)
// is read with the small buffer; one whose reads fill it is read with ever
// larger ones, up to readBufMax; both yield every event.
func TestReaderBufferGrows(t *testing.T) {
	var stream strings.Builder
	const n = 20000
	for i := range n {
		stream.WriteString("data: {\"delta\":\"tok" + strconv.Itoa(i%10) + " \"}\n\n")
	}
	for _, tc := range []struct {
		name    string
		in      io.Reader
		wantMax int
	}{
		{"trickle", iotest.HalfReader(iotest.OneByteReader(strings.NewReader(stream.String()))), readBufMin},
		{"bulk", strings.NewReader(stream.String()), readBufMax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sr := &sizedReads{r: tc.in}
			evs, err := readAll(NewReader(sr, 0))
			if err != nil || len(evs) != n {
				t.Fatalf("got %d events, %v; want %d", len(evs), err, n)
			}
			if evs[n-1].Data != `{"delta":"tok9 "}` {
				t.Fatalf("last event %q", evs[n-1].Data)
			}
			if sr.sizes[0] != readBufMin {
				t.Errorf("first read asked %d bytes, want %d", sr.sizes[0], readBufMin)
			}
			if m := slices.Max(sr.sizes); m != tc.wantMax {
				t.Errorf("largest read asked %d bytes, want %d", m, tc.wantMax)
			}
		})
	}
	// A limit below the largest buffer bounds it.
	sr := &sizedReads{r: strings.NewReader(stream.String())}
	if _, err := readAll(NewReader(sr, 8<<10)); err != nil {
		t.Fatal(err)
	}
	if m := slices.Max(sr.sizes); m > 8<<10+2 {
		t.Errorf("with an 8 KiB limit a read asked %d bytes", m)
	}
}

// TestReaderRelease: a released Reader reads no more, and the events it
// returned keep their data while later Readers reuse its buffer.
func TestReaderRelease(t *testing.T) {
	r := NewReader(strings.NewReader("data: first\n\ndata: more\n\n"), 0)
	ev, err := r.Next()
	if err != nil || ev.Data != "first" {
		t.Fatalf("Next = %v, %v", ev, err)
	}
	r.Release()
	if _, err := r.Next(); err == nil {
		t.Error("a released Reader read on")
	}
	for range 4 {
		r2 := NewReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\n"), 0)
		if ev2, err := r2.Next(); err != nil || len(ev2.Data) != 100 {
			t.Fatalf("a later Reader: %d bytes, %v", len(ev2.Data), err)
		}
		r2.Release()
	}
	if ev.Data != "first" {
		t.Errorf("an event of the released Reader changed to %q", ev.Data)
	}
}
