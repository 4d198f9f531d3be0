package responses

import (
	"encoding/json"
	"errors"
	"strings"

	"acpd/model"
	"acpd/model/internal/openaierr"
	"acpd/model/internal/sse"
)

// streamEvent holds the fields of every stream event this decoder reads.
type streamEvent struct {
	Type         string          `json:"type"`
	Response     *responseObject `json:"response"`
	Item         json.RawMessage `json:"item"`
	ItemID       string          `json:"item_id"`
	SummaryIndex int             `json:"summary_index"`
	Delta        string          `json:"delta"`
	Arguments    *string         `json:"arguments"`
	Annotation   *annotation     `json:"annotation"`
}

// annotation is an output text annotation; url_citation names a source.
type annotation struct {
	Type  string `json:"type"`
	URL   string `json:"url"`
	Title string `json:"title"`
}

type responseObject struct {
	Status string `json:"status"`
	Error  *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Usage *usage `json:"usage"`
}

type usage struct {
	InputTokens        int64 `json:"input_tokens"`
	OutputTokens       int64 `json:"output_tokens"`
	InputTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// outputItem is a response output item (message, function_call,
// reasoning, or a type this decoder ignores).
type outputItem struct {
	Type             string  `json:"type"`
	ID               string  `json:"id"`
	CallID           string  `json:"call_id"`
	Name             string  `json:"name"`
	Arguments        string  `json:"arguments"`
	EncryptedContent *string `json:"encrypted_content"`
	Summary          []struct {
		Text string `json:"text"`
	} `json:"summary"`
	// Action is a web_search_call's: its query and the sources found.
	Action *struct {
		Type    string `json:"type"`
		Query   string `json:"query"`
		Sources []struct {
			URL string `json:"url"`
		} `json:"sources"`
	} `json:"action"`
	// Content is a message's: its text parts' annotations carry the
	// cited sources.
	Content []struct {
		Annotations []annotation `json:"annotations"`
	} `json:"content"`
}

// call is one function call between its added and done events.
type call struct {
	id, name string
	args     strings.Builder
	done     bool
}

// thought is one reasoning item between its added and done events.
type thought struct {
	text    bool // reasoning text was emitted
	summary int  // index of the last summary part streamed
	done    bool
}

// decoder translates one Responses API stream. The zero value is ready; a
// decoder serves one stream.
type decoder struct {
	calls    []*call
	byItem   map[string]*call
	thoughts map[string]*thought
	order    []string // reasoning item ids in order
	refusal  bool
}

func malformed(msg string) error {
	return &model.Error{Kind: model.ErrServer, Message: "malformed stream: " + msg}
}

// handled reports whether the decoder reads events of type t; others are
// ignored, whatever their shape.
func handled(t string) bool {
	switch t {
	case "response.output_item.added",
		"response.output_item.done",
		"response.output_text.delta",
		"response.refusal.delta",
		"response.reasoning_summary_text.delta",
		"response.reasoning_text.delta",
		"response.function_call_arguments.delta",
		"response.function_call_arguments.done",
		"response.output_text.annotation.added",
		"response.completed",
		"response.incomplete",
		"response.failed",
		"error":
		return true
	}
	return false
}

// Event implements [sse.Decoder].
func (d *decoder) Event(ev sse.Event, emit func(model.Event) bool) (done bool, err error) {
	data := ev.Data
	if data == "[DONE]" {
		return false, nil
	}
	var se streamEvent
	err = json.Unmarshal([]byte(data), &se)
	if se.Type == "" {
		se.Type = ev.Event
	}
	if err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && !handled(se.Type) {
			return false, nil // an event of a type we do not read
		}
		return true, malformed(err.Error())
	}
	return d.event(&se, []byte(data), emit)
}

// End implements [sse.Decoder]: only response.completed, .incomplete or
// .failed ends a response.
func (d *decoder) End(func(model.Event) bool) error { return sse.Truncated() }

// event processes one stream event; done reports the end of the response.
func (d *decoder) event(se *streamEvent, raw []byte, emit func(model.Event) bool) (done bool, err error) {
	if d.byItem == nil {
		d.byItem, d.thoughts = map[string]*call{}, map[string]*thought{}
	}
	switch se.Type {
	case "response.output_item.added":
		var it outputItem
		if err := json.Unmarshal(se.Item, &it); err != nil {
			return false, malformed("output_item.added: " + err.Error())
		}
		switch it.Type {
		case "function_call":
			return false, sse.Stopped(d.startCall(&it, emit))
		case "reasoning":
			d.thought(it.ID)
		}
	case "response.output_text.delta":
		if se.Delta != "" {
			return false, sse.Stopped(emit(model.Event{Type: model.EventText, Text: se.Delta}))
		}
	case "response.refusal.delta":
		d.refusal = true
		if se.Delta != "" {
			return false, sse.Stopped(emit(model.Event{Type: model.EventText, Text: se.Delta}))
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if se.Delta == "" {
			return false, nil
		}
		t := d.thought(se.ItemID)
		text := se.Delta
		if se.Type == "response.reasoning_summary_text.delta" && se.SummaryIndex > t.summary {
			if t.text {
				text = "\n\n" + text // a new summary part
			}
			t.summary = se.SummaryIndex
		}
		t.text = true
		return false, sse.Stopped(emit(model.Event{Type: model.EventReasoning, Text: text}))
	case "response.function_call_arguments.delta":
		c := d.byItem[se.ItemID]
		if c == nil || c.done || se.Delta == "" {
			return false, nil // the item's done event will carry everything
		}
		c.args.WriteString(se.Delta)
		return false, sse.Stopped(emit(model.Event{Type: model.EventToolDelta, ToolCallID: c.id, Text: se.Delta}))
	case "response.function_call_arguments.done":
		c := d.byItem[se.ItemID]
		if c == nil || c.done {
			return false, nil
		}
		if se.Arguments != nil {
			c.args.Reset()
			c.args.WriteString(*se.Arguments)
		}
		return false, sse.Stopped(d.finishCall(c, emit))
	case "response.output_item.done":
		var it outputItem
		if err := json.Unmarshal(se.Item, &it); err != nil {
			return false, malformed("output_item.done: " + err.Error())
		}
		switch it.Type {
		case "function_call":
			c := d.byItem[it.ID]
			if c == nil {
				if !d.startCall(&it, emit) {
					return false, sse.ErrStopped
				}
				c = d.byItem[it.ID]
			}
			if c.done {
				return false, nil
			}
			c.args.Reset()
			c.args.WriteString(it.Arguments)
			return false, sse.Stopped(d.finishCall(c, emit))
		case "reasoning":
			return false, sse.Stopped(d.finishThought(&it, se.Item, emit))
		case "web_search_call":
			if a := it.Action; a != nil && a.Type == "search" {
				if a.Query != "" && !emit(model.Event{Type: model.EventSearch, Text: a.Query}) {
					return false, sse.ErrStopped
				}
				for _, src := range a.Sources {
					if src.URL != "" && !emit(model.Event{Type: model.EventSource, URL: src.URL}) {
						return false, sse.ErrStopped
					}
				}
			}
		case "message":
			for _, c := range it.Content {
				for _, an := range c.Annotations {
					if an.Type == "url_citation" && an.URL != "" && !emit(model.Event{Type: model.EventSource, URL: an.URL, Text: an.Title}) {
						return false, sse.ErrStopped
					}
				}
			}
		}
	case "response.output_text.annotation.added":
		if an := se.Annotation; an != nil && an.Type == "url_citation" && an.URL != "" {
			return false, sse.Stopped(emit(model.Event{Type: model.EventSource, URL: an.URL, Text: an.Title}))
		}
	case "response.completed", "response.incomplete":
		if !d.closeAll(emit) {
			return false, sse.ErrStopped
		}
		finish := d.finishReason()
		var u *model.Usage
		if r := se.Response; r != nil && r.Usage != nil {
			u = r.Usage.normalise()
		}
		if r := se.Response; r != nil {
			if se.Type == "response.incomplete" {
				finish = model.FinishMaxTokens
				if r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "content_filter" {
					finish = model.FinishRefusal
				}
			}
		}
		return true, sse.Complete(emit, u, finish)
	case "response.failed":
		e := &openaierr.APIError{Message: "the response failed"}
		if r := se.Response; r != nil && r.Error != nil {
			e = &openaierr.APIError{Code: r.Error.Code, Message: r.Error.Message}
		}
		return false, classify(e)
	case "error":
		e := openaierr.Parse(raw)
		if e == nil {
			e = &openaierr.APIError{Message: "unspecified stream error"}
		}
		return false, classify(e)
	}
	// response.created, in_progress, content_part and summary_part events,
	// text done events and unknown types carry nothing new.
	return false, nil
}

// classify classifies an error reported inside the stream. Codes naming a
// defect of the input (invalid_prompt, invalid_image, image_too_large,
// unsupported_image_media_type, ...) are not retryable.
func classify(e *openaierr.APIError) error {
	code := strings.ToLower(e.Code)
	if e.Type == "" || e.Type == "error" {
		if strings.HasPrefix(code, "invalid_") || strings.Contains(code, "image") || strings.HasPrefix(code, "unsupported_") || strings.HasPrefix(code, "empty_") {
			e.Type = "invalid_request_error"
		}
	}
	return openaierr.Classify(0, nil, e)
}

func (d *decoder) thought(id string) *thought {
	t := d.thoughts[id]
	if t == nil {
		t = &thought{}
		d.thoughts[id] = t
		d.order = append(d.order, id)
	}
	return t
}

// startCall announces a function call item.
func (d *decoder) startCall(it *outputItem, emit func(model.Event) bool) bool {
	if c := d.byItem[it.ID]; c != nil {
		return true // announced already
	}
	id := it.CallID
	if id == "" {
		id = it.ID
	}
	c := &call{id: id, name: it.Name}
	d.calls = append(d.calls, c)
	d.byItem[it.ID] = c
	if !emit(model.Event{Type: model.EventToolStart, ToolCallID: c.id, ToolName: c.name}) {
		return false
	}
	if it.Arguments != "" {
		c.args.WriteString(it.Arguments)
		return emit(model.Event{Type: model.EventToolDelta, ToolCallID: c.id, Text: it.Arguments})
	}
	return true
}

func (d *decoder) finishCall(c *call, emit func(model.Event) bool) bool {
	c.done = true
	return emit(model.Event{Type: model.EventToolDone, ToolCallID: c.id, ToolName: c.name, Input: sse.ToolInput(c.args.String())})
}

// finishThought ends a reasoning item: its summary is reported if it was
// not streamed, and its encrypted content kept as Opaque.
func (d *decoder) finishThought(it *outputItem, raw json.RawMessage, emit func(model.Event) bool) bool {
	t := d.thought(it.ID)
	if t.done {
		return true
	}
	t.done = true
	if !t.text {
		var texts []string
		for _, s := range it.Summary {
			if s.Text != "" {
				texts = append(texts, s.Text)
			}
		}
		if len(texts) > 0 {
			t.text = true
			if !emit(model.Event{Type: model.EventReasoning, Text: strings.Join(texts, "\n\n")}) {
				return false
			}
		}
	}
	encrypted := it.EncryptedContent != nil && *it.EncryptedContent != ""
	if !t.text && !encrypted {
		return true // nothing to report or keep
	}
	ev := model.Event{Type: model.EventReasoningDone}
	if encrypted {
		ev.Opaque = raw // json.Unmarshal copied it out of the event
		ev.Redacted = !t.text
		ev.Provider = Provider
	}
	return emit(ev)
}

// closeAll completes the calls and reasoning the server left open.
func (d *decoder) closeAll(emit func(model.Event) bool) bool {
	for _, id := range d.order {
		if t := d.thoughts[id]; !t.done && t.text {
			t.done = true
			if !emit(model.Event{Type: model.EventReasoningDone}) {
				return false
			}
		}
	}
	for _, c := range d.calls {
		if !c.done && !d.finishCall(c, emit) {
			return false
		}
	}
	return true
}

// finishReason is the finish of a completed response.
func (d *decoder) finishReason() model.FinishReason {
	return sse.Finish(len(d.calls) > 0, d.refusal)
}

func (u *usage) normalise() *model.Usage {
	n := &model.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	if d := u.InputTokensDetails; d != nil {
		n.CacheReadTokens = d.CachedTokens
	}
	if d := u.OutputTokensDetails; d != nil {
		n.ReasoningTokens = d.ReasoningTokens
	}
	return n
}
