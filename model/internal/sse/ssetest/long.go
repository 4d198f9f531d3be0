package ssetest

import (
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"acpd/model"
	"acpd/model/internal/body"
)

// Whole turns a dialect's request payload function into one that returns
// the body whole, for tests that decode it.
func Whole(payload func(*model.Request) (*body.Payload, error)) func(*model.Request) ([]byte, error) {
	return func(req *model.Request) ([]byte, error) {
		p, err := payload(req)
		if err != nil {
			return nil, err
		}
		return p.Bytes(), nil
	}
}

// CheckLongAnswer checks a dialect's request payload function with a long
// answer in the transcript: an answer split in a run of parts (see
// [model.Part]) is sent as one string, the same body as the answer in one
// part, and building and reading the payload allocates far less than the
// answer (it is not copied). provider is the dialect's provider name, for
// the reasoning it sends back.
func CheckLongAnswer(t *testing.T, provider string, payload func(*model.Request) (*body.Payload, error)) {
	t.Helper()
	var b strings.Builder
	for b.Len() < 3<<19 {
		b.WriteString("line <b>&\"quoted\"</b>\tand é€😀\u2028 \\ end\n")
	}
	answer := b.String()
	thought := answer[:300<<10+17]
	split := func(s string, n int) []model.Part {
		var ps []model.Part
		for len(s) > 0 {
			k := min(len(s), n)
			for k < len(s) && !utf8.RuneStart(s[k]) {
				k--
			}
			ps = append(ps, model.Part{Type: model.PartText, Text: s[:k], Continued: len(ps) > 0})
			s = s[k:]
		}
		return ps
	}
	req := func(parts []model.Part) *model.Request {
		return &model.Request{Model: "m-1", Messages: []model.Message{
			{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "write"}}},
			{Role: model.RoleAssistant, Parts: parts},
			{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartToolResult, ToolCallID: "c1", Content: []model.Part{{Type: model.PartText, Text: "ok"}}}}},
		}}
	}
	tail := []model.Part{{Type: model.PartToolUse, ToolCallID: "c1", ToolName: "t", Input: json.RawMessage(`{"a":1}`)}}
	reasoning := func(ps []model.Part) []model.Part {
		for i := range ps {
			ps[i].Type = model.PartReasoning
		}
		ps[len(ps)-1].Signature, ps[len(ps)-1].Provider = "sig", provider
		return ps
	}
	splitParts := append(append(reasoning(split(thought, 100<<10)), split(answer, 512<<10)...), tail...)
	wholeParts := append(append(reasoning(split(thought, len(thought))), split(answer, len(answer))...), tail...)

	read := func(parts []model.Part) []byte {
		t.Helper()
		p, err := payload(req(parts))
		if err != nil {
			t.Fatal(err)
		}
		return p.Bytes()
	}
	got, want := read(splitParts), read(wholeParts)
	if !bytes.Equal(got, want) {
		t.Fatalf("the body of a split answer (%d bytes) differs from the body of the answer in one part (%d bytes)", len(got), len(want))
	}
	var v any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("the body is not JSON: %v", err)
	}
	if n := countString(v, answer); n != 1 {
		t.Fatalf("the answer is %d strings of the body, want 1", n)
	}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p, err := payload(req(splitParts))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, p.Reader())
	runtime.ReadMemStats(&after)
	if err != nil || n != int64(len(got)) {
		t.Fatalf("read %d bytes (%v), want %d", n, err, len(got))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(answer)/8) {
		t.Fatalf("building and reading the payload allocated %d bytes for a %d byte answer", alloc, len(answer))
	}
}

// countString counts the strings equal to s in a decoded JSON value.
func countString(v any, s string) int {
	switch x := v.(type) {
	case string:
		if x == s {
			return 1
		}
	case []any:
		n := 0
		for _, e := range x {
			n += countString(e, s)
		}
		return n
	case map[string]any:
		n := 0
		for _, e := range x {
			n += countString(e, s)
		}
		return n
	}
	return 0
}
