package task

import (
	"reflect"
	"testing"

	"acpd/tools/internal/schemacheck"
)

// The task tool's schema, with custom sub-agent types, matches the type its
// arguments decode into; without them it offers no subagent_type.
func TestToolSchema(t *testing.T) {
	t.Parallel()
	for _, p := range schemacheck.Problems(ToolWith([]Type{{Name: "reviewer", Description: "Reviews"}}).Def.InputSchema, reflect.TypeFor[input]()) {
		t.Error(p)
	}
	if p := schemacheck.Problems(Tool().Def.InputSchema, reflect.TypeFor[input]()); len(p) != 1 {
		t.Errorf("the explorer's schema: %v, want only subagent_type missing", p)
	}
}
