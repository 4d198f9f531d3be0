package jsonscan

import (
	"encoding/json"
	"testing"
)

var seeds = []string{
	`"plain"`, `"é and 😀"`, `"a\nb\t\"q\"\\ \/ \b\f\r"`, `"\u00e9\u20ac\ud83d\ude00"`,
	`"\ud83d"`, `"\ude00x"`, `"\ud83d\u0041"`, "\"bad \xff\xc3 utf8\"", `"\u12"`, `"\x"`,
	"\"ctl \x01\"", `"unterminated`, `{"a":[1,-2.5e+3,true,false,null,{"b":"c"}],"d":{}}`,
	`[]`, `{}`, `[1,]`, `{"a":1,}`, `01`, `-`, `1.`, `1e`, `-0`, `0.5E-7`, `nul`, `truex`,
	`{"a" 1}`, `{"a":1 "b":2}`, `  {"k" : [ 1 , 2 ] }  `,
}

// FuzzString: a string the Scanner reads is the string encoding/json
// decodes from the same text.
func FuzzString(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		sc := New(text)
		got, ok := sc.String()
		if !ok || !sc.End() {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatalf("String read %q from %q, which encoding/json refuses: %v", got, text, err)
		}
		if got != want {
			t.Fatalf("String(%q) = %q, encoding/json %q", text, got, want)
		}
	})
}

// FuzzSkip: text the Scanner skips whole is JSON.
func FuzzSkip(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		sc := New(text)
		if sc.Skip() && sc.End() && !json.Valid([]byte(text)) {
			t.Fatalf("Skip accepted %q, which is not JSON", text)
		}
	})
}

// TestScanner pins what the fuzz targets cannot: that valid text is
// read, not given up on.
func TestScanner(t *testing.T) {
	for _, text := range []string{`{"a":[1,-2.5e+3,true,false,null,{"b":"c"}],"d":{}}`, `[]`, `-0`, `0.5E-7`, `  {"k" : [ 1 , 2 ] }  `, `"x"`} {
		if sc := New(text); !sc.Skip() || !sc.End() {
			t.Errorf("Skip gave up on %q", text)
		}
	}
	for _, text := range []string{`[1,]`, `{"a":1,}`, `01`, `-`, `1.`, `1e`, `nul`, `truex`, `{"a" 1}`, `{"a":1 "b":2}`} {
		if sc := New(text); sc.Skip() && sc.End() {
			t.Errorf("Skip accepted %q", text)
		}
	}
	for text, want := range map[string]string{
		`"a\nb\t\"q\"\\ \/ \b\f\r"`: "a\nb\t\"q\"\\ / \b\f\r", `"\u00e9\u20ac\ud83d\ude00"`: "é€😀",
		`"\ud83d"`: "\ufffd", `"\ud83d\u0041"`: "\ufffdA", "\"\xff\"": "\ufffd", `"é"`: "é",
	} {
		if got, ok := New(text).String(); !ok || got != want {
			t.Errorf("String(%q) = %q, %v; want %q", text, got, ok, want)
		}
	}
	for _, text := range []string{`"\u12"`, `"\x"`, "\"\x01\"", `"open`} {
		if _, ok := New(text).String(); ok {
			t.Errorf("String accepted %q", text)
		}
	}
	sc := New(`[0, -7, 123456789012345678, 1234567890123456789, 1.5, 01]`)
	var ints []int
	sc.Array(func() bool {
		n, ok := sc.Int()
		if ok {
			ints = append(ints, n)
			return true
		}
		return sc.Skip()
	})
	if len(ints) != 3 || ints[1] != -7 || ints[2] != 123456789012345678 {
		t.Errorf("Int read %v", ints)
	}
}

// Span reads a value as Skip does and says where its text is.
func TestSpan(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{`  {"a":[1,2,{"b":"c\"d"}]} ,`, `{"a":[1,2,{"b":"c\"d"}]}`, true},
		{`"text" `, `"text"`, true},
		{`-12.5e3]`, `-12.5e3`, true},
		{`null`, `null`, true},
		{`{"a":}`, ``, false},
		{``, ``, false},
	} {
		sc := New(tc.in)
		start, end, ok := sc.Span()
		if ok != tc.ok || (ok && tc.in[start:end] != tc.want) {
			t.Errorf("Span(%q) = %d, %d, %v; want %q, %v", tc.in, start, end, ok, tc.want, tc.ok)
		}
	}
}
