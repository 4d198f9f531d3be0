package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// stdJSON is what WriteJSON must reproduce.
func stdJSON(t testing.TB, m Message) ([]byte, error) {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func writeJSON(m Message) ([]byte, error) {
	var b bytes.Buffer
	err := m.WriteJSON(&b)
	return b.Bytes(), err
}

// fillAll sets every field of the struct v points to (recursively for
// []Part) to a non-empty value, so a field added to Part or Message that
// WriteJSON does not know fails the comparison.
func fillAll(t *testing.T, v reflect.Value, depth int) {
	t.Helper()
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case !v.Type().Field(i).IsExported():
			// Not part of the JSON form (a Message's memo).
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.SetBytes([]byte(`{ "k" : [1, "<&>\u2028"] }`))
		case f.Kind() == reflect.String:
			f.SetString(v.Type().Field(i).Name + " \"<&>\"\n\t\u2028é\xff")
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case f.Type() == reflect.TypeFor[[]Part]():
			if depth < 2 {
				ps := make([]Part, 2)
				for j := range ps {
					fillAll(t, reflect.ValueOf(&ps[j]).Elem(), depth+1)
				}
				f.Set(reflect.ValueOf(ps))
			}
		default:
			t.Fatalf("%s.%s: kind %s unknown to this test and maybe to WriteJSON", v.Type(), v.Type().Field(i).Name, f.Kind())
		}
	}
}

func TestWriteJSONMatchesEncodingJSON(t *testing.T) {
	var full Message
	fillAll(t, reflect.ValueOf(&full).Elem(), 0)
	long := strings.Repeat("0123456789abcdef\"\\\x01é\u2029", 10_000) // crosses many buffer flushes
	for name, m := range map[string]Message{
		"zero":     {},
		"empty":    {Role: RoleUser, Parts: []Part{}},
		"full":     full,
		"long":     {Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: long}, {Type: PartReasoning, Text: long[1:]}}},
		"controls": {Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: "\x00\x1f\x7f\b\f\r"}}},
	} {
		want, err := stdJSON(t, m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := writeJSON(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: WriteJSON differs from encoding/json\n got %.300s\nwant %.300s", name, got, want)
		}
	}
}

func TestWriteJSONInvalidRaw(t *testing.T) {
	m := Message{Role: RoleAssistant, Parts: []Part{{Type: PartToolUse, Input: json.RawMessage(`{"a":`)}}}
	if _, err := stdJSON(t, m); err == nil {
		t.Fatal("encoding/json accepted invalid input")
	}
	if _, err := writeJSON(m); err == nil {
		t.Fatal("WriteJSON accepted invalid input")
	}
}

func TestWriteJSONWriteError(t *testing.T) {
	m := Message{Role: RoleAssistant, Parts: []Part{{Type: PartText, Text: strings.Repeat("x", 100_000)}}}
	n := 0
	fail := writerFunc(func(b []byte) (int, error) {
		n++
		return 0, errDisk
	})
	if err := m.WriteJSON(fail); err != errDisk {
		t.Fatalf("got %v, want the writer's error", err)
	}
	if n != 1 {
		t.Fatalf("%d writes after the first failed, want none", n-1)
	}
}

var errDisk = errors.New("disk full")

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func FuzzWriteJSON(f *testing.F) {
	f.Add("hello", "sig", []byte(`{"a":1}`), true)
	f.Add("\xff\xfe\u2028<script>", "", []byte(` [ 1 , 2 ] `), false)
	f.Fuzz(func(t *testing.T, text, sig string, raw []byte, flag bool) {
		m := Message{Role: Role(sig), Interrupted: flag, Parts: []Part{
			{Type: PartText, Text: text, Signature: sig, Redacted: flag},
			{Type: PartToolResult, Content: []Part{{Type: PartText, Text: text + text}}, IsError: flag, Opaque: raw},
		}}
		want, werr := stdJSON(t, m)
		got, gerr := writeJSON(m)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("encoding/json error %v, WriteJSON error %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("WriteJSON differs from encoding/json\n got %q\nwant %q", got, want)
		}
	})
}
