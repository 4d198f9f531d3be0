package files

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestScanLinesEdgeCases(t *testing.T) {
	exact := strings.Repeat("x", MaxLineLength)
	for _, tc := range []struct {
		name          string
		in            string
		offset, limit int
		want          Lines
	}{
		{"empty", "", 1, 10, Lines{FirstLine: 1, TotalLines: 0}},
		{"one newline", "\n", 1, 10, Lines{Lines: []string{""}, FirstLine: 1, TotalLines: 1}},
		{"no final newline", "a\nb", 1, 10, Lines{Lines: []string{"a", "b"}, FirstLine: 1, TotalLines: 2}},
		{"final newline", "a\nb\n", 1, 10, Lines{Lines: []string{"a", "b"}, FirstLine: 1, TotalLines: 2}},
		{"crlf", "a\r\nb\r\n", 1, 10, Lines{Lines: []string{"a", "b"}, FirstLine: 1, TotalLines: 2}},
		{"window", "1\n2\n3\n4\n", 2, 2, Lines{Lines: []string{"2", "3"}, FirstLine: 2, TotalLines: 4, More: true}},
		{"window at end", "1\n2\n3\n4\n", 3, 2, Lines{Lines: []string{"3", "4"}, FirstLine: 3, TotalLines: 4}},
		{"beyond end", "1\n2\n", 5, 2, Lines{FirstLine: 5, TotalLines: 2}},
		{"exact max", exact + "\n", 1, 1, Lines{Lines: []string{exact}, FirstLine: 1, TotalLines: 1}},
		{"exact max crlf", exact + "\r\n", 1, 1, Lines{Lines: []string{exact}, FirstLine: 1, TotalLines: 1}},
		{"exact max at eof", exact, 1, 1, Lines{Lines: []string{exact}, FirstLine: 1, TotalLines: 1}},
		{"one over max", exact + "y\n", 1, 1, Lines{Lines: []string{exact + fmt.Sprintf("… [line truncated: %d bytes]", MaxLineLength+1)}, FirstLine: 1, TotalLines: 1}},
		{"huge limit", "a\n", 1, int(^uint(0) >> 1), Lines{Lines: []string{"a"}, FirstLine: 1, TotalLines: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := scanLines(strings.NewReader(tc.in), tc.offset, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestReadLinesBigFile(t *testing.T) {
	f, b := newBrokerFixture(t)
	ctx := context.Background()
	const n = 50000
	longLine := 1234                           // 1-based number of the over-long line
	long := strings.Repeat("é", MaxLineLength) // 2 bytes per rune: cut lands mid-rune otherwise
	long += strings.Repeat("z", 3*scanBufSize) // longer than the bufio buffer
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		if i == longLine {
			sb.WriteString(long + "\n")
			continue
		}
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	p := filepath.Join(f.root, "big.log")
	mustWrite(t, p, sb.String())

	check := func(offset, limit, wantFirst, wantCount int, wantMore bool) Lines {
		t.Helper()
		got, err := b.ReadLines(ctx, "big.log", offset, limit)
		if err != nil {
			t.Fatal(err)
		}
		if got.FirstLine != wantFirst || len(got.Lines) != wantCount || got.More != wantMore || got.TotalLines != n {
			t.Fatalf("ReadLines(%d, %d): first %d, %d lines, more %v, total %d; want %d, %d, %v, %d",
				offset, limit, got.FirstLine, len(got.Lines), got.More, got.TotalLines, wantFirst, wantCount, wantMore, n)
		}
		for i, l := range got.Lines {
			if no := got.FirstLine + i; no != longLine && l != fmt.Sprintf("line %d", no) {
				t.Fatalf("line %d = %q", no, l)
			}
		}
		return got
	}
	check(1, 10, 1, 10, true)
	check(25000, 100, 25000, 100, true)
	check(n-5, 100, n-5, 6, false)
	check(n, 1, n, 1, false)
	check(n+1, 10, n+1, 0, false)
	check(n+1000, 10, n+1000, 0, false)
	check(0, 5, 1, 5, true)                // offset < 1 means 1
	check(1, 0, 1, DefaultLineLimit, true) // limit 0 means the default
	check(n-100, -1, n-100, 101, false)    // negative limit too
	got := check(longLine, 1, longLine, 1, true)

	cut := got.Lines[0]
	if !utf8.ValidString(cut) {
		t.Error("cut line is not valid UTF-8")
	}
	prefix, marker, ok := strings.Cut(cut, "… [line truncated: ")
	if !ok || len(prefix) > MaxLineLength || !strings.HasPrefix(long, prefix) || len(prefix) < MaxLineLength-utf8.UTFMax {
		t.Errorf("cut line prefix %d bytes, marker %q", len(prefix), marker)
	}
	if want := fmt.Sprintf("%d bytes]", len(long)); marker != want {
		t.Errorf("marker = %q, want %q", marker, want)
	}
}

func TestReadLinesErrors(t *testing.T) {
	f, b := newBrokerFixture(t)
	mustMkdir(t, filepath.Join(f.root, "dir"))
	mustWrite(t, filepath.Join(f.root, "f"), strings.Repeat("x\n", 1000))
	ctx := context.Background()
	if _, err := b.ReadLines(ctx, "missing", 1, 1); !os.IsNotExist(err) {
		t.Errorf("missing: %v", err)
	}
	if _, err := b.ReadLines(ctx, "dir", 1, 1); err == nil {
		t.Error("dir: no error")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.ReadLines(cancelled, "f", 1, 1); err == nil {
		t.Error("cancelled: no error")
	}
}

// FuzzScanLines checks the line scanner against a simple reference on
// arbitrary (untrusted) file contents.
func FuzzScanLines(f *testing.F) {
	f.Add("a\nb\r\nc", 1, 2)
	f.Add("", 1, 1)
	f.Add("\n\n\n", 2, 5)
	f.Add(strings.Repeat("é", MaxLineLength)+"\n", 1, 1)
	f.Add("x\r", 1, 1)
	f.Fuzz(func(t *testing.T, in string, offset, limit int) {
		offset = max(offset, 1)
		if limit <= 0 {
			limit = 1
		}
		got, err := scanLines(strings.NewReader(in), offset, limit)
		if err != nil {
			t.Fatal(err)
		}
		ref := strings.Split(in, "\n")
		if ref[len(ref)-1] == "" {
			ref = ref[:len(ref)-1]
		}
		if got.TotalLines != len(ref) || got.FirstLine != offset {
			t.Fatalf("total %d first %d; want %d %d", got.TotalLines, got.FirstLine, len(ref), offset)
		}
		start := min(offset-1, len(ref))
		end := len(ref)
		if limit < end-start {
			end = start + limit
		}
		if len(got.Lines) != end-start || got.More != (end < len(ref)) {
			t.Fatalf("%d lines more=%v; want %d more=%v", len(got.Lines), got.More, end-start, end < len(ref))
		}
		for i, l := range got.Lines {
			want := strings.TrimSuffix(ref[start+i], "\r")
			if len(want) <= MaxLineLength {
				if l != want {
					t.Fatalf("line %d = %q, want %q", start+i+1, l, want)
				}
				continue
			}
			prefix, _, ok := strings.Cut(l, "… [line truncated: ")
			if !ok || len(prefix) > MaxLineLength || !strings.HasPrefix(want, prefix) {
				t.Fatalf("line %d badly cut: %q", start+i+1, l)
			}
		}
	})
}
