package responses

import (
	"encoding/json"
	"strings"

	"acpd/model"
	"acpd/model/internal/body"
	"acpd/model/internal/sse"
)

type responsesRequest struct {
	Model        string `json:"model"`
	Instructions string `json:"instructions,omitempty"`
	// Input is a [body.Builder.Array] of the messages' fragments.
	Input json.RawMessage `json:"input"`
	// Tools is a [body.Builder.Array] of the tools' fragment (kept by the
	// Backend's [body.ToolMemo]), or empty.
	Tools           json.RawMessage `json:"tools,omitempty"`
	Stream          bool            `json:"stream"`
	Store           bool            `json:"store"`
	Include         []string        `json:"include"`
	MaxOutputTokens int             `json:"max_output_tokens,omitempty"`
	Reasoning       *reasoning      `json:"reasoning,omitempty"`
}

type reasoning struct {
	Effort  string `json:"effort"`
	Summary string `json:"summary"`
}

// tool is a function tool, or (type web_search, no name) the provider's
// web search.
type tool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name,omitempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// messageItem is a user or assistant message input item.
type messageItem struct {
	Type    string        `json:"type"`
	Role    string        `json:"role"`
	Content []contentPart `json:"content"`
}

type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

type functionCallItem struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type functionCallOutputItem struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

type reasoningItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id,omitempty"`
	Summary          json.RawMessage `json:"summary"`
	EncryptedContent string          `json:"encrypted_content"`
}

// emptySchema is the parameters schema of a tool that declares none.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// toolsKey is what the encoding of a request's tools depends on besides
// the tools (see [body.ToolMemo]).
type toolsKey struct {
	webSearch bool
}

// requestPayload maps req to a Responses API request body (see the package
// documentation for the rules). The tools' encoding is kept in tm.
func requestPayload(tm *body.ToolMemo, req *model.Request) (*body.Payload, error) {
	rr := responsesRequest{
		Model:           req.Model,
		Instructions:    req.System,
		Stream:          true,
		Store:           false,
		Include:         []string{"reasoning.encrypted_content"},
		MaxOutputTokens: max(req.MaxOutputTokens, 0),
	}
	switch req.Effort {
	case model.EffortLow, model.EffortMedium, model.EffortHigh:
		rr.Reasoning = &reasoning{Effort: string(req.Effort), Summary: "auto"}
	}
	if req.WebSearch {
		rr.Include = append(rr.Include, "web_search_call.action.sources")
	}
	var bb body.Builder
	if len(req.Tools) > 0 || req.WebSearch {
		key := toolsKey{webSearch: req.WebSearch}
		f, err := tm.Fragment(key, req.Tools, func() (*body.Fragment, error) {
			ts := make([]any, 0, len(req.Tools)+1)
			for _, t := range req.Tools {
				params := t.InputSchema
				if len(params) == 0 || string(params) == "null" {
					params = emptySchema
				}
				ts = append(ts, tool{Type: "function", Name: t.Name, Description: t.Description, Parameters: params})
			}
			if key.webSearch {
				ts = append(ts, tool{Type: "web_search"})
			}
			return bb.Encode(ts...)
		})
		if err != nil {
			return nil, encodingError(err)
		}
		rr.Tools = bb.Array([]*body.Fragment{f})
	}
	// The run of the last request of this conversation when req extends
	// its messages (model.Prefix): only the messages after it are
	// looked at.
	run, start := body.NewRun(), 0
	if v, n := model.Prefix(req.Messages, memoKey{}); v != nil {
		run, start = v.(*body.Run), n
	}
	frags := make([]*body.Fragment, 0, len(req.Messages)-start)
	for _, m := range req.Messages[start:] {
		f, err := messageFragment(&bb, m)
		if err != nil {
			return nil, err
		}
		frags = append(frags, f)
	}
	run = run.Extend(frags...)
	model.KeepPrefix(req.Messages, memoKey{}, run)
	rr.Input = bb.ArrayRun(run)
	p, err := bb.Marshal(rr)
	if err != nil {
		return nil, encodingError(err)
	}
	return p, nil
}

// encodingError is the error of a request that cannot be encoded: only
// invalid json.RawMessage values (schemas) get there.
func encodingError(err error) error {
	return &model.Error{Kind: model.ErrInvalidRequest, Message: "responses: encoding request: " + err.Error(), Err: err}
}

// memoKey is the key of a message's fragment in its memo (model.Memo): the
// fragment depends on the message's role and parts only.
type memoKey struct{}

// messageFragment returns the fragment of m's input items: the one m's
// memo keeps, or a new one that it then keeps.
func messageFragment(bb *body.Builder, m model.Message) (*body.Fragment, error) {
	if f, ok := m.Recall(memoKey{}); ok {
		return f.(*body.Fragment), nil
	}
	var items []any
	bm := bb.Message(m)
	switch bm.Role {
	case model.RoleAssistant:
		items = assistantItems(bm)
	case model.RoleUser:
		items = userItems(bm)
	default:
		return nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "responses: unknown message role " + quote(string(m.Role))}
	}
	f, err := bb.Encode(items...)
	if err != nil {
		return nil, encodingError(err)
	}
	m.Remember(memoKey{}, f)
	return f, nil
}

// assistantItems maps an assistant message to output items in the order
// of its parts: consecutive text parts form one message item.
func assistantItems(m model.Message) []any {
	var items []any
	lastOutput := -1 // index of the last item that is not reasoning
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			items = append(items, messageItem{Type: "message", Role: "assistant",
				Content: []contentPart{{Type: "output_text", Text: text.String()}}})
			lastOutput = len(items) - 1
			text.Reset()
		}
	}
	for _, p := range m.Parts {
		switch p.Type {
		case model.PartText:
			text.WriteString(p.Text)
		case model.PartReasoning:
			if ri, ok := reasoningFrom(p); ok {
				flush()
				items = append(items, ri)
			}
		case model.PartToolUse:
			flush()
			items = append(items, functionCallItem{Type: "function_call", CallID: p.ToolCallID, Name: p.ToolName, Arguments: sse.Arguments(p.Input)})
			lastOutput = len(items) - 1
		}
	}
	flush()
	// The API rejects a reasoning item that nothing follows (a response
	// cut short after its reasoning): drop trailing reasoning.
	return items[:lastOutput+1]
}

// reasoningFrom rebuilds the reasoning item of a part this dialect
// produced; ok is false for reasoning the API cannot take back (another
// provider's, or without encrypted content, which store: false requires).
func reasoningFrom(p model.Part) (reasoningItem, bool) {
	if p.Provider != Provider || len(p.Opaque) == 0 {
		return reasoningItem{}, false
	}
	var it struct {
		Type             string          `json:"type"`
		ID               string          `json:"id"`
		Summary          json.RawMessage `json:"summary"`
		EncryptedContent string          `json:"encrypted_content"`
	}
	if json.Unmarshal(p.Opaque, &it) != nil || it.Type != "reasoning" || it.EncryptedContent == "" {
		return reasoningItem{}, false
	}
	var summary []json.RawMessage
	if json.Unmarshal(it.Summary, &summary) != nil || summary == nil {
		it.Summary = json.RawMessage("[]")
	}
	return reasoningItem{Type: "reasoning", ID: it.ID, Summary: it.Summary, EncryptedContent: it.EncryptedContent}, true
}

// userItems maps a user message: its tool results become
// function_call_output items, then the rest, with any images the tools
// returned, one user message item.
func userItems(m model.Message) []any {
	var items []any
	content := sse.SplitUser(m, userPart, func(p model.Part, text string) string {
		items = append(items, functionCallOutputItem{Type: "function_call_output", CallID: p.ToolCallID, Output: text})
		return "Output of tool call " + p.ToolCallID + ":"
	})
	if len(content) > 0 {
		items = append(items, messageItem{Type: "message", Role: "user", Content: content})
	}
	return items
}

// userPart maps a text, image or audio part; ok is false for empty text
// and parts without a user-content form.
func userPart(p model.Part) (contentPart, bool) {
	switch p.Type {
	case model.PartText:
		return contentPart{Type: "input_text", Text: p.Text}, p.Text != ""
	case model.PartImage:
		return contentPart{Type: "input_image", ImageURL: "data:" + p.MimeType + ";base64," + p.Data}, true
	case model.PartAudio:
		return contentPart{Type: "input_text", Text: "[audio attachment omitted: " + p.MimeType + " is not supported]"}, true
	}
	return contentPart{}, false
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
