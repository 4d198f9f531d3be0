package replay

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"acpd/internal/jsonscan"
)

// scanProbe fills p from raw as json.Unmarshal would (when raw is valid
// JSON; otherwise its answer means nothing, but it returns), without decoding what the probe skips: it walks raw's top-level
// members and, for chunks, those of content. It returns ok false, with p
// unspecified, when it cannot be sure of giving json.Unmarshal's answer
// (raw is not an object, a key is escaped, non-ASCII or a case variant of a
// probed one, a probed value has an unexpected type); the caller then
// decodes the slow way. A chunk's content is scanned only when the probe
// alone makes the update a candidate for a plain chunk, and its result
// returned as c (c.Type is "" otherwise).
func scanProbe(raw []byte, p *probe, c *chunkContent) (ok bool) {
	*p, *c = probe{}, chunkContent{}
	if !scanFields(raw,
		field{"sessionUpdate", stringField(&p.SessionUpdate)},
		field{"messageId", optStringField(&p.MessageID)},
		field{"_meta", rawField(&p.Meta)},
		field{"content", rawField(&p.Content)}) {
		return false
	}
	if !p.candidate() {
		return true // not a plain chunk, whatever content holds
	}
	if p.Content[0] != '{' {
		return false // let json.Unmarshal say what content is
	}
	return scanFields(p.Content,
		field{"type", stringField(&c.Type)},
		field{"text", optStringField(&c.Text)},
		field{"annotations", rawField(&c.Annotations)},
		field{"_meta", rawField(&c.Meta)})
}

// field is a probed member: its key and how to take its value (false:
// not as json.Unmarshal would).
type field struct {
	key string
	set func(val []byte) bool
}

// scanFields takes the members of the JSON object b that fields name, and
// reports whether b is an object all of whose members it is sure of: those
// named were taken, and the others cannot match a field in encoding/json
// (which matches keys without regard to case, Unicode folding included).
func scanFields(b []byte, fields ...field) bool {
	return members(b, func(key, val []byte) bool {
		for _, f := range fields {
			if string(key) == f.key {
				return f.set(val)
			}
		}
		return !mayMatch(key, len(fields), func(i int) string { return fields[i].key })
	})
}

// mayMatch reports whether encoding/json could match key, an object
// member's raw key that is none of n field names name(i) exactly, to one
// of them: it matches names without regard to case, Unicode folding
// included, so an escaped or non-ASCII key is not sure either.
func mayMatch(key []byte, n int, name func(int) string) bool {
	for _, c := range key {
		if c >= utf8.RuneSelf || c == '\\' {
			return true
		}
	}
	for i := range n {
		if bytes.EqualFold(key, []byte(name(i))) {
			return true
		}
	}
	return false
}

// stringField decodes a JSON string into dst; not null (json.Unmarshal
// would leave dst as it was) nor any other type.
func stringField(dst *string) func([]byte) bool {
	return func(val []byte) bool {
		s, ok := scanString(val)
		*dst = s
		return ok
	}
}

// optStringField decodes val into dst as json.Unmarshal decodes into a
// *string: null makes it nil.
func optStringField(dst **string) func([]byte) bool {
	return func(val []byte) bool {
		if string(val) == "null" {
			*dst = nil
			return true
		}
		s, ok := scanString(val)
		*dst = &s
		return ok
	}
}

// rawField takes any value as it is, as a json.RawMessage does.
func rawField(dst *json.RawMessage) func([]byte) bool {
	return func(val []byte) bool {
		*dst = val
		return true
	}
}

// scanString returns the JSON string val; ok is false when val is not one.
// A string without escapes is taken as it is (invalid UTF-8 included, which
// only changes how the text is re-encoded later, to U+FFFD as
// json.Unmarshal would have).
func scanString(val []byte) (string, bool) {
	if len(val) < 2 || val[0] != '"' || val[len(val)-1] != '"' {
		return "", false
	}
	inner := val[1 : len(val)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(val, &s) != nil {
		return "", false
	}
	return s, true
}

// members calls f with the raw key (between its quotes) and the raw value
// of each member of the JSON object b, in order, and reports whether b is
// an object and f returned true for each member. On valid JSON that is
// exact; on anything else it never fails but may call f with values of no
// meaning (the caller checks validity before trusting its answer).
func members(b []byte, f func(key, val []byte) bool) bool {
	i := jsonscan.Space(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	for i = jsonscan.Space(b, i+1); i < len(b) && b[i] == '"'; {
		kend, _ := jsonscan.StringEnd(b, i)
		if kend-1 <= i || kend >= len(b) {
			return false
		}
		key := b[i+1 : kend-1]
		if i = jsonscan.Space(b, kend); i >= len(b) || b[i] != ':' {
			return false
		}
		i = jsonscan.Space(b, i+1)
		vend := jsonscan.ValueEnd(b, i)
		if vend <= i || vend > len(b) {
			return false
		}
		if !f(key, b[i:vend]) {
			return false
		}
		if i = jsonscan.Space(b, vend); i < len(b) && b[i] == ',' {
			i = jsonscan.Space(b, i+1)
		}
	}
	return true
}
