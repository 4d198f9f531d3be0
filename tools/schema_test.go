package tools

import (
	"reflect"
	"testing"

	"acpd/tools/internal/schemacheck"
)

// toolInputs are the Go types the built-in tools decode their arguments
// into (with DecodeInput), and the fields each accepts that its schema does
// not offer (other models' spellings, as "path.to.field").
var toolInputs = map[string]struct {
	typ    reflect.Type
	hidden []string
}{
	"apply_patch": {typ: reflect.TypeFor[applyPatchInput]()},
	"ask_user":    {typ: reflect.TypeFor[askInput]()},
	"edit_file":   {typ: reflect.TypeFor[editFileInput]()},
	"glob":        {typ: reflect.TypeFor[globInput]()},
	"grep":        {typ: reflect.TypeFor[grepInput]()},
	"job_output":  {typ: reflect.TypeFor[jobInput]()},
	"job_stop":    {typ: reflect.TypeFor[jobInput]()},
	"list_dir":    {typ: reflect.TypeFor[listDirInput]()},
	"multi_edit":  {typ: reflect.TypeFor[multiEditInput]()},
	"read_file":   {typ: reflect.TypeFor[readFileInput]()},
	"run_command": {typ: reflect.TypeFor[runCommandInput]()},
	// Codex models write {"plan": [{"step", "status"}]}.
	"update_plan": {typ: reflect.TypeFor[planInput](), hidden: []string{"plan", "entries.step"}},
	"web_fetch":   {typ: reflect.TypeFor[fetchInput]()},
	"web_search":  {typ: reflect.TypeFor[searchInput]()},
	"write_file":  {typ: reflect.TypeFor[writeFileInput]()},
}

// Every built-in tool's input schema matches the type its arguments decode
// into (see schemacheck).
func TestToolSchemas(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tool := range Builtin(Options{}) {
		name := tool.Def.Name
		seen[name] = true
		in, ok := toolInputs[name]
		if !ok {
			t.Errorf("%s: no input type in toolInputs", name)
			continue
		}
		for _, p := range schemacheck.Problems(tool.Def.InputSchema, in.typ, in.hidden...) {
			t.Errorf("%s: %s", name, p)
		}
	}
	for name := range toolInputs {
		if !seen[name] {
			t.Errorf("toolInputs names %s, which is no built-in tool", name)
		}
	}
}
