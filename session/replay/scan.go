package replay

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// scanProbe fills p from raw as json.Unmarshal would, without decoding
// what the probe skips: it walks raw's top-level members and, for chunks,
// those of content. It returns ok false, with p unspecified, when it
// cannot be sure of giving json.Unmarshal's answer (raw is not an object,
// a key is escaped, non-ASCII or a case variant of a probed one, a probed
// value has an unexpected type); the caller then decodes the slow way. A
// chunk's content is scanned only when the probe alone makes the update
// mergeable, and its result returned as c (c.Type is "" otherwise).
func scanProbe(raw []byte, p *probe, c *chunkContent) (ok bool) {
	*p, *c = probe{}, chunkContent{}
	var content []byte
	okAll := members(raw, func(key, val []byte) bool {
		switch string(key) {
		case "sessionUpdate":
			s, ok := scanString(val)
			p.SessionUpdate = s
			return ok
		case "messageId":
			if string(val) == "null" {
				p.MessageID = nil
				return true
			}
			s, ok := scanString(val)
			p.MessageID = &s
			return ok
		case "_meta":
			p.Meta = val
			return true
		case "content":
			content = val
			p.Content = val
			return true
		}
		return plainOther(key, "sessionUpdate", "messageId", "_meta", "content")
	})
	if !okAll {
		return false
	}
	if (p.SessionUpdate != "agent_message_chunk" && p.SessionUpdate != "agent_thought_chunk") ||
		p.MessageID == nil || p.Meta != nil || content == nil {
		return true // not mergeable, whatever content holds
	}
	if len(content) == 0 || content[0] != '{' {
		return false // let json.Unmarshal say what content is
	}
	return members(content, func(key, val []byte) bool {
		switch string(key) {
		case "type":
			s, ok := scanString(val)
			c.Type = s
			return ok
		case "text":
			if string(val) == "null" {
				c.Text = nil
				return true
			}
			s, ok := scanString(val)
			c.Text = &s
			return ok
		case "annotations":
			c.Annotations = val
			return true
		case "_meta":
			c.Meta = val
			return true
		}
		return plainOther(key, "type", "text", "annotations", "_meta")
	})
}

// plainOther reports whether key, which is none of probed, is certain to
// match none of them in encoding/json (which matches keys without regard
// to case, Unicode folding included).
func plainOther(key []byte, probed ...string) bool {
	for _, b := range key {
		if b >= utf8.RuneSelf || b == '\\' {
			return false
		}
	}
	for _, p := range probed {
		if bytes.EqualFold(key, []byte(p)) {
			return false
		}
	}
	return true
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
// an object whose members it could walk and f returned true for each. It
// checks structure only as far as it needs to find the members' bounds:
// b is expected to be valid JSON (the session log's records are).
func members(b []byte, f func(key, val []byte) bool) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return len(b[skipSpace(b, i+1):]) == 0
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		kend := skipString(b, i)
		if kend < 0 {
			return false
		}
		key := b[i+1 : kend-1]
		i = skipSpace(b, kend)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		vend := skipValue(b, i)
		if vend < 0 {
			return false
		}
		if !f(key, b[i:vend]) {
			return false
		}
		i = skipSpace(b, vend)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return len(b[skipSpace(b, i+1):]) == 0
		default:
			return false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] ('"'),
// or -1.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
// Objects and arrays are skipped by bracket depth outside strings.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				k := skipString(b, j)
				if k < 0 {
					return -1
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
