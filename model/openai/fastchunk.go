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
		case "usage":
			if !seen.First(2) {
				return false
			}
			c.Usage = nil
			if sc.Null() {
				return true
			}
			c.Usage = new(usage)
			return d.fastUsage(c.Usage)
		case "error", "x_groq":
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
			if !seen.First(16) {
				return false
			}
			dl.ToolCalls = nil
			if sc.Null() {
				return true
			}
			calls := []toolCallDelta{}
			ok := sc.Array(func() bool {
				calls = append(calls, toolCallDelta{})
				return d.fastToolCall(&calls[len(calls)-1])
			})
			dl.ToolCalls = calls
			return ok
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

// fastToolCall reads one element of a delta's tool_calls: a call's start
// (its id and name) or a piece of its arguments.
func (d *decoder) fastToolCall(tc *toolCallDelta) bool {
	sc := &d.scan
	var seen jsonscan.Seen
	str := func(bit uint8, to *string) bool {
		if !seen.First(bit) {
			return false
		}
		if sc.Null() {
			return true
		}
		s, ok := sc.String()
		*to = strings.Clone(s)
		return ok
	}
	return sc.Object(func(key string) bool {
		switch key {
		case "index":
			if !seen.First(1) {
				return false
			}
			tc.Index = nil
			if sc.Null() {
				return true
			}
			n, ok := sc.Int()
			tc.Index = &n
			return ok
		case "id":
			return str(2, &tc.ID)
		case "function":
			if !seen.First(4) {
				return false
			}
			if sc.Null() {
				return true
			}
			var fseen jsonscan.Seen
			return sc.Object(func(key string) bool {
				switch key {
				case "name":
					return fseen.First(1) && str(8, &tc.Function.Name)
				case "arguments":
					return fseen.First(2) && str(16, &tc.Function.Arguments)
				}
				return !jsonscan.FoldsTo(key, "name", "arguments") && sc.Skip()
			})
		}
		return !jsonscan.FoldsTo(key, "index", "id", "function") && sc.Skip()
	})
}

// fastUsage reads a chunk's usage.
func (d *decoder) fastUsage(u *usage) bool {
	sc := &d.scan
	var seen jsonscan.Seen
	num := func(bit uint8, to *int64) bool {
		if !seen.First(bit) {
			return false
		}
		if sc.Null() {
			return true
		}
		n, ok := sc.Int()
		*to = int64(n)
		return ok
	}
	// details reads {"key": N} (or null) into *to.
	details := func(bit uint8, key string, to **int64) bool {
		if !seen.First(bit) {
			return false
		}
		*to = nil
		if sc.Null() {
			return true
		}
		n := new(int64)
		*to = n
		var dseen jsonscan.Seen
		return sc.Object(func(k string) bool {
			if k == key {
				if !dseen.First(1) {
					return false
				}
				if sc.Null() {
					return true
				}
				v, ok := sc.Int()
				*n = int64(v)
				return ok
			}
			return !jsonscan.FoldsTo(k, key) && sc.Skip()
		})
	}
	return sc.Object(func(key string) bool {
		switch key {
		case "prompt_tokens":
			return num(1, &u.PromptTokens)
		case "completion_tokens":
			return num(2, &u.CompletionTokens)
		case "prompt_cache_hit_tokens":
			return num(4, &u.PromptCacheHitTokens)
		case "prompt_tokens_details":
			var p *int64
			if !details(8, "cached_tokens", &p) {
				return false
			}
			if p != nil {
				u.PromptTokensDetails = &struct {
					CachedTokens int64 `json:"cached_tokens"`
				}{*p}
			}
			return true
		case "completion_tokens_details":
			var p *int64
			if !details(16, "reasoning_tokens", &p) {
				return false
			}
			if p != nil {
				u.CompletionTokensDetails = &struct {
					ReasoningTokens int64 `json:"reasoning_tokens"`
				}{*p}
			}
			return true
		}
		return !jsonscan.FoldsTo(key, "prompt_tokens", "completion_tokens", "prompt_cache_hit_tokens", "prompt_tokens_details", "completion_tokens_details") && sc.Skip()
	})
}
