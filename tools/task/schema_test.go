package task

import (
	"reflect"
	"testing"

	"acpd/tools/internal/schemacheck"
)

// The task tool's schema matches the type its arguments decode into.
func TestToolSchema(t *testing.T) {
	t.Parallel()
	for _, p := range schemacheck.Problems(Tool().Def.InputSchema, reflect.TypeFor[input]()) {
		t.Error(p)
	}
}
