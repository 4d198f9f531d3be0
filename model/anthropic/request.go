package anthropic

import (
	"encoding/json"
	"slices"

	"acpd/model"
	"acpd/model/internal/body"
)

// defaultMaxTokens is max_tokens when the request sets none.
const defaultMaxTokens = 8192

// maxBreakpoints is the API's limit on cache_control markers per request.
const maxBreakpoints = 4

// thinkingBudget maps a reasoning effort to a thinking budget; 0 disables
// thinking.
func thinkingBudget(e model.Effort) int {
	switch e {
	case model.EffortLow:
		return 1024
	case model.EffortMedium:
		return 8192
	case model.EffortHigh:
		return 24576
	}
	return 0
}

type messagesRequest struct {
	Model     string  `json:"model"`
	MaxTokens int     `json:"max_tokens"`
	System    []block `json:"system,omitempty"`
	// Tools is a [body.Builder.Array] of the tools' fragment (kept by the
	// Backend's [body.ToolMemo]), or empty.
	Tools    json.RawMessage `json:"tools,omitempty"`
	Thinking *thinking       `json:"thinking,omitempty"`
	// Messages is a [body.Builder.List] of the messages' fragments.
	Messages json.RawMessage `json:"messages"`
	Stream   bool            `json:"stream"`
}

type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

// block is every content block type the requests use; unused fields are
// omitted.
type block struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	Source       *imageSource    `json:"source,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      []block         `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	Thinking     *string         `json:"thinking,omitempty"`
	Signature    string          `json:"signature,omitempty"`
	Data         string          `json:"data,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// tool is a client tool, or (Type set) a server tool: the web search.
type tool struct {
	Type         string          `json:"type,omitempty"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	MaxUses      int             `json:"max_uses,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

// webSearchTool is the Messages API's server-side web search tool.
const webSearchTool = "web_search_20250305"

// maxSearches bounds the searches of one request (the tool's max_uses).
const maxSearches = 5

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// toolsKey is what the encoding of a request's tools depends on besides
// the tools (see [body.ToolMemo]).
type toolsKey struct {
	webSearch, cache bool
}

// requestPayload maps req to a Messages API request body (see the package
// documentation for the rules). The tools' encoding is kept in tm.
func requestPayload(tm *body.ToolMemo, req *model.Request) (*body.Payload, error) {
	mr := messagesRequest{Model: req.Model, MaxTokens: req.MaxOutputTokens, Stream: true}
	if mr.MaxTokens <= 0 {
		mr.MaxTokens = defaultMaxTokens
	}
	breakpoints := 0
	if req.System != "" {
		mr.System = []block{{Type: "text", Text: req.System}}
		if req.CacheSystem {
			mr.System[0].CacheControl = ephemeral
			breakpoints++
		}
	}
	var bb body.Builder
	if len(req.Tools) > 0 || req.WebSearch {
		key := toolsKey{webSearch: req.WebSearch, cache: req.CacheTools}
		f, err := tm.Fragment(key, req.Tools, func() (*body.Fragment, error) {
			ts := make([]tool, 0, len(req.Tools)+1)
			for _, t := range req.Tools {
				schema := t.InputSchema
				if len(schema) == 0 || string(schema) == "null" {
					schema = emptySchema
				}
				ts = append(ts, tool{Name: t.Name, Description: t.Description, InputSchema: schema})
			}
			if key.webSearch {
				ts = append(ts, tool{Type: webSearchTool, Name: "web_search", MaxUses: maxSearches})
			}
			if key.cache {
				ts[len(ts)-1].CacheControl = ephemeral
			}
			vs := make([]any, len(ts))
			for i := range ts {
				vs[i] = ts[i]
			}
			return bb.Encode(vs...)
		})
		if err != nil {
			return nil, encodingError(err)
		}
		mr.Tools = bb.Array([]*body.Fragment{f})
		if key.cache {
			breakpoints++
		}
	}
	encs := make([]*encoded, len(req.Messages))
	for i, m := range req.Messages {
		e, err := messageEncoding(&bb, m)
		if err != nil {
			return nil, err
		}
		encs[i] = e
	}
	if budget := thinkingBudget(req.Effort); budget > 0 && !lacksThinking(encs) {
		mr.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
		if mr.MaxTokens <= budget {
			mr.MaxTokens += budget
		}
	}
	// Most recent cached messages first, within the remaining breakpoints.
	frags := make([]*body.Fragment, len(encs))
	for i := len(encs) - 1; i >= 0; i-- {
		m, e := req.Messages[i], encs[i]
		if !(m.Cache || slices.Contains(req.CacheAt, i)) || !e.markable || breakpoints >= maxBreakpoints {
			if e.marked != nil {
				// No longer a breakpoint: drop its other form.
				e = e.without()
				m.Remember(memoKey{}, e)
			}
			frags[i] = e.frag
			continue
		}
		breakpoints++
		if e.marked == nil {
			f, _, err := encodeMessage(&bb, m, true)
			if err != nil {
				return nil, err
			}
			e = e.with(f)
			m.Remember(memoKey{}, e)
		}
		frags[i] = e.marked
	}
	mr.Messages = bb.List(frags)
	p, err := bb.Marshal(mr)
	if err != nil {
		return nil, encodingError(err)
	}
	return p, nil
}

// lacksThinking reports whether the last assistant message calls tools
// without starting with a thinking block. With thinking enabled the API
// rejects such a conversation (a tool-use turn cannot switch thinking on
// midway), so thinking stays off until the turn ends; this happens after
// a model switch or when a turn's reasoning was cut short.
func lacksThinking(msgs []*encoded) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if e := msgs[i]; e.role == model.RoleAssistant && !e.empty {
			return e.toolUse && !e.thinking
		}
	}
	return false
}

// encoded is a message's fragment and what the request around it needs to
// know of its blocks, kept in the message's memo (model.Memo). marked is
// the fragment with a cache breakpoint, while the message is one: a
// message is a breakpoint for a request or two (see the agent's), and its
// encoded forms are as long as its text, so it keeps one of them after.
type encoded struct {
	frag     *body.Fragment
	marked   *body.Fragment
	role     model.Role
	empty    bool // no blocks: the message is left out (the API rejects empty messages)
	markable bool // a block takes a cache breakpoint (see markLast)
	thinking bool // the first block is thinking
	toolUse  bool // a block calls a tool
}

// with returns e with marked; without, e without it (kept values are not
// modified).
func (e *encoded) with(marked *body.Fragment) *encoded {
	c := *e
	c.marked = marked
	return &c
}

func (e *encoded) without() *encoded { return e.with(nil) }

// memoKey is the key of a message's encoding in its memo: the encoding
// depends on the message's role and parts only.
type memoKey struct{}

// messageEncoding returns m's encoding (its fragment without a cache
// breakpoint): the one m's memo keeps, or a new one that it then keeps.
func messageEncoding(bb *body.Builder, m model.Message) (*encoded, error) {
	if v, ok := m.Recall(memoKey{}); ok {
		return v.(*encoded), nil
	}
	f, e, err := encodeMessage(bb, m, false)
	if err != nil {
		return nil, err
	}
	e.frag = f
	m.Remember(memoKey{}, e)
	return e, nil
}

// encodeMessage encodes m, with a cache breakpoint on its last block that
// takes one when marked, and returns the fragment and what the request
// needs to know of its blocks.
func encodeMessage(bb *body.Builder, m model.Message, marked bool) (*body.Fragment, *encoded, error) {
	bm := bb.Message(m)
	var blocks []block
	switch bm.Role {
	case model.RoleAssistant:
		blocks = assistantBlocks(bm)
	case model.RoleUser:
		blocks = userBlocks(bm)
	default:
		return nil, nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "anthropic: unknown message role " + quote(string(m.Role))}
	}
	e := &encoded{role: m.Role, empty: len(blocks) == 0}
	if e.empty {
		return &body.Fragment{}, e, nil
	}
	t := blocks[0].Type
	e.thinking = t == "thinking" || t == "redacted_thinking"
	for _, b := range blocks {
		e.toolUse = e.toolUse || b.Type == "tool_use"
		e.markable = e.markable || (b.Type != "thinking" && b.Type != "redacted_thinking")
	}
	if marked {
		markLast(blocks)
	}
	f, err := bb.Encode(message{Role: string(m.Role), Content: blocks})
	if err != nil {
		return nil, nil, encodingError(err)
	}
	return f, e, nil
}

// encodingError is the error of a request that cannot be encoded: only
// invalid json.RawMessage values (schemas) get there.
func encodingError(err error) error {
	return &model.Error{Kind: model.ErrInvalidRequest, Message: "anthropic: encoding request: " + err.Error(), Err: err}
}

// markLast puts a cache breakpoint on the last block that accepts one
// (thinking blocks do not); false when there is none.
func markLast(blocks []block) bool {
	for i := len(blocks) - 1; i >= 0; i-- {
		switch blocks[i].Type {
		case "thinking", "redacted_thinking":
			continue
		}
		blocks[i].CacheControl = ephemeral
		return true
	}
	return false
}

// assistantBlocks maps an assistant message: reasoning this dialect can
// verify first, then text and tool calls in order.
func assistantBlocks(m model.Message) []block {
	var reasoning, rest []block
	for _, p := range m.Parts {
		switch p.Type {
		case model.PartReasoning:
			if b, ok := reasoningBlock(p); ok {
				reasoning = append(reasoning, b)
			}
		case model.PartText:
			if p.Text != "" {
				rest = append(rest, block{Type: "text", Text: p.Text})
			}
		case model.PartToolUse:
			rest = append(rest, block{Type: "tool_use", ID: p.ToolCallID, Name: p.ToolName, Input: objectInput(p.Input)})
		}
	}
	return append(reasoning, rest...)
}

// reasoningBlock maps a reasoning part to a thinking or redacted_thinking
// block; ok is false for reasoning the API would reject.
func reasoningBlock(p model.Part) (block, bool) {
	if p.Provider != Provider {
		return block{}, false
	}
	if p.Redacted {
		var data string
		if json.Unmarshal(p.Opaque, &data) != nil || data == "" {
			return block{}, false
		}
		return block{Type: "redacted_thinking", Data: data}, true
	}
	if p.Signature == "" {
		return block{}, false // cut short before its signature arrived
	}
	text := p.Text
	return block{Type: "thinking", Thinking: &text, Signature: p.Signature}, true
}

// objectInput returns input when it is a JSON object, else {}.
func objectInput(input json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return input
}

// userBlocks maps a user message: tool results first, then the rest.
func userBlocks(m model.Message) []block {
	var results, rest []block
	for _, p := range m.Parts {
		if p.Type == model.PartToolResult {
			r := block{Type: "tool_result", ToolUseID: p.ToolCallID, IsError: p.IsError}
			for _, c := range p.Content {
				if b, ok := contentBlock(c); ok {
					r.Content = append(r.Content, b)
				}
			}
			results = append(results, r)
			continue
		}
		if b, ok := contentBlock(p); ok {
			rest = append(rest, b)
		}
	}
	return append(results, rest...)
}

// contentBlock maps a text, image or audio part; ok is false for empty
// text and parts without a user-content form.
func contentBlock(p model.Part) (block, bool) {
	switch p.Type {
	case model.PartText:
		return block{Type: "text", Text: p.Text}, p.Text != ""
	case model.PartImage:
		switch p.MimeType {
		case "image/jpeg", "image/png", "image/gif", "image/webp":
			return block{Type: "image", Source: &imageSource{Type: "base64", MediaType: p.MimeType, Data: p.Data}}, true
		}
		return block{Type: "text", Text: "[image attachment omitted: " + p.MimeType + " is not supported]"}, true
	case model.PartAudio:
		return block{Type: "text", Text: "[audio attachment omitted: " + p.MimeType + " is not supported]"}, true
	}
	return block{}, false
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
