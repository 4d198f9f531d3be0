package ssetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"acpd/model"
	"acpd/model/internal/body"
)

// ToolPayload is a dialect's request body builder with the tool memo it
// keeps the tools' encodings in.
type ToolPayload func(*body.ToolMemo, *model.Request) (*body.Payload, error)

// CheckToolMemo checks that a dialect keeping its tools' encodings in a
// [body.ToolMemo] sends, request after request through one memo, the body
// a fresh memo makes: for the same tools again, for tools that changed
// (one added, one removed, a schema or a description changed, the order),
// for the options the encoding depends on (web search, the tools' cache
// breakpoint), and for several sessions using the memo in turn.
func CheckToolMemo(t *testing.T, payload ToolPayload) {
	t.Helper()
	def := func(name, schema string) model.ToolDef {
		return model.ToolDef{Name: name, Description: "the tool " + name, InputSchema: json.RawMessage(schema)}
	}
	a := def("alpha", `{"type":"object","properties":{"x":{"type":"string"}}}`)
	b := def("beta", `{"type":"object"}`)
	c := def("gamma", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)
	a2 := a
	a2.InputSchema = json.RawMessage(`{"type":"object","properties":{"y":{"type":"string"}}}`)
	b2 := b
	b2.Description = "another description"
	steps := []struct {
		name  string
		tools []model.ToolDef
		web   bool
		cache bool
	}{
		{"first", []model.ToolDef{a, b}, false, true},
		{"same again", []model.ToolDef{a, b}, false, true},
		{"added", []model.ToolDef{a, b, c}, false, true},
		{"removed", []model.ToolDef{a, c}, false, true},
		{"schema changed", []model.ToolDef{a2, c}, false, true},
		{"description changed", []model.ToolDef{a2, b2}, false, true},
		{"reordered", []model.ToolDef{b2, a2}, false, true},
		{"no cache breakpoint", []model.ToolDef{b2, a2}, false, false},
		{"web search", []model.ToolDef{b2, a2}, true, false},
		{"web search, cached", []model.ToolDef{b2, a2}, true, true},
		{"first session again", []model.ToolDef{a, b}, false, true},
		{"another session", []model.ToolDef{c}, false, true},
		{"first session once more", []model.ToolDef{a, b}, false, true},
		{"none", nil, false, true},
	}
	var kept body.ToolMemo
	for i, s := range steps {
		req := func() *model.Request {
			// A copy of the tools, as each request of a session has.
			tools := make([]model.ToolDef, len(s.tools))
			for j, d := range s.tools {
				tools[j] = model.ToolDef{Name: d.Name, Description: d.Description, InputSchema: bytes.Clone(d.InputSchema)}
			}
			return &model.Request{Model: "m", System: "sys", Tools: tools, WebSearch: s.web, CacheTools: s.cache, CacheSystem: true,
				Messages: []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: fmt.Sprint("request ", i)}}}}}
		}
		got, err := payload(&kept, req())
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		want, err := payload(new(body.ToolMemo), req())
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if g, w := got.Bytes(), want.Bytes(); !bytes.Equal(g, w) {
			t.Fatalf("%s: the kept tools' body differs from a fresh one:\n got %s\nwant %s", s.name, g, w)
		}
		if !json.Valid(got.Bytes()) {
			t.Fatalf("%s: invalid JSON: %s", s.name, got.Bytes())
		}
		for _, d := range s.tools {
			if !bytes.Contains(got.Bytes(), []byte(`"`+d.Description+`"`)) {
				t.Errorf("%s: the body lacks the tool %s: %s", s.name, d.Name, got.Bytes())
			}
		}
	}
}

// Tools80 are eighty tool definitions, as twenty MCP servers offering
// four tools each give a session.
func Tools80() []model.ToolDef {
	defs := make([]model.ToolDef, 0, 80)
	for s := range 20 {
		for _, name := range []string{"echo", "search", "read", "write"} {
			defs = append(defs, model.ToolDef{
				Name:        fmt.Sprintf("mcp__s%d__%s", s, name),
				Description: "Does " + name + " on server " + fmt.Sprint(s) + ", with the arguments its schema describes.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"what to ` + name + `"},"limit":{"type":"integer","minimum":1,"maximum":100},"tags":{"type":"array","items":{"type":"string"}}},"required":["message"],"additionalProperties":false}`),
			})
		}
	}
	return defs
}

// BenchmarkTools80 measures a request of a short conversation offering
// Tools80 (built and written whole), with the tools' encoding kept from
// the previous request (kept) and made anew (fresh).
func BenchmarkTools80(b *testing.B, payload ToolPayload) {
	tools := Tools80()
	req := &model.Request{Model: "m", System: "You are a coding agent.", Tools: tools, CacheTools: true, CacheSystem: true,
		Messages: []model.Message{model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "call a tool"}}}.Memoized()}}
	run := func(b *testing.B, memo func() *body.ToolMemo) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := payload(memo(), req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.WriteTo(io.Discard); err != nil {
				b.Fatal(err)
			}
		}
	}
	var kept body.ToolMemo
	b.Run("kept", func(b *testing.B) { run(b, func() *body.ToolMemo { return &kept }) })
	b.Run("fresh", func(b *testing.B) { run(b, func() *body.ToolMemo { return new(body.ToolMemo) }) })
}
