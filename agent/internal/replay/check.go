package replay

import (
	"unicode/utf8"

	"acpd/internal/jsonscan"
	"acpd/internal/lazy"
)

// decodes reports whether the strict decoder (json.Unmarshal into an
// acp.SessionUpdate) surely accepts raw, a stored tool call or tool call
// update, without decoding it: it checks raw's shape against the schema of
// the shapes acpd writes (a tool call's strings, locations, raw input and
// output, and content of text, diffs and terminals; a usage update
// without cost). false means "not
// sure", never "rejected": the caller then decodes raw. On valid JSON that
// is exact (a fuzz test holds it to the decoder); raw must be valid JSON.
//
// The decoder builds every value to check it, which costs twenty times
// this walk: a long conversation's tool calls were most of session/load.
func decodes(raw []byte, kind string) bool {
	switch kind {
	case "tool_call":
		return shape(raw, schema.Get().toolCall)
	case "tool_call_update":
		return shape(raw, schema.Get().toolCallUpdate)
	case "usage_update":
		return shape(raw, schema.Get().usage)
	}
	return false
}

// A schemaField is a member of an object shape: its exact key, whether
// it is required, and the check of its value (valid JSON, not null). A
// shape lists every field of its Go type: the decoder ignores the others.
type schemaField struct {
	key      string
	required bool
	check    func([]byte) bool
}

// shapes are the object shapes decodes checks, built on first use.
type shapes struct {
	toolCall, toolCallUpdate, usage         []schemaField
	location, content, diff, terminal, text []schemaField // inside a tool call's
}

var schema = lazy.Value[*shapes]{New: func() *shapes {
	meta := schemaField{"_meta", false, isObject}
	location := []schemaField{{"path", true, isString}, {"line", false, isUint32}, meta}
	text := []schemaField{{"type", true, isString}, {"text", true, isString}, {"annotations", false, notSure}, meta}
	// textBlock checks a content block that must be text.
	textBlock := func(b []byte) bool { return tagOf(b, "type") == "text" && shape(b, text) }
	content := []schemaField{{"type", true, isString}, {"content", true, textBlock}, meta}
	diff := []schemaField{{"type", true, isString}, {"path", true, isString}, {"newText", true, isString}, {"oldText", false, isString}, meta}
	terminal := []schemaField{{"type", true, isString}, {"terminalId", true, isString}, meta}
	// toolCallContent checks one item of a tool call's content by its type.
	toolCallContent := func(b []byte) bool {
		switch tagOf(b, "type") {
		case "content":
			return shape(b, content)
		case "diff":
			return shape(b, diff)
		case "terminal":
			return shape(b, terminal)
		}
		return false
	}
	common := func(title bool) []schemaField {
		return []schemaField{
			{"sessionUpdate", true, isString},
			{"toolCallId", true, isString},
			{"title", title, isString},
			{"kind", false, isString},
			{"status", false, isString},
			{"name", false, isString},
			{"rawInput", false, anyValue},
			{"rawOutput", false, anyValue},
			{"locations", false, arrayOf(func(b []byte) bool { return shape(b, location) })},
			{"content", false, arrayOf(toolCallContent)},
			meta,
		}
	}
	return &shapes{
		toolCall:       common(true),
		toolCallUpdate: common(false),
		usage:          []schemaField{{"sessionUpdate", true, isString}, {"size", true, isUint63}, {"used", true, isUint63}, {"cost", false, notSure}, meta},
		location:       location,
		content:        content,
		diff:           diff,
		terminal:       terminal,
		text:           text,
	}
}}

// tagOf returns the plain (escape-free ASCII) string value of b's member
// key, or "" (b is an object).
func tagOf(b []byte, key string) string {
	var tag string
	members(b, func(k, val []byte) bool {
		if string(k) == key {
			tag = plainString(val)
			return false
		}
		return true
	})
	return tag
}

// plainString returns the JSON string val when it needs no unescaping,
// else "".
func plainString(val []byte) string {
	if len(val) < 2 || val[0] != '"' {
		return ""
	}
	inner := val[1 : len(val)-1]
	for _, c := range inner {
		if c == '\\' || c >= utf8.RuneSelf {
			return ""
		}
	}
	return string(inner)
}

// shape reports whether the object b surely decodes as the shape fields
// name: each present field once, exactly spelled, its value accepted by its
// check; every required one present; no other key that encoding/json
// could match to a field (it folds case, Unicode included: keys that are
// escaped or not ASCII are not sure).
func shape(b []byte, fields []schemaField) bool {
	if len(b) == 0 || b[0] != '{' {
		return false
	}
	var seen uint64 // fields has at most 64 members
	ok := members(b, func(key, val []byte) bool {
		for i, f := range fields {
			if string(key) == f.key {
				if seen&(1<<i) != 0 || string(val) == "null" || !f.check(val) {
					return false
				}
				seen |= 1 << i
				return true
			}
		}
		return !mayMatch(key, len(fields), func(i int) string { return fields[i].key })
	})
	if !ok {
		return false
	}
	for i, f := range fields {
		if f.required && seen&(1<<i) == 0 {
			return false
		}
	}
	return true
}

func isString(b []byte) bool { return len(b) > 0 && b[0] == '"' }
func isObject(b []byte) bool { return len(b) > 0 && b[0] == '{' }
func anyValue([]byte) bool   { return true }
func notSure([]byte) bool    { return false } // a field left to the decoder

// isUint32 reports whether b is a JSON number that decodes into a uint32:
// digits only, at most 4294967295.
func isUint32(b []byte) bool {
	if len(b) == 0 || len(b) > 10 {
		return false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + uint64(c-'0')
	}
	return n <= 1<<32-1
}

// isUint63 reports whether b is a JSON number of at most 18 digits (below
// 2^63, and so a uint64).
func isUint63(b []byte) bool {
	if len(b) == 0 || len(b) > 18 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// arrayOf checks a JSON array each of whose items item accepts (items are
// never null: a null item of a union fails its decoder).
func arrayOf(item func([]byte) bool) func([]byte) bool {
	return func(b []byte) bool {
		return elements(b, func(v []byte) bool { return string(v) != "null" && item(v) })
	}
}

// elements calls f with each item of the JSON array b (valid JSON), in
// order, and reports whether b is an array and f returned true for each.
func elements(b []byte, f func(val []byte) bool) bool {
	if len(b) == 0 || b[0] != '[' {
		return false
	}
	i := jsonscan.Space(b, 1)
	for i < len(b) && b[i] != ']' {
		end := jsonscan.ValueEnd(b, i)
		if end <= i || !f(b[i:end]) {
			return false
		}
		if i = jsonscan.Space(b, end); i < len(b) && b[i] == ',' {
			i = jsonscan.Space(b, i+1)
		}
	}
	return i < len(b)
}
