// Package schemacheck compares a tool's JSON input schema with the Go type
// its arguments decode into, for the tools' tests: every property is a
// field of the same JSON type and every field a property, the required
// properties exist, and objects close additionalProperties (tools.DecodeInput
// refuses unknown arguments).
package schemacheck

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Problems lists where schema and typ disagree, sorted; none means they
// agree. hidden are the field paths ("plan", "entries.step") the schema
// leaves out on purpose (other models' spellings the decoder accepts).
func Problems(schema json.RawMessage, typ reflect.Type, hidden ...string) []string {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return []string{fmt.Sprintf("the schema is not a JSON object: %v", err)}
	}
	return problems("", s, typ, hidden)
}

// problems compares the JSON schema s with the Go type typ at path
// (dotted, "[]" for array items).
func problems(path string, s map[string]any, typ reflect.Type, hidden []string) []string {
	at := func(format string, args ...any) string {
		if path == "" {
			return fmt.Sprintf(format, args...)
		}
		return path + ": " + fmt.Sprintf(format, args...)
	}
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem() // an optional argument whose absence means a default
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
	var out []string
	switch want {
	case "string":
		if enum, ok := s["enum"].([]any); ok {
			for _, v := range enum {
				if _, ok := v.(string); !ok {
					out = append(out, at("enum value %v is not a string", v))
				}
			}
		}
	case "array":
		items, ok := s["items"].(map[string]any)
		if !ok {
			return []string{at("array without an items schema")}
		}
		out = append(out, problems(path+"[]", items, typ.Elem(), hidden)...)
	case "object":
		props, _ := s["properties"].(map[string]any)
		if s["additionalProperties"] != false {
			out = append(out, at("additionalProperties is not false, but unknown arguments are refused"))
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
				out = append(out, at("field %q is not in the schema's properties", name))
			default:
				out = append(out, problems(strings.TrimPrefix(path+"."+name, "."), p, ft, hidden)...)
			}
		}
		for name := range props {
			if _, ok := fields[name]; !ok {
				out = append(out, at("property %q is no field of %s", name, typ))
			}
		}
		req, _ := s["required"].([]any)
		for _, r := range req {
			name, _ := r.(string)
			if _, ok := props[name]; !ok {
				out = append(out, at("required %q is no property", name))
			}
			if _, ok := fields[name]; !ok {
				out = append(out, at("required %q is no field of %s", name, typ))
			}
		}
	}
	slices.Sort(out)
	return out
}
