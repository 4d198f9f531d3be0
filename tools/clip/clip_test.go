package clip

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWindowStopsAtLineBoundary(t *testing.T) {
	lines := make([]string, 2000)
	for i := range lines {
		lines[i] = strings.Repeat("x", 60) // 67 bytes a row with the number
	}
	out := Window(lines, 1, 2500, true, WindowBytes)
	if len(out) > WindowBytes+200 {
		t.Fatalf("window is %d bytes", len(out))
	}
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	footer := rows[len(rows)-1]
	rows = rows[:len(rows)-1]
	last := len(rows)
	want := fmt.Sprintf("(showing lines 1-%d of 2500: the window stops at about 50 KB; read on with offset %d)", last, last+1)
	if footer != want {
		t.Errorf("footer %q, want %q", footer, want)
	}
	for i, r := range rows {
		if !strings.HasPrefix(r, fmt.Sprintf("%6d\t", i+1)) || !strings.HasSuffix(r, "x") {
			t.Fatalf("row %d is %q: lines must be whole and consecutive", i+1, r)
		}
	}
}

func TestWindowFooters(t *testing.T) {
	for _, tc := range []struct {
		lines      []string
		first, tot int
		more       bool
		want       string
	}{
		{[]string{"a", "b"}, 1, 2, false, "     1\ta\n     2\tb\n"},
		{[]string{"a", "b"}, 10, 30, true, "    10\ta\n    11\tb\n(showing lines 10-11 of 30; read on with offset 12)\n"},
		{nil, 1, 0, false, "(the file is empty)\n"},
		{nil, 50, 3, false, "(no lines at offset 50; the file has 3 lines)\n"},
		{[]string{strings.Repeat("y", 100), "z"}, 1, -1, true, "     1\t" + strings.Repeat("y", 100) + "\n(showing lines 1-1: the window stops at about 0 KB; read on with offset 2)\n"},
	} {
		if got := Window(tc.lines, tc.first, tc.tot, tc.more, 50); got != tc.want {
			t.Errorf("Window(%q, %d, %d) =\n%q\nwant\n%q", tc.lines, tc.first, tc.tot, got, tc.want)
		}
	}
}

func TestBinary(t *testing.T) {
	for _, tc := range []struct {
		data string
		want bool
	}{
		{"package main\n\nfunc main() {}\n", false},
		{"héllo wörld — ünïcode\n", false},
		{"\x1b[31mred\x1b[0m\n", false},
		{"PNG\x00\x01\x02", true},
		{string([]byte{0xff, 0xfe, 0xfd, 0x80, 0x81, 'a', 'b'}), true},
		{"text ending in a cut rune \xe2\x80", false},
		{"", false},
	} {
		if got := Binary([]byte(tc.data)); got != tc.want {
			t.Errorf("Binary(%q) = %v, want %v", tc.data, got, tc.want)
		}
	}
}

func TestHeadTail(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	s := b.String()
	out, cut := HeadTail(s, OutputBytes, "/tmp/acpd-output-1.txt")
	if !cut || len(out) > OutputBytes+300 {
		t.Fatalf("cut=%v len=%d", cut, len(out))
	}
	if !strings.HasPrefix(out, "line 1\nline 2\n") || !strings.HasSuffix(out, "line 4999\nline 5000\n") {
		t.Errorf("head or tail lost")
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "line ") && !strings.HasPrefix(l, "[… ") {
			t.Fatalf("a line was cut: %q", l)
		}
	}
	i := strings.Index(out, "[… ")
	note := out[i : i+strings.Index(out[i:], "\n")]
	// The lines named as cut are exactly those missing.
	var from, to, n, bytes int
	if _, err := fmt.Sscanf(note, "[… %d lines (%d bytes) cut from the middle of the output, lines %d-%d", &n, &bytes, &from, &to); err != nil {
		t.Fatalf("note %q: %v", note, err)
	}
	if !strings.Contains(out, fmt.Sprintf("line %d\n[…", from-1)) || !strings.Contains(out, fmt.Sprintf("]\nline %d\n", to+1)) || to-from+1 != n {
		t.Errorf("note %q does not match the cut", note)
	}
	if !strings.Contains(note, "saved in /tmp/acpd-output-1.txt: read it with read_file (offset "+fmt.Sprint(from)+")") {
		t.Errorf("note %q does not name the saved file", note)
	}
	if got, cut := HeadTail("short\n", OutputBytes, ""); cut || got != "short\n" {
		t.Errorf("short output changed: %q", got)
	}
	// One huge line: cut at character boundaries.
	long := strings.Repeat("é", 40000)
	out, _ = HeadTail(long, OutputBytes, "")
	if !utf8.ValidString(out) {
		t.Error("invalid UTF-8 after cutting one long line")
	}
}

func FuzzHeadTail(f *testing.F) {
	f.Add("a\nb\nc\n", 3)
	f.Add(strings.Repeat("é\n", 100), 17)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		out, cut := HeadTail(s, n, "")
		if !cut && out != s {
			t.Fatal("uncut output changed")
		}
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("valid input became invalid: %q", out)
		}
	})
}
