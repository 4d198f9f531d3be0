package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// maxSchemaDepth bounds the nesting convertSchema follows; deeper schemas
// (and recursive $refs) are cut to {"type":"object"}.
const maxSchemaDepth = 24

// convertSchema converts a tool's JSON Schema to the OpenAPI 3.0 subset
// Gemini accepts in functionDeclarations.parameters. It returns nil when
// the tool takes no parameters (Gemini rejects an object schema without
// properties at the top level).
//
// Kept: type, description, title, nullable, enum (string values only),
// format (the values Gemini knows for the type), properties, required
// (restricted to the declared properties), items, anyOf (oneOf becomes
// anyOf), minItems, maxItems, minimum, maximum, minLength, maxLength.
// Rewritten: local $refs ("#/$defs/x", "#/definitions/x") are inlined; a
// type array becomes nullable and/or anyOf; const becomes a one-value
// enum; allOf is merged. Everything else (additionalProperties, $schema,
// $id, pattern, patternProperties, default, examples, if/then/else, not,
// ...) is dropped: the tool still validates its input itself.
func convertSchema(raw json.RawMessage) (map[string]any, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, errors.New("input schema is not valid JSON: " + err.Error())
	}
	obj, ok := root.(map[string]any)
	if !ok {
		if b, isBool := root.(bool); isBool && b {
			return nil, nil // "true" accepts anything: declare no parameters
		}
		return nil, errors.New("input schema is not a JSON object")
	}
	c := schemaConverter{defs: map[string]any{}, active: map[string]bool{}}
	for _, key := range []string{"definitions", "$defs"} {
		if defs, ok := obj[key].(map[string]any); ok {
			for name, d := range defs {
				c.defs["#/"+key+"/"+name] = d
			}
		}
	}
	out := c.convert(obj, 0)
	if props, _ := out["properties"].(map[string]any); len(props) == 0 && (out["type"] == "object" || out["type"] == nil) && out["anyOf"] == nil {
		return nil, nil
	}
	return out, nil
}

type schemaConverter struct {
	defs   map[string]any
	active map[string]bool // $refs being expanded, to cut recursion
}

// convert converts one schema object.
func (c *schemaConverter) convert(s map[string]any, depth int) map[string]any {
	if depth > maxSchemaDepth {
		return map[string]any{"type": "object"}
	}
	if ref, ok := s["$ref"].(string); ok {
		target, found := c.defs[ref].(map[string]any)
		if !found || c.active[ref] {
			out := map[string]any{"type": "object"}
			copyString(out, s, "description")
			return out
		}
		c.active[ref] = true
		out := c.convert(target, depth+1)
		delete(c.active, ref)
		copyString(out, s, "description") // the referring description is more specific
		return out
	}
	out := map[string]any{}
	copyString(out, s, "description")
	copyString(out, s, "title")
	if n, ok := s["nullable"].(bool); ok && n {
		out["nullable"] = true
	}
	switch t := s["type"].(type) {
	case string:
		if t == "null" {
			out["nullable"] = true
		} else {
			out["type"] = t
		}
	case []any:
		var types []string
		for _, v := range t {
			if ts, ok := v.(string); ok {
				if ts == "null" {
					out["nullable"] = true
				} else {
					types = append(types, ts)
				}
			}
		}
		if len(types) == 1 {
			out["type"] = types[0]
		} else if len(types) > 1 {
			var alts []any
			for _, ts := range types {
				alts = append(alts, map[string]any{"type": ts})
			}
			out["anyOf"] = alts
		}
	}
	if enum, ok := stringList(s["enum"]); ok && len(enum) > 0 {
		out["enum"] = enum
	} else if cs, ok := s["const"].(string); ok {
		out["enum"] = []any{cs}
	}
	if out["enum"] != nil && out["type"] == nil {
		out["type"] = "string"
	}
	if out["enum"] != nil && out["type"] != "string" {
		delete(out, "enum") // Gemini takes enums of strings only
	}
	if f, ok := s["format"].(string); ok && formatAllowed(out["type"], f) {
		out["format"] = f
	}
	if props, ok := s["properties"].(map[string]any); ok {
		conv := map[string]any{}
		for name, p := range props {
			if ps, ok := p.(map[string]any); ok {
				conv[name] = c.convert(ps, depth+1)
			} else {
				conv[name] = map[string]any{} // "true": any value
			}
		}
		out["properties"] = conv
		if out["type"] == nil && out["anyOf"] == nil {
			out["type"] = "object"
		}
	}
	if req, ok := stringList(s["required"]); ok {
		props, _ := out["properties"].(map[string]any)
		var keep []any
		for _, r := range req {
			if _, declared := props[r.(string)]; declared {
				keep = append(keep, r)
			}
		}
		if len(keep) > 0 {
			out["required"] = keep
		}
	}
	switch items := s["items"].(type) {
	case map[string]any:
		out["items"] = c.convert(items, depth+1)
	case []any: // tuple form: Gemini has one item schema
		if len(items) > 0 {
			if first, ok := items[0].(map[string]any); ok {
				out["items"] = c.convert(first, depth+1)
			}
		}
	}
	if out["type"] == "array" && out["items"] == nil {
		out["items"] = map[string]any{"type": "string"} // Gemini requires items
	}
	for _, key := range []string{"minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength"} {
		if n, ok := s[key].(json.Number); ok {
			out[key] = n
		}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if list, ok := s[key].([]any); ok {
			c.alternatives(out, list, depth)
		}
	}
	if list, ok := s["allOf"].([]any); ok {
		for _, sub := range list {
			if ss, ok := sub.(map[string]any); ok {
				merge(out, c.convert(ss, depth+1))
			}
		}
	}
	return out
}

// alternatives adds the converted alternatives of anyOf or oneOf to out:
// a {"type":"null"} alternative becomes nullable, a single remaining one is
// merged into out.
func (c *schemaConverter) alternatives(out map[string]any, list []any, depth int) {
	var alts []any
	for _, a := range list {
		as, ok := a.(map[string]any)
		if !ok {
			continue
		}
		if as["type"] == "null" {
			out["nullable"] = true
			continue
		}
		alts = append(alts, c.convert(as, depth+1))
	}
	switch {
	case len(alts) == 1:
		merge(out, alts[0].(map[string]any))
	case len(alts) > 1:
		out["anyOf"] = alts
	}
}

// merge adds src's keywords to dst: properties and required are united,
// other keywords are kept from dst when present.
func merge(dst, src map[string]any) {
	for k, v := range src {
		switch k {
		case "properties":
			dp, _ := dst["properties"].(map[string]any)
			if dp == nil {
				dp = map[string]any{}
				dst["properties"] = dp
			}
			for name, p := range v.(map[string]any) {
				if _, exists := dp[name]; !exists {
					dp[name] = p
				}
			}
		case "required":
			dr, _ := dst["required"].([]any)
			seen := map[any]bool{}
			for _, r := range dr {
				seen[r] = true
			}
			for _, r := range v.([]any) {
				if !seen[r] {
					dr = append(dr, r)
				}
			}
			dst["required"] = dr
		default:
			if _, exists := dst[k]; !exists {
				dst[k] = v
			}
		}
	}
}

// formatAllowed reports whether Gemini accepts format f for type t.
func formatAllowed(t any, f string) bool {
	switch t {
	case "string":
		return f == "enum" || f == "date-time"
	case "integer":
		return f == "int32" || f == "int64"
	case "number":
		return f == "float" || f == "double"
	}
	return false
}

// stringList returns v as a list of strings; ok is false when v is not a
// list or holds anything else.
func stringList(v any) ([]any, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	for _, x := range list {
		if _, isStr := x.(string); !isStr {
			return nil, false
		}
	}
	return list, true
}

func copyString(dst, src map[string]any, key string) {
	if s, ok := src[key].(string); ok && strings.TrimSpace(s) != "" {
		dst[key] = s
	}
}
