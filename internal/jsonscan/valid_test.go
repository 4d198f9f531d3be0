package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

var checkSeeds = []string{
	`{"a":[1,-0.5e+3,true,false,null,"x\u00e9\n\"\\"],"b":{}}`, `[]`, `{}`, ` { "a" : 1 } `, `[1,]`, `{"a":1,}`,
	`01`, `-`, `1.`, `1e`, `.5`, `"\x01"`, `"\q"`, `"\u12"`, `"\uZZZZ"`, `tru`, `nul`, `[1 2]`, `{"a" 1}`, `{1:2}`,
	"\"\xff\"", `"` + "\t" + `"`, `[[[]]]`, `[[[]]`, `]`, ``, ` `, `{"a":{"b":[{"c":"}"}]}}`, "[1,\n2]", `1 2`, `"a"x`,
	"\"abcdefghijklmnop\x01qrst\"", `"abcdefghij\"klmnopqrstuvwx"`, "\"abcdefgh\xffijklmnop\\\\\"", `"abcdefghijklmnopqrstuvwxyz`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

// FuzzCheck: Check is json.Valid, and compact means json.Compact keeps b.
func FuzzCheck(f *testing.F) {
	for _, s := range checkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		valid, compact := Check(b)
		if want := json.Valid(b); valid != want {
			t.Fatalf("Check(%q) valid = %v, json.Valid says %v", b, valid, want)
		}
		if !valid {
			return
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			t.Fatal(err)
		}
		if want := bytes.Equal(buf.Bytes(), b); compact != want {
			t.Fatalf("Check(%q) compact = %v, want %v", b, compact, want)
		}
	})
}

func BenchmarkCheck(b *testing.B) {
	rec := []byte(`{"sessionUpdate":"tool_call_update","toolCallId":"call_00000009","status":"completed","content":[{"type":"content","content":{"type":"text","text":"func (p *Parser) next() Token {\n\tif p.pos >= len(p.toks) {\n\t\treturn Token{Kind: EOF}\n\t}\n\tp.pos++\n\treturn p.toks[p.pos-1]\n}\n"}}],"rawOutput":{"lines":7}}`)
	b.Run("Check", func(b *testing.B) {
		b.SetBytes(int64(len(rec)))
		for b.Loop() {
			Check(rec)
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(rec)))
		for b.Loop() {
			json.Valid(rec)
		}
	})
}

// FuzzStringEnd: StringEnd finds the end of a valid string and says
// whether it has escapes or non-ASCII bytes.
func FuzzStringEnd(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"x`, `"é"`, `"\\"`, `"abcdefghijkl\u00e9"`, `"` + strings.Repeat("x", 20) + "\xff" + `"`} {
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, s, rest string) {
		b := []byte(s)
		if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' || !json.Valid(b) {
			return
		}
		end, complex := StringEnd(append(b, rest...), 0)
		if end != len(b) {
			t.Fatalf("StringEnd(%q+%q) = %d, want %d", s, rest, end, len(b))
		}
		want := strings.ContainsAny(s, `\`) || strings.ContainsFunc(s, func(r rune) bool { return r >= 0x80 })
		if complex != want {
			t.Fatalf("StringEnd(%q) complex = %v, want %v", s, complex, want)
		}
	})
}
