package anthropic

import (
	"strings"

	"acpd/internal/jsonscan"
)

// fastEvent decodes data into se as encoding/json would, for the shape of
// almost every event of a stream: a content_block_delta (text, thinking,
// a tool's input, a signature) or a content_block_stop. It reports false
// for anything else (a citation, usage, an error, a block's start, a
// repeated member, a member named like a known one but for case, which
// encoding/json would take; text that is not JSON), and then se is to be
// decoded with encoding/json instead. Strings are copied out of data; se
// points into the decoder's state until the next event.
func (d *decoder) fastEvent(data string, se *streamEvent) bool {
	sc := &d.scan
	sc.Reset(data)
	var seen jsonscan.Seen
	ok := sc.Object(func(key string) bool {
		switch key {
		case "type":
			return seen.First(1) && str(sc, &se.Type)
		case "index":
			if !seen.First(2) {
				return false
			}
			if sc.Null() {
				return true
			}
			n, ok := sc.Int()
			d.index, se.Index = n, &d.index
			return ok
		case "delta":
			if !seen.First(4) {
				return false
			}
			if sc.Null() {
				return true
			}
			d.delta = eventDelta{}
			se.Delta = &d.delta
			return d.fastDelta(&d.delta)
		case "message", "content_block", "usage", "error":
			return sc.Null()
		}
		return !jsonscan.FoldsTo(key, "type", "index", "delta", "message", "content_block", "usage", "error") && sc.Skip()
	})
	return ok && sc.End()
}

func (d *decoder) fastDelta(dl *eventDelta) bool {
	sc := &d.scan
	var seen jsonscan.Seen
	field := func(bit uint8, to *string) bool {
		if !seen.First(bit) {
			return false
		}
		return str(sc, to)
	}
	return sc.Object(func(key string) bool {
		switch key {
		case "type":
			return field(1, &dl.Type)
		case "text":
			return field(2, &dl.Text)
		case "partial_json":
			return field(4, &dl.PartialJSON)
		case "thinking":
			return field(8, &dl.Thinking)
		case "signature":
			return field(16, &dl.Signature)
		case "stop_reason":
			return field(32, &dl.StopReason)
		case "citation":
			return seen.First(64) && sc.Null()
		}
		return !jsonscan.FoldsTo(key, "type", "text", "partial_json", "thinking", "signature", "stop_reason", "citation") && sc.Skip()
	})
}

// str reads a string, or null (which leaves *to as it is, as
// encoding/json does), copied out of the text read.
func str(sc *jsonscan.Scanner, to *string) bool {
	if sc.Null() {
		return true
	}
	s, ok := sc.String()
	if ok {
		*to = strings.Clone(s)
	}
	return ok
}
