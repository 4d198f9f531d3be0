package anthropic

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"acpd/internal/jsonscan"
	"acpd/model"
	"acpd/model/internal/sse"
)

type streamEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Usage *usage `json:"usage"`
	} `json:"message"`
	Index        *int          `json:"index"`
	ContentBlock *contentStart `json:"content_block"`
	Delta        *eventDelta   `json:"delta"`
	Usage        *usage        `json:"usage"`
	Error        *apiError     `json:"error"`
}

// eventDelta is a content_block_delta's or message_delta's delta.
type eventDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	StopReason  string `json:"stop_reason"`
	Citation    *struct {
		URL   string `json:"url"`
		Title string `json:"title"`
	} `json:"citation"`
}

type contentStart struct {
	Type     string `json:"type"`
	ID       string `json:"id"`
	Name     string `json:"name"`
	Text     string `json:"text"`
	Thinking string `json:"thinking"`
	Data     string `json:"data"`
	// Content is a web_search_tool_result's: a list of results, or an
	// error object.
	Content json.RawMessage `json:"content"`
}

// searchResult is one result of a web_search_tool_result block.
type searchResult struct {
	Type  string `json:"type"`
	URL   string `json:"url"`
	Title string `json:"title"`
}

// usage fields are pointers: message_delta repeats only some of them.
type usage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
}

// openBlock is a content block between its start and stop events.
type openBlock struct {
	typ       string // text, tool_use, thinking, redacted_thinking, or "" (ignored)
	id, name  string
	input     strings.Builder
	signature strings.Builder
	data      string
}

// decoder translates one Messages API stream. The zero value is ready; a
// decoder serves one stream.
type decoder struct {
	blocks                 map[int]*openBlock
	stop                   string
	input, output          int64
	cacheWrite, cacheRead  int64
	haveUsage, sawMsgStart bool

	// The fast path's state (fastEvent), reused from event to event.
	scan  jsonscan.Scanner
	se    streamEvent
	delta eventDelta
	index int
}

func malformed(msg string) error {
	return &model.Error{Kind: model.ErrServer, Message: "malformed stream: " + msg}
}

// Event implements [sse.Decoder].
func (d *decoder) Event(ev sse.Event, emit func(model.Event) bool) (done bool, err error) {
	se := &d.se
	if *se = (streamEvent{}); !d.fastEvent(ev.Data, se) {
		*se = streamEvent{}
		if err := json.Unmarshal([]byte(ev.Data), se); err != nil {
			return true, malformed(err.Error())
		}
	}
	if se.Type == "" {
		se.Type = ev.Event
	}
	return d.event(se, emit)
}

// End implements [sse.Decoder]: only message_stop completes a message.
func (d *decoder) End(func(model.Event) bool) error { return sse.Truncated() }

// event processes one stream event; done reports the end of the message.
func (d *decoder) event(se *streamEvent, emit func(model.Event) bool) (done bool, err error) {
	if d.blocks == nil {
		d.blocks = map[int]*openBlock{}
	}
	switch se.Type {
	case "message_start":
		d.sawMsgStart = true
		if se.Message != nil && se.Message.Usage != nil {
			d.addUsage(se.Message.Usage)
		}
	case "content_block_start":
		if se.Index == nil || se.ContentBlock == nil {
			return false, malformed("content_block_start without index or block")
		}
		cb := se.ContentBlock
		b := &openBlock{typ: cb.Type, id: cb.ID, name: cb.Name, data: cb.Data}
		d.blocks[*se.Index] = b
		switch cb.Type {
		case "text":
			if cb.Text != "" {
				return false, sse.Stopped(emit(model.Event{Type: model.EventText, Text: cb.Text}))
			}
		case "thinking":
			if cb.Thinking != "" {
				return false, sse.Stopped(emit(model.Event{Type: model.EventReasoning, Text: cb.Thinking}))
			}
		case "tool_use":
			return false, sse.Stopped(emit(model.Event{Type: model.EventToolStart, ToolCallID: cb.ID, ToolName: cb.Name}))
		case "redacted_thinking":
		case "server_tool_use":
			// The provider's web search: its query streams as input.
			if cb.Name != "web_search" {
				b.typ = ""
			}
		case "web_search_tool_result":
			b.typ = ""
			var results []searchResult
			if json.Unmarshal(cb.Content, &results) != nil {
				return false, nil // a web_search_tool_result_error: no sources
			}
			for _, r := range results {
				if r.URL != "" && !emit(model.Event{Type: model.EventSource, URL: r.URL, Text: r.Title}) {
					return false, sse.ErrStopped
				}
			}
		default:
			b.typ = "" // other server tool blocks and future types: not ours to report
		}
	case "content_block_delta":
		if se.Index == nil || se.Delta == nil {
			return false, malformed("content_block_delta without index or delta")
		}
		b := d.blocks[*se.Index]
		if b == nil {
			return false, malformed("delta for unknown block " + strconv.Itoa(*se.Index))
		}
		dl := se.Delta
		switch {
		case dl.Type == "text_delta" && b.typ == "text":
			if dl.Text != "" {
				return false, sse.Stopped(emit(model.Event{Type: model.EventText, Text: dl.Text}))
			}
		case dl.Type == "input_json_delta" && b.typ == "tool_use":
			b.input.WriteString(dl.PartialJSON)
			if dl.PartialJSON != "" {
				return false, sse.Stopped(emit(model.Event{Type: model.EventToolDelta, ToolCallID: b.id, Text: dl.PartialJSON}))
			}
		case dl.Type == "thinking_delta" && b.typ == "thinking":
			if dl.Thinking != "" {
				return false, sse.Stopped(emit(model.Event{Type: model.EventReasoning, Text: dl.Thinking}))
			}
		case dl.Type == "signature_delta" && b.typ == "thinking":
			b.signature.WriteString(dl.Signature)
		case dl.Type == "input_json_delta" && b.typ == "server_tool_use":
			b.input.WriteString(dl.PartialJSON)
		case dl.Type == "citations_delta" && dl.Citation != nil && dl.Citation.URL != "":
			return false, sse.Stopped(emit(model.Event{Type: model.EventSource, URL: dl.Citation.URL, Text: dl.Citation.Title}))
		}
		// Other deltas are not reported.
	case "content_block_stop":
		if se.Index == nil {
			return false, malformed("content_block_stop without index")
		}
		b := d.blocks[*se.Index]
		if b == nil {
			return false, malformed("stop for unknown block " + strconv.Itoa(*se.Index))
		}
		delete(d.blocks, *se.Index)
		return false, sse.Stopped(d.closeBlock(b, emit))
	case "message_delta":
		if se.Delta != nil && se.Delta.StopReason != "" {
			d.stop = se.Delta.StopReason
		}
		if se.Usage != nil {
			d.addUsage(se.Usage)
		}
	case "message_stop":
		if !d.sawMsgStart {
			return false, malformed("message_stop without message_start")
		}
		// Close blocks the server left open, in index order.
		for _, i := range slices.Sorted(maps.Keys(d.blocks)) {
			if !d.closeBlock(d.blocks[i], emit) {
				return false, sse.ErrStopped
			}
			delete(d.blocks, i)
		}
		return true, sse.Complete(emit, d.usage(), finishReason(d.stop))
	case "error":
		e := se.Error
		if e == nil {
			e = &apiError{Type: "api_error", Message: "unspecified stream error"}
		}
		return false, classify(0, nil, e)
	}
	// ping and unknown event types are ignored.
	return false, nil
}

// closeBlock emits the completion event of b, if it has one.
func (d *decoder) closeBlock(b *openBlock, emit func(model.Event) bool) bool {
	switch b.typ {
	case "tool_use":
		return emit(model.Event{Type: model.EventToolDone, ToolCallID: b.id, ToolName: b.name, Input: sse.ToolInput(b.input.String())})
	case "thinking":
		return emit(model.Event{Type: model.EventReasoningDone, Signature: b.signature.String(), Provider: Provider})
	case "redacted_thinking":
		opaque, _ := json.Marshal(b.data)
		return emit(model.Event{Type: model.EventReasoningDone, Redacted: true, Opaque: opaque, Provider: Provider})
	case "server_tool_use":
		var in struct {
			Query string `json:"query"`
		}
		if json.Unmarshal([]byte(b.input.String()), &in) == nil && in.Query != "" {
			return emit(model.Event{Type: model.EventSearch, Text: in.Query})
		}
	}
	return true
}

func (d *decoder) addUsage(u *usage) {
	d.haveUsage = true
	if u.InputTokens != nil {
		d.input = *u.InputTokens
	}
	if u.OutputTokens != nil {
		d.output = *u.OutputTokens
	}
	if u.CacheCreationInputTokens != nil {
		d.cacheWrite = *u.CacheCreationInputTokens
	}
	if u.CacheReadInputTokens != nil {
		d.cacheRead = *u.CacheReadInputTokens
	}
}

// usage returns the normalised usage, nil when the stream reported none;
// the API's input_tokens excludes the cached tokens, model.Usage's
// InputTokens includes them.
func (d *decoder) usage() *model.Usage {
	if !d.haveUsage {
		return nil
	}
	return &model.Usage{
		InputTokens:      d.input + d.cacheWrite + d.cacheRead,
		OutputTokens:     d.output,
		CacheReadTokens:  d.cacheRead,
		CacheWriteTokens: d.cacheWrite,
	}
}

// finishReason maps a stop_reason (see the package documentation).
func finishReason(stop string) model.FinishReason {
	switch stop {
	case "tool_use":
		return model.FinishToolUse
	case "max_tokens", "model_context_window_exceeded":
		return model.FinishMaxTokens
	case "refusal":
		return model.FinishRefusal
	}
	return model.FinishEndTurn
}
