package gemini

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"acpd/model"
	"acpd/model/internal/sse"
)

// response is one streamed GenerateContentResponse.
type response struct {
	Candidates     []candidate `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *usageMetadata `json:"usageMetadata"`
	// Error is set when the server fails after the stream began.
	Error json.RawMessage `json:"error"`
}

type candidate struct {
	Content *struct {
		Parts []part `json:"parts"`
	} `json:"content"`
	FinishReason  string `json:"finishReason"`
	FinishMessage string `json:"finishMessage"`
	Index         int    `json:"index"`
	// GroundingMetadata is Google Search grounding's: the queries run
	// and the pages found.
	GroundingMetadata *struct {
		WebSearchQueries []string `json:"webSearchQueries"`
		GroundingChunks  []struct {
			Web *struct {
				URI   string `json:"uri"`
				Title string `json:"title"`
			} `json:"web"`
		} `json:"groundingChunks"`
	} `json:"groundingMetadata"`
}

type usageMetadata struct {
	PromptTokenCount        int64 `json:"promptTokenCount"`
	CandidatesTokenCount    int64 `json:"candidatesTokenCount"`
	CachedContentTokenCount int64 `json:"cachedContentTokenCount"`
	ThoughtsTokenCount      int64 `json:"thoughtsTokenCount"`
}

// decoder translates one streamGenerateContent stream. The zero value plus
// an idPrefix is ready to use; a decoder serves one stream.
type decoder struct {
	// idPrefix names function calls Gemini sent without an id:
	// idPrefix+their index in the response.
	idPrefix string

	calls     int  // function calls seen
	reasoning bool // a thought is open
	finished  bool // a finish reason (or a blocked prompt) arrived
	finish    string
	blocked   bool
	usage     *model.Usage
}

// Event implements [sse.Decoder].
func (d *decoder) Event(ev sse.Event, emit func(model.Event) bool) (done bool, err error) {
	if ev.Data == "[DONE]" {
		return false, nil
	}
	var resp response
	if err := sse.Unmarshal(ev.Data, &resp); err != nil {
		return true, err
	}
	if len(resp.Error) > 0 && string(resp.Error) != "null" {
		e := parseAPIError([]byte(ev.Data))
		if e == nil {
			e = &apiError{Message: string(resp.Error)}
		}
		return true, classify(0, nil, e)
	}
	return false, sse.Stopped(d.chunk(&resp, emit))
}

// End implements [sse.Decoder]: Gemini's stream simply ends after the
// finish reason (and the usage that may follow it). It fails for finish
// reasons that leave no usable answer.
func (d *decoder) End(emit func(model.Event) bool) error {
	if !d.finished {
		return sse.Truncated()
	}
	switch d.finish {
	case "MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS":
		return &model.Error{Kind: model.ErrServer, Message: "the model's response ended with " + d.finish}
	}
	return sse.Complete(emit, d.usage, d.finishReason())
}

// chunk processes one response; false means the consumer stopped.
func (d *decoder) chunk(resp *response, emit func(model.Event) bool) bool {
	if u := resp.UsageMetadata; u != nil {
		d.usage = &model.Usage{
			InputTokens:     u.PromptTokenCount,
			OutputTokens:    u.CandidatesTokenCount + u.ThoughtsTokenCount,
			CacheReadTokens: u.CachedContentTokenCount,
			ReasoningTokens: u.ThoughtsTokenCount,
		}
	}
	for i := range resp.Candidates {
		if g := resp.Candidates[i].GroundingMetadata; g != nil && resp.Candidates[i].Index == 0 {
			// Grounding may come with the finish or after it.
			for _, q := range g.WebSearchQueries {
				if q != "" && !emit(model.Event{Type: model.EventSearch, Text: q}) {
					return false
				}
			}
			for _, c := range g.GroundingChunks {
				if c.Web != nil && c.Web.URI != "" && !emit(model.Event{Type: model.EventSource, URL: c.Web.URI, Text: c.Web.Title}) {
					return false
				}
			}
		}
	}
	if d.finished {
		return true // only usage and grounding may follow the finish
	}
	if pf := resp.PromptFeedback; pf != nil && pf.BlockReason != "" && pf.BlockReason != "BLOCK_REASON_UNSPECIFIED" {
		d.finished, d.blocked = true, true
		return d.closeReasoning(emit)
	}
	for i := range resp.Candidates {
		c := &resp.Candidates[i]
		if c.Index != 0 {
			continue // we ask for one candidate
		}
		if c.Content != nil {
			for j := range c.Content.Parts {
				if !d.part(&c.Content.Parts[j], emit) {
					return false
				}
			}
		}
		if c.FinishReason != "" && c.FinishReason != "FINISH_REASON_UNSPECIFIED" {
			d.finished, d.finish = true, c.FinishReason
			return d.closeReasoning(emit)
		}
	}
	return true
}

// part processes one content part.
func (d *decoder) part(p *part, emit func(model.Event) bool) bool {
	sig := p.ThoughtSignature
	switch {
	case p.FunctionCall != nil:
		if !d.closeReasoning(emit) {
			return false
		}
		return d.call(p.FunctionCall, sig, emit)
	case p.Thought:
		if p.Text != nil && *p.Text != "" {
			d.reasoning = true
			if !emit(model.Event{Type: model.EventReasoning, Text: *p.Text}) {
				return false
			}
		}
		if sig != "" {
			d.reasoning = false
			return emit(model.Event{Type: model.EventReasoningDone, Signature: sig, Provider: Provider})
		}
	case p.Text != nil && *p.Text != "":
		if !d.closeReasoning(emit) || !emit(model.Event{Type: model.EventText, Text: *p.Text}) {
			return false
		}
		if sig != "" {
			return emit(model.Event{Type: model.EventReasoningDone, Signature: sig, Provider: Provider})
		}
	case sig != "":
		// An empty part carrying a signature ends the open thought, or
		// belongs to the text before it.
		d.reasoning = false
		return emit(model.Event{Type: model.EventReasoningDone, Signature: sig, Provider: Provider})
	}
	// Other parts (executable code, inline data, empty text) are not ours
	// to report.
	return true
}

// call reports one whole function call.
func (d *decoder) call(fc *functionCall, sig string, emit func(model.Event) bool) bool {
	id := fc.ID
	if id == "" {
		id = d.idPrefix + strconv.Itoa(d.calls)
	}
	d.calls++
	args := toolInput(fc.Args)
	if !emit(model.Event{Type: model.EventToolStart, ToolCallID: id, ToolName: fc.Name}) ||
		!emit(model.Event{Type: model.EventToolDelta, ToolCallID: id, Text: string(args)}) {
		return false
	}
	done := model.Event{Type: model.EventToolDone, ToolCallID: id, ToolName: fc.Name, Input: args}
	if sig != "" {
		done.Signature, done.Provider = sig, Provider
	}
	return emit(done)
}

func (d *decoder) closeReasoning(emit func(model.Event) bool) bool {
	if !d.reasoning {
		return true
	}
	d.reasoning = false
	return emit(model.Event{Type: model.EventReasoningDone})
}

// finishReason maps the finish reason (see the package documentation).
func (d *decoder) finishReason() model.FinishReason {
	if d.blocked {
		return model.FinishRefusal
	}
	switch d.finish {
	case "MAX_TOKENS":
		return model.FinishMaxTokens
	case "SAFETY", "RECITATION", "LANGUAGE", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
		"IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION":
		return model.FinishRefusal
	}
	if d.calls > 0 {
		return model.FinishToolUse
	}
	return model.FinishEndTurn
}

// toolInput returns a function call's arguments as tool input: {} when
// absent or null, otherwise the arguments (the server's JSON, valid by
// construction) compacted.
func toolInput(args json.RawMessage) json.RawMessage {
	a := strings.TrimSpace(string(args))
	if a == "" || a == "null" {
		return json.RawMessage("{}")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(a)); err != nil {
		return json.RawMessage("{}")
	}
	return buf.Bytes()
}
