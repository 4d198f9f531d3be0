package body

import (
	"encoding/json"
	"testing"

	"acpd/model"
)

// TestToolMemo: an equal tool list (a copy, not the same slice) gets the
// kept fragment; a list whose schema bytes changed in place, a changed
// description, another key or another order is encoded anew.
func TestToolMemo(t *testing.T) {
	var m ToolMemo
	encodes := 0
	get := func(key any, defs []model.ToolDef) string {
		t.Helper()
		var bb Builder
		f, err := m.Fragment(key, defs, func() (*Fragment, error) {
			encodes++
			vs := make([]any, len(defs))
			for i, d := range defs {
				vs[i] = d
			}
			return bb.Encode(vs...)
		})
		if err != nil {
			t.Fatal(err)
		}
		p, err := bb.Marshal(struct {
			Tools json.RawMessage `json:"tools"`
		}{bb.Array([]*Fragment{f})})
		if err != nil {
			t.Fatal(err)
		}
		return string(p.Bytes())
	}
	schema := []byte(`{"type":"object"}`)
	defs := []model.ToolDef{{Name: "a", Description: "A", InputSchema: schema}, {Name: "b", InputSchema: json.RawMessage(`{}`)}}
	want := `{"tools":[{"name":"a","description":"A","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{}}]}`
	if got := get(nil, defs); got != want {
		t.Fatalf("first body %s, want %s", got, want)
	}
	if got := get(nil, append([]model.ToolDef(nil), defs...)); got != want || encodes != 1 {
		t.Errorf("equal list: body %s after %d encodings, want %s after 1", got, encodes, want)
	}
	copy(schema, `{"type":"string"}`)
	if got := get(nil, defs); encodes != 2 || got != `{"tools":[{"name":"a","description":"A","inputSchema":{"type":"string"}},{"name":"b","inputSchema":{}}]}` {
		t.Errorf("schema changed in place: body %s after %d encodings, want it re-encoded", got, encodes)
	}
	defs[1].Description = "B"
	if get(nil, defs); encodes != 3 {
		t.Errorf("description changed: %d encodings, want 3", encodes)
	}
	if get("other", defs); encodes != 4 {
		t.Errorf("another key: %d encodings, want 4", encodes)
	}
	if get(nil, []model.ToolDef{defs[1], defs[0]}); encodes != 5 {
		t.Errorf("another order: %d encodings, want 5", encodes)
	}
	if get(nil, defs); encodes != 5 {
		t.Errorf("a list kept before: %d encodings, want 5", encodes)
	}
}
