package tailbuf

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// refTail is the obvious (unbounded) implementation Buffer must match.
func refTail(all []byte, limit int, complete bool) (string, bool) {
	s, dropped := all, false
	if len(s) > limit {
		s, dropped = s[len(s)-limit:], true
	}
	if dropped {
		s = trimLeadingPartial(s)
	}
	if !complete {
		s = trimTrailingPartial(s)
	}
	return string(s), dropped
}

func TestBuffer(t *testing.T) {
	tests := []struct {
		name    string
		limit   int
		writes  []string
		want    string
		trunc   bool
		partial bool // snapshot while the writer may continue
	}{
		{"empty", 10, nil, "", false, false},
		{"under limit", 10, []string{"abc", "def"}, "abcdef", false, false},
		{"exactly limit", 6, []string{"abc", "def"}, "abcdef", false, false},
		{"one write over", 4, []string{"abcdef"}, "cdef", true, false},
		{"ring wrap", 4, []string{"ab", "cd", "ef", "g"}, "defg", true, false},
		{"fill then big", 4, []string{"ab", "cdefghij"}, "ghij", true, false},
		{"exact limit after data", 3, []string{"a", "xyz"}, "xyz", true, false},
		// "é" is 2 bytes, "€" 3: the cut must not split them.
		{"cut at rune boundary", 5, []string{"aé€é"}, "€é", true, false},
		{"cut skips continuation", 4, []string{"€€"}, "€", true, false},
		{"partial trailing rune held back", 10, []string{"ab\xe2\x82"}, "ab", false, true},
		{"partial trailing rune kept when complete", 10, []string{"ab\xe2\x82"}, "ab\xe2\x82", false, false},
		{"full trailing rune shown", 10, []string{"ab€"}, "ab€", false, true},
		{"invalid trailing byte shown", 10, []string{"ab\xff"}, "ab\xff", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(tt.limit)
			for _, w := range tt.writes {
				b.Write([]byte(w))
			}
			got, trunc := b.Snapshot(!tt.partial)
			if got != tt.want || trunc != tt.trunc {
				t.Errorf("Snapshot = %q, %v; want %q, %v", got, trunc, tt.want, tt.trunc)
			}
			if cap(b.data) > tt.limit {
				t.Errorf("capacity %d exceeds limit %d", cap(b.data), tt.limit)
			}
		})
	}
}

func TestBufferBoundedCapacity(t *testing.T) {
	const limit = 10000
	b := New(limit)
	chunk := bytes.Repeat([]byte("yé\n"), 777)
	for range 1000 {
		b.Write(chunk)
		if cap(b.data) > limit {
			t.Fatalf("capacity %d exceeds limit %d", cap(b.data), limit)
		}
	}
	got, trunc := b.Snapshot(true)
	if !trunc || len(got) > limit || len(got) < limit-utf8.UTFMax+1 || !utf8.ValidString(got) {
		t.Fatalf("Snapshot: %d bytes, truncated=%v, valid=%v", len(got), trunc, utf8.ValidString(got))
	}
	if !strings.HasSuffix(string(chunk), got[len(got)-len(chunk)+1:]) {
		t.Fatal("snapshot is not the tail of the written data")
	}
}

func FuzzBuffer(f *testing.F) {
	f.Add(uint16(5), []byte("aé€é"), uint8(2), true)
	f.Add(uint16(1), []byte("\xe2\x82\xac"), uint8(1), false)
	f.Add(uint16(7), []byte("0123456789abcdefghijklmnop"), uint8(3), true)
	f.Fuzz(func(t *testing.T, limit uint16, data []byte, chunk uint8, complete bool) {
		l := int(limit%4096) + 1
		c := int(chunk) + 1
		b := New(l)
		var all []byte
		for p := data; len(p) > 0; {
			n := min(c, len(p))
			b.Write(p[:n])
			all = append(all, p[:n]...)
			p = p[n:]
			got, trunc := b.Snapshot(complete)
			want, wantTrunc := refTail(all, l, complete)
			if got != want || trunc != wantTrunc {
				t.Fatalf("limit %d after %q: got %q,%v want %q,%v", l, all, got, trunc, want, wantTrunc)
			}
			if len(got) > l || cap(b.data) > l {
				t.Fatalf("limit %d exceeded: len %d cap %d", l, len(got), cap(b.data))
			}
		}
	})
}

// TestString is the stderr-tail use (formerly mcpclient's own tailBuffer).
func TestString(t *testing.T) {
	b := New(8)
	for _, s := range []string{"abc", "defgh", "ij", "0123456789xyz"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := b.String(); got != "56789xyz" {
		t.Errorf("tail = %q", got)
	}
	b = New(8)
	_, _ = b.Write([]byte("abcdef"))
	_, _ = b.Write([]byte("ghij"))
	if got := b.String(); got != "cdefghij" {
		t.Errorf("tail = %q", got)
	}
	b = New(16)
	_, _ = b.Write([]byte("  oops\xff\n"))
	if got := b.String(); got != "oops\uFFFD" {
		t.Errorf("tail = %q", got)
	}
}

func TestConcurrentUse(t *testing.T) {
	b := New(64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 1000 {
			_, _ = b.Write([]byte("line of output\n"))
		}
	}()
	for range 100 {
		_ = b.String()
	}
	<-done
	if got, trunc := b.Snapshot(true); !trunc || len(got) != 64 {
		t.Errorf("Snapshot = %d bytes, truncated %v", len(got), trunc)
	}
}
