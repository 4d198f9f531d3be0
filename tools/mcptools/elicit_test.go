package mcptools

import (
	"encoding/json"
	"testing"

	"acpd/acp"
)

func TestElicitationSchemaMapping(t *testing.T) {
	for _, bad := range []string{
		`{"type":"object","properties":{"x":{"type":"object"}}}`,
		`{"type":"array"}`,
		`{"type":"object","properties":{"x":{"type":"string"}},"required":["y"]}`,
		`[1]`,
	} {
		if _, err := ElicitationSchema(json.RawMessage(bad)); err == nil {
			t.Errorf("schema %s was mapped, want an error", bad)
		}
	}
	s, err := ElicitationSchema(json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"},"i":{"type":"integer"},"b":{"type":"boolean"},"m":{"type":"array","items":{"type":"string","enum":["a","b"]}}}}`))
	if err != nil || s.Properties["n"].Number == nil || s.Properties["i"].Integer == nil || s.Properties["b"].Boolean == nil || s.Properties["m"].Array == nil {
		t.Errorf("mapping = %+v, %v", s, err)
	}
}

// FuzzElicitationSchema feeds untrusted MCP schemas to the mapping: it never
// panics, and what it accepts encodes as an ACP form schema.
func FuzzElicitationSchema(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"]}`))
	f.Add([]byte(`{"type":"object","properties":{"x":{"type":"array","items":{"anyOf":[{"const":"a"}]}}}}`))
	f.Add([]byte(`{"type":"object","properties":{"x":{"type":"nope"}}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ElicitationSchema(data)
		if err != nil {
			return
		}
		if _, err := json.Marshal(acp.ElicitationFormMode{RequestedSchema: s, Session: &acp.ElicitationSessionScope{SessionID: "s"}}); err != nil {
			t.Fatalf("accepted schema %s does not encode: %v", data, err)
		}
	})
}
