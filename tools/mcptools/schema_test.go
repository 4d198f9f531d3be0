package mcptools

import (
	"reflect"
	"testing"

	"acpd/tools/internal/schemacheck"
)

// The resource tools' schemas match the types their arguments decode into.
func TestResourceToolSchemas(t *testing.T) {
	t.Parallel()
	want := map[string]reflect.Type{
		ListResources: reflect.TypeFor[listResourcesInput](),
		ReadResource:  reflect.TypeFor[readResourceInput](),
	}
	ts := resourceTools(nil)
	if len(ts) != len(want) {
		t.Fatalf("%d resource tools, want %d", len(ts), len(want))
	}
	for _, tl := range ts {
		typ, ok := want[tl.Def.Name]
		if !ok {
			t.Errorf("no input type for %s", tl.Def.Name)
			continue
		}
		for _, p := range schemacheck.Problems(tl.Def.InputSchema, typ) {
			t.Errorf("%s: %s", tl.Def.Name, p)
		}
	}
}
