package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// toolInputs are the Go types the built-in tools decode their arguments
// into (with DecodeInput), and the fields each accepts that its schema does
// not offer (other models' spellings, as "path.to.field").
var toolInputs = map[string]struct {
	typ    reflect.Type
	hidden []string
}{
	"apply_patch": {typ: reflect.TypeFor[applyPatchInput]()},
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
	"write_file":  {typ: reflect.TypeFor[writeFileInput]()},
}

// Every built-in tool's input schema matches the type its arguments decode
// into: each property is a field of the same type and each field a
// property, the required properties exist, and objects close
// additionalProperties, as DecodeInput refuses unknown arguments.
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
		var s map[string]any
		if err := json.Unmarshal(tool.Def.InputSchema, &s); err != nil {
			t.Errorf("%s: schema is not JSON: %v", name, err)
			continue
		}
		for _, p := range schemaProblems("", s, in.typ, in.hidden) {
			t.Errorf("%s: %s", name, p)
		}
	}
	for name := range toolInputs {
		if !seen[name] {
			t.Errorf("toolInputs names %s, which is no built-in tool", name)
		}
	}
}

// The check finds each kind of mismatch.
func TestSchemaProblems(t *testing.T) {
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
		var s map[string]any
		if err := json.Unmarshal([]byte(tc.schema), &s); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(schemaProblems("", s, reflect.TypeFor[in](), nil), "; ")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("schema %s: problems %q, want %q", tc.schema, got, tc.want)
		}
	}
}

// schemaProblems compares the JSON schema s with the Go type typ at path
// (dotted, "[]" for array items); hidden are field paths that the schema
// leaves out on purpose.
func schemaProblems(path string, s map[string]any, typ reflect.Type, hidden []string) []string {
	at := func(format string, args ...any) string {
		if path == "" {
			return fmt.Sprintf(format, args...)
		}
		return path + ": " + fmt.Sprintf(format, args...)
	}
	want := ""
	switch typ.Kind() {
	case reflect.String:
		want = "string"
	case reflect.Bool:
		want = "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		want = "integer"
	case reflect.Float32, reflect.Float64:
		want = "number"
	case reflect.Slice:
		want = "array"
	case reflect.Struct:
		want = "object"
	default:
		return []string{at("Go type %s has no JSON schema type here", typ)}
	}
	if got, _ := s["type"].(string); got != want {
		return []string{at("schema type %q, Go type %s wants %q", got, typ, want)}
	}
	var problems []string
	switch want {
	case "string":
		if enum, ok := s["enum"].([]any); ok {
			for _, v := range enum {
				if _, ok := v.(string); !ok {
					problems = append(problems, at("enum value %v is not a string", v))
				}
			}
		}
	case "array":
		items, ok := s["items"].(map[string]any)
		if !ok {
			return []string{at("array without an items schema")}
		}
		problems = append(problems, schemaProblems(path+"[]", items, typ.Elem(), hidden)...)
	case "object":
		props, _ := s["properties"].(map[string]any)
		if s["additionalProperties"] != false {
			problems = append(problems, at("additionalProperties is not false, but unknown arguments are refused"))
		}
		fields := map[string]reflect.Type{}
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			fields[name] = f.Type
		}
		for name, ft := range fields {
			sub := strings.TrimPrefix(strings.ReplaceAll(path, "[]", "")+"."+name, ".")
			p, ok := props[name].(map[string]any)
			switch {
			case !ok && slices.Contains(hidden, sub):
			case !ok:
				problems = append(problems, at("field %q is not in the schema's properties", name))
			default:
				problems = append(problems, schemaProblems(strings.TrimPrefix(path+"."+name, "."), p, ft, hidden)...)
			}
		}
		for name := range props {
			if _, ok := fields[name]; !ok {
				problems = append(problems, at("property %q is no field of %s", name, typ))
			}
		}
		req, _ := s["required"].([]any)
		for _, r := range req {
			name, _ := r.(string)
			if _, ok := props[name]; !ok {
				problems = append(problems, at("required %q is no property", name))
			}
			if _, ok := fields[name]; !ok {
				problems = append(problems, at("required %q is no field of %s", name, typ))
			}
		}
	}
	slices.Sort(problems)
	return problems
}
