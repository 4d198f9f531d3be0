package openai

import (
	"strings"

	"acpd/internal/jsonscan"
)

// fastChunk decodes data into c as encoding/json would, for the shape of
// almost every chunk of a stream: one choice whose delta holds text,
// reasoning or a refusal, a finish reason, members the decoder does not
// read (skipped, but checked to be JSON), and null usage or error. It
// reports false for anything else (a tool call's delta, usage, an error,
// a second choice, a repeated member, a member named like a known one
// but for case, which encoding/json would take; text that is not JSON),
// and then c is to be decoded with encoding/json instead. The texts are
// copied out of data; the decoder keeps the strings c points to until
// the next chunk.
func (d *decoder) fastChunk(data string, c *chunk) bool {
	sc := &d.scan
	sc.Reset(data)
	var seen jsonscan.Seen
	ok := sc.Object(func(key string) bool {
		switch key {
		case "choices":
			if !seen.First(1) {
				return false
			}
			c.Choices = d.choices[:0]
			return sc.Array(func() bool {
				if len(c.Choices) == 1 {
					return false
				}
				c.Choices = append(c.Choices, choice{})
				return d.fastChoice(&c.Choices[0])
			})
		case "usage", "error", "x_groq":
			// null is the same as absent for each.
			return sc.Null()
		}
		return !jsonscan.FoldsTo(key, "choices", "usage", "error", "x_groq") && sc.Skip()
	})
	return ok && sc.End()
}

func (d *decoder) fastChoice(ch *choice) bool {
	sc := &d.scan
	var seen jsonscan.Seen
	return sc.Object(func(key string) bool {
		switch key {
		case "index":
			n, ok := sc.Int()
			ch.Index = n
			return seen.First(1) && ok
		case "delta":
			return seen.First(2) && (sc.Null() || d.fastDelta(&ch.Delta))
		case "finish_reason":
			if !seen.First(4) {
				return false
			}
			ch.FinishReason = nil
			return sc.Null() || d.text(&d.reason, &ch.FinishReason)
		}
		return !jsonscan.FoldsTo(key, "index", "delta", "finish_reason") && sc.Skip()
	})
}

func (d *decoder) fastDelta(dl *delta) bool {
	sc := &d.scan
	var seen jsonscan.Seen
	field := func(bit uint8, slot *string, p **string) bool {
		if !seen.First(bit) {
			return false
		}
		*p = nil
		return sc.Null() || d.text(slot, p)
	}
	return sc.Object(func(key string) bool {
		switch key {
		case "content":
			return field(1, &d.texts[0], &dl.Content)
		case "refusal":
			return field(2, &d.texts[1], &dl.Refusal)
		case "reasoning_content":
			return field(4, &d.texts[2], &dl.ReasoningContent)
		case "reasoning":
			return field(8, &d.texts[3], &dl.Reasoning)
		case "tool_calls":
			return seen.First(16) && sc.Null()
		}
		return !jsonscan.FoldsTo(key, "content", "refusal", "reasoning_content", "reasoning", "tool_calls") && sc.Skip()
	})
}

// text reads a string into *slot, copied out of the chunk, and points p
// at it.
func (d *decoder) text(slot *string, p **string) bool {
	s, ok := d.scan.String()
	if !ok {
		return false
	}
	*slot = strings.Clone(s)
	*p = slot
	return true
}
