package openai

import (
	"encoding/json"
	"strconv"
	"strings"

	"acpd/internal/jsonscan"
	"acpd/model"
	"acpd/model/internal/sse"
)

type chunk struct {
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
	XGroq   *struct {
		Usage *usage `json:"usage"`
	} `json:"x_groq"`
}

type choice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Content *string `json:"content"`
	Refusal *string `json:"refusal"`
	// ReasoningContent is DeepSeek's, vLLM's and llama.cpp's reasoning
	// field, Reasoning OpenRouter's and Ollama's.
	ReasoningContent *string         `json:"reasoning_content"`
	Reasoning        *string         `json:"reasoning"`
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	// DeepSeek reports cache hits here.
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"`
}

func (u *usage) normalise() *model.Usage {
	n := &model.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CacheReadTokens: u.PromptCacheHitTokens}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens > 0 {
		n.CacheReadTokens = d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		n.ReasoningTokens = d.ReasoningTokens
	}
	return n
}

// toolCall accumulates one streamed tool call.
type toolCall struct {
	index   int
	id      string
	name    string
	args    strings.Builder
	started bool
}

// decoder translates one Chat Completions stream. The zero value plus an
// idPrefix is ready to use; a decoder serves one stream.
type decoder struct {
	// idPrefix names tool calls whose id the server omitted: idPrefix+index.
	idPrefix string

	calls     []*toolCall
	reasoning bool // a reasoning block is open

	// The fast path's state (fastChunk), reused from chunk to chunk.
	scan    jsonscan.Scanner
	c       chunk
	choices [1]choice
	texts   [4]string // content, refusal and the two reasoning fields
	reason  string    // finish_reason

	refusal  bool // refusal text was streamed
	finished bool // a finish_reason arrived
	finish   string
	usage    *model.Usage
}

// Event implements [sse.Decoder].
func (d *decoder) Event(ev sse.Event, emit func(model.Event) bool) (done bool, err error) {
	data := ev.Data
	if data == "[DONE]" {
		if !d.finished && !d.finishNow("", emit) {
			return true, sse.ErrStopped
		}
		return true, d.End(emit)
	}
	if ev.Event == "error" {
		return true, streamError(data, data)
	}
	c := &d.c
	if *c = (chunk{}); !d.fastChunk(data, c) {
		*c = chunk{}
		if err := sse.Unmarshal(data, c); err != nil {
			return true, err
		}
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return true, streamError(data, string(c.Error))
	}
	return false, sse.Stopped(d.chunk(c, emit))
}

// streamError classifies the error a chunk reports inside the stream;
// message stands in for an error body that does not parse.
func streamError(data, message string) error {
	e := parseAPIError([]byte(data))
	if e == nil {
		e = &apiError{Message: message}
	}
	return classify(0, nil, e)
}

// End implements [sse.Decoder]: a stream that ends after the finish reason
// without [DONE] is complete.
func (d *decoder) End(emit func(model.Event) bool) error {
	if !d.finished {
		return sse.Truncated()
	}
	return sse.Complete(emit, d.usage, d.finishReason())
}

// chunk processes one decoded chunk; false means the consumer stopped.
func (d *decoder) chunk(c *chunk, emit func(model.Event) bool) bool {
	if c.Usage != nil {
		d.usage = c.Usage.normalise()
	} else if c.XGroq != nil && c.XGroq.Usage != nil {
		d.usage = c.XGroq.Usage.normalise()
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 || d.finished {
			continue // we ask for one choice; nothing follows its finish
		}
		dl := &ch.Delta
		reasoning := dl.ReasoningContent
		if reasoning == nil || *reasoning == "" {
			reasoning = dl.Reasoning
		}
		if reasoning != nil && *reasoning != "" {
			d.reasoning = true
			if !emit(model.Event{Type: model.EventReasoning, Text: *reasoning}) {
				return false
			}
		}
		if dl.Content != nil && *dl.Content != "" {
			if !d.closeReasoning(emit) || !emit(model.Event{Type: model.EventText, Text: *dl.Content}) {
				return false
			}
		}
		if dl.Refusal != nil && *dl.Refusal != "" {
			d.refusal = true
			if !d.closeReasoning(emit) || !emit(model.Event{Type: model.EventText, Text: *dl.Refusal}) {
				return false
			}
		}
		for j := range dl.ToolCalls {
			if !d.closeReasoning(emit) || !d.toolDelta(&dl.ToolCalls[j], emit) {
				return false
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			if !d.finishNow(*ch.FinishReason, emit) {
				return false
			}
		}
	}
	return true
}

func (d *decoder) closeReasoning(emit func(model.Event) bool) bool {
	if !d.reasoning {
		return true
	}
	d.reasoning = false
	return emit(model.Event{Type: model.EventReasoningDone})
}

// toolDelta applies one tool call fragment. Calls are keyed by index; a
// fragment without index (some compatible servers) continues the last call
// unless it carries a new id.
func (d *decoder) toolDelta(td *toolCallDelta, emit func(model.Event) bool) bool {
	var call *toolCall
	if td.Index != nil {
		for _, c := range d.calls {
			if c.index == *td.Index {
				call = c
				break
			}
		}
	} else if n := len(d.calls); n > 0 && (td.ID == "" || td.ID == d.calls[n-1].id) {
		call = d.calls[n-1]
	}
	if call == nil {
		idx := len(d.calls)
		if td.Index != nil {
			idx = *td.Index
		}
		call = &toolCall{index: idx}
		d.calls = append(d.calls, call)
	}
	if call.id == "" {
		call.id = td.ID
	}
	if call.name == "" {
		call.name = td.Function.Name
	}
	call.args.WriteString(td.Function.Arguments)
	if !call.started {
		if call.name == "" {
			return true // wait for the name before announcing the call
		}
		return d.start(call, emit)
	}
	if td.Function.Arguments != "" {
		return emit(model.Event{Type: model.EventToolDelta, ToolCallID: call.id, Text: td.Function.Arguments})
	}
	return true
}

// start announces call and sends the arguments received so far.
func (d *decoder) start(call *toolCall, emit func(model.Event) bool) bool {
	call.started = true
	if call.id == "" {
		call.id = d.idPrefix + strconv.Itoa(call.index)
	}
	if !emit(model.Event{Type: model.EventToolStart, ToolCallID: call.id, ToolName: call.name}) {
		return false
	}
	if call.args.Len() > 0 {
		return emit(model.Event{Type: model.EventToolDelta, ToolCallID: call.id, Text: call.args.String()})
	}
	return true
}

// finishNow closes open blocks and completes every tool call.
func (d *decoder) finishNow(reason string, emit func(model.Event) bool) bool {
	d.finished = true
	d.finish = reason
	if !d.closeReasoning(emit) {
		return false
	}
	for _, c := range d.calls {
		if !c.started && !d.start(c, emit) {
			return false
		}
		if !emit(model.Event{Type: model.EventToolDone, ToolCallID: c.id, ToolName: c.name, Input: sse.ToolInput(c.args.String())}) {
			return false
		}
	}
	return true
}

// finishReason maps the server's finish_reason. Servers differ in what
// they report with tool calls ("tool_calls", "function_call", "stop"), so
// any response with tool calls that was not cut short finishes with
// tool_use; a streamed refusal finishes with refusal.
func (d *decoder) finishReason() model.FinishReason {
	switch d.finish {
	case "length":
		return model.FinishMaxTokens
	case "content_filter":
		return model.FinishRefusal
	}
	return sse.Finish(len(d.calls) > 0, d.refusal)
}
