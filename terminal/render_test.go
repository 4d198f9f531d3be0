package terminal

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRenderText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello\nworld\n", "hello\nworld\n"},
		{"no trailing newline", "a\nb", "a\nb"},
		{"progress CR", "10%\r50%\r100%\n", "100%\n"},
		{"CRLF", "a\r\nb\r\n", "a\nb\n"},
		{"CR overwrite keeps tail", "abcdef\rXY\n", "XYcdef\n"},
		{"backspace", "abc\bd", "abd"},
		{"backspace at start", "\b\bx", "x"},
		{"colours", "\x1b[1;31mred\x1b[0m and \x1b[38;5;82mgreen\x1b[m\n", "red and green\n"},
		{"erase whole line", "progress 42%\x1b[2K\rdone\n", "done\n"},
		{"erase to end", "abcdef\r\x1b[Kxy\n", "xy\n"},
		{"erase to end mid-line", "abcdef\x1b[3D\x1b[0K!\n", "abc!\n"},
		{"erase to start", "abcdef\x1b[3D\x1b[1K\n", "    ef\n"},
		{"erase then write pads", "abc\x1b[2Kdef", "   def"},
		{"OSC title BEL", "\x1b]0;my title\x07text\n", "text\n"},
		{"OSC title ST", "\x1b]2;title\x1b\\text\n", "text\n"},
		{"OSC hyperlink", "\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\\n", "link\n"},
		{"cursor horizontal absolute", "xxxxx\x1b[1Gab\n", "abxxx\n"},
		{"cursor forward pads", "a\x1b[3Cb\n", "a   b\n"},
		{"cursor forward clamped", "\x1b[99999999Cb", strings.Repeat(" ", renderCols-1) + "b"},
		{"long line kept whole", strings.Repeat("x", 3*renderCols+7) + "\n", strings.Repeat("x", 3*renderCols+7) + "\n"},
		{"CR acts on the last row", strings.Repeat("a", renderCols+10) + "\rbb\n", strings.Repeat("a", renderCols) + "bb" + strings.Repeat("a", 8) + "\n"},
		{"row exactly full then CR", strings.Repeat("a", renderCols) + "\rb\n", "b" + strings.Repeat("a", renderCols-1) + "\n"},
		{"erase on a wrapped line", strings.Repeat("a", renderCols+5) + "\x1b[2K\rok\n", strings.Repeat("a", renderCols) + "ok\n"},
		{"vertical movement ignored", "a\x1b[2Ab\x1b[5;5Hc\n", "abc\n"},
		{"private mode ignored", "\x1b[?25lhidden cursor\x1b[?25h\n", "hidden cursor\n"},
		{"clear screen ignored", "before\n\x1b[2J\x1b[Hafter\n", "before\nafter\n"},
		{"charset and keypad", "\x1b(B\x1b=a\x1b>b\x1b7c\x1b8\n", "abc\n"},
		{"DCS string", "\x1bPq#0;2;0;0;0\x1b\\x\n", "x\n"},
		{"unterminated CSI", "abc\x1b[1;3", "abc"},
		{"unterminated OSC", "abc\x1b]0;title", "abc"},
		{"lone ESC", "abc\x1b", "abc"},
		{"ESC interrupts CSI", "\x1b[1\x1b[31mx", "x"},
		{"invalid UTF-8", "a\xffb\xe2\x82\n", "a\ufffdb\ufffd\ufffd\n"},
		{"multibyte kept", "héllo €😀\n", "héllo €😀\n"},
		{"tabs kept", "a\tb\n", "a\tb\n"},
		{"controls dropped", "a\x00\x07b\x7fc\u0085d\n", "abcd\n"},
		{"vertical tab and form feed", "a\vb\fc", "a\nb\nc"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RenderText([]byte(tt.in)); got != tt.want {
				t.Errorf("RenderText(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func FuzzRenderText(f *testing.F) {
	for _, s := range []string{
		"10%\r50%\r100%\n", "abc\bd", "\x1b[2K", "\x1b]0;t\x07x", "\x1b[31mred\x1b[0m",
		"\x1b[999C\x1b[2Kx", "a\x1b[1K\x1b[5Gb", "\xff\xfe\xe2", "\x1bP\x1b\\", "\t\r\n\b",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out := RenderText(raw)
		if !utf8.ValidString(out) {
			t.Fatalf("RenderText(%q) = %q: invalid UTF-8", raw, out)
		}
		// Padding before a character is at most a row, so every input
		// byte yields at most renderCols+3 output bytes.
		if bound := (renderCols + 3) * len(raw); len(out) > bound {
			t.Fatalf("RenderText(%q): %d bytes, more than %d", raw, len(out), bound)
		}
		if strings.ContainsAny(out, "\x1b\r\b\x00") {
			t.Fatalf("RenderText(%q) = %q: control characters left", raw, out)
		}
		// The same bytes through a Renderer, in two chunks.
		var b strings.Builder
		r := NewRenderer(&b)
		r.Write(raw[:len(raw)/2])
		r.Write(raw[len(raw)/2:])
		r.Close()
		if b.String() != out {
			t.Fatalf("Renderer(%q) = %q, RenderText %q", raw, b.String(), out)
		}
	})
}

// BenchmarkRenderText runs RenderText on ordinary output and on inputs
// crafted to make a naive screen model quadratic.
func BenchmarkRenderText(b *testing.B) {
	long := strings.Repeat("x", 1<<16)
	inputs := map[string]string{
		"plain":        strings.Repeat("some ordinary output line\n", 1<<15),
		"progress":     strings.Repeat("downloading 42% [=====>    ]\r", 1<<15),
		"colours":      strings.Repeat("\x1b[1;32mok\x1b[0m test\n", 1<<15),
		"erase-long":   long + strings.Repeat("\x1b[2Kx", 1<<16),
		"erase1-long":  long + strings.Repeat("\x1b[1K", 1<<16),
		"forward-long": long + strings.Repeat("\x1b[9999Cx", 1<<16),
	}
	for name, in := range inputs {
		raw := []byte(in)
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				RenderText(raw)
			}
		})
	}
}

// A Renderer fed in chunks, split anywhere (inside escape sequences,
// control strings and UTF-8 characters), writes what RenderText returns
// for the whole input.
func TestRendererSplitAnywhere(t *testing.T) {
	inputs := []string{
		"hello\nworld\n", "10%\r50%\r100%\n", "a\r\nb\r\n",
		"\x1b[1;31mred\x1b[0m and \x1b[38;5;82mgreen\x1b[m\n",
		"\x1b]0;my title\x07text\n", "\x1b]2;title\x1b\\text\n", "\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x1b\\\n",
		"\x1bPq#0;2\x1b\\x\n", "\x1b]0;t\x1b[31mx\n", "abc\x1b[1;3", "abc\x1b]0;title", "abc\x1b", "\x1b[1\x1b[31mx",
		"a\xffb\xe2\x82\n", "héllo €😀\n", "\x1b(B\x1b=a\x1b>b\x1b7c\x1b8\n", "a\vb\fc",
		strings.Repeat("a", renderCols+10) + "\rbb\n", strings.Repeat("x", 3*renderCols+7) + "\n",
	}
	for _, in := range inputs {
		want := RenderText([]byte(in))
		for cut := 0; cut <= len(in); cut++ {
			for cut2 := cut; cut2 <= len(in); cut2++ {
				var b strings.Builder
				r := NewRenderer(&b)
				for _, part := range []string{in[:cut], in[cut:cut2], in[cut2:]} {
					if n, err := r.Write([]byte(part)); n != len(part) || err != nil {
						t.Fatalf("Write: %d, %v", n, err)
					}
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
				if b.String() != want {
					t.Fatalf("%q split at %d and %d: %q, want %q", in, cut, cut2, b.String(), want)
				}
			}
		}
	}
}

// Finished lines are written as they are complete, the open row only once
// it ends; an escape sequence that never ends is held back no more than
// maxPending bytes.
func TestRendererStreams(t *testing.T) {
	var b strings.Builder
	r := NewRenderer(&b)
	r.Write([]byte("one\ntw"))
	if b.String() != "one\n" {
		t.Fatalf("after the first chunk %q", b.String())
	}
	r.Write([]byte("o\rTWO\n\x1b["))
	if b.String() != "one\nTWO\n" {
		t.Fatalf("after the second chunk %q", b.String())
	}
	r.Write([]byte(strings.Repeat("1", 2*maxPending)))
	if len(r.pend) > maxPending {
		t.Fatalf("%d bytes held back", len(r.pend))
	}
	r.Write([]byte("m" + "after\n"))
	r.Close()
	if got := b.String(); !strings.HasPrefix(got, "one\nTWO\n") || !strings.HasSuffix(got, "after\n") {
		t.Fatalf("rendered %q", got)
	}
}
