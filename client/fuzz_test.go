package client

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// FuzzReadWindow checks readWindow against a reference built on
// strings.SplitAfter: the window is the lines [line, line+limit) with their
// terminators, exactly as in the file.
func FuzzReadWindow(f *testing.F) {
	f.Add([]byte("one\ntwo\r\nthree"), uint32(2), uint32(1), true, true)
	f.Add([]byte(""), uint32(0), uint32(0), false, false)
	f.Add([]byte("\n\n\n"), uint32(3), uint32(5), true, false)
	f.Add(bytes.Repeat([]byte("x"), 70000), uint32(1), uint32(1), true, true)
	f.Fuzz(func(t *testing.T, data []byte, line, limit uint32, hasLine, hasLimit bool) {
		var lp, mp *uint32
		if hasLine {
			lp = &line
		}
		if hasLimit {
			mp = &limit
		}
		got, err := readWindow(context.Background(), bytes.NewReader(data), lp, mp)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		first := 0
		if hasLine && line > 1 {
			first = int(min(line-1, uint32(len(lines))))
		}
		end := len(lines)
		if hasLimit && uint64(first)+uint64(limit) < uint64(end) {
			end = first + int(limit)
		}
		if want := strings.Join(lines[first:end], ""); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}
