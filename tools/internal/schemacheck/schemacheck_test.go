package schemacheck

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The check finds each kind of mismatch.
func TestProblems(t *testing.T) {
	t.Parallel()
	type in struct {
		Path  string   `json:"path"`
		Count int      `json:"count"`
		Tags  []string `json:"tags"`
	}
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["path"],"additionalProperties":false}`, ""},
		{`{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"integer"}},"additionalProperties":false}`, `field "tags" is not in the schema's properties`},
		{`{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}},"extra":{"type":"string"}},"additionalProperties":false}`, `property "extra" is no field`},
		{`{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}}},"additionalProperties":false}`, `count: schema type "string", Go type int wants "integer"`},
		{`{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"integer"},"tags":{"type":"array","items":{"type":"integer"}}},"additionalProperties":false}`, `tags[]: schema type "integer", Go type string wants "string"`},
		{`{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["file"],"additionalProperties":false}`, `required "file" is no property`},
		{`{"type":"object","properties":{"path":{"type":"string"},"count":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}}}`, "additionalProperties is not false"},
	} {
		got := strings.Join(Problems(json.RawMessage(tc.schema), reflect.TypeFor[in]()), "; ")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("schema %s: problems %q, want %q", tc.schema, got, tc.want)
		}
	}
}

// A pointer field is an optional argument of its element's type.
func TestPointerField(t *testing.T) {
	t.Parallel()
	type in struct {
		Free *bool `json:"free"`
	}
	if p := Problems(json.RawMessage(`{"type":"object","properties":{"free":{"type":"boolean"}},"additionalProperties":false}`), reflect.TypeFor[in]()); len(p) != 0 {
		t.Errorf("problems %q", p)
	}
	if p := Problems(json.RawMessage(`{"type":"object","properties":{"free":{"type":"string"}},"additionalProperties":false}`), reflect.TypeFor[in]()); len(p) != 1 || !strings.Contains(p[0], `wants "boolean"`) {
		t.Errorf("problems %q", p)
	}
}
