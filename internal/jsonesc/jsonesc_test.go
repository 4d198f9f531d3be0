package jsonesc

import (
	"encoding/json"
	"strings"
	"testing"
)

// AppendString and Len agree with json.Marshal on every kind of byte: ASCII
// controls, HTML characters, quotes, multi-byte runes, U+2028 and U+2029,
// and invalid UTF-8 (each bad byte becomes U+FFFD).
func TestAppendStringIsMarshal(t *testing.T) {
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
	}
	for _, s := range []string{"", "plain", all.String(), "é€😀\u2028\u2029", "\xe2\x82", "a\xffb\xc0\xafc", strings.Repeat("<\"\\\n", 1000)} {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
		if n := Len(s); n != len(want)-2 {
			t.Errorf("%q: Len %d, want %d", s, n, len(want)-2)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("a<\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	})
}
