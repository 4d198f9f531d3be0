package anthropic

import (
	"encoding/json"

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
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens"`
	System    []block   `json:"system,omitempty"`
	Tools     []tool    `json:"tools,omitempty"`
	Thinking  *thinking `json:"thinking,omitempty"`
	Messages  []message `json:"messages"`
	Stream    bool      `json:"stream"`
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

// requestPayload maps req to a Messages API request body (see the package
// documentation for the rules).
func requestPayload(req *model.Request) (*body.Payload, error) {
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
	for _, t := range req.Tools {
		schema := t.InputSchema
		if len(schema) == 0 || string(schema) == "null" {
			schema = emptySchema
		}
		mr.Tools = append(mr.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if req.WebSearch {
		mr.Tools = append(mr.Tools, tool{Type: webSearchTool, Name: "web_search", MaxUses: maxSearches})
	}
	if req.CacheTools && len(mr.Tools) > 0 {
		mr.Tools[len(mr.Tools)-1].CacheControl = ephemeral
		breakpoints++
	}
	cached := make([]bool, 0, len(req.Messages))
	var bb body.Builder
	for _, m := range req.Messages {
		m = bb.Message(m)
		var blocks []block
		switch m.Role {
		case model.RoleAssistant:
			blocks = assistantBlocks(m)
		case model.RoleUser:
			blocks = userBlocks(m)
		default:
			return nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "anthropic: unknown message role " + quote(string(m.Role))}
		}
		if len(blocks) == 0 {
			continue // the API rejects empty messages
		}
		mr.Messages = append(mr.Messages, message{Role: string(m.Role), Content: blocks})
		cached = append(cached, m.Cache)
	}
	if budget := thinkingBudget(req.Effort); budget > 0 && !lacksThinking(mr.Messages) {
		mr.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
		if mr.MaxTokens <= budget {
			mr.MaxTokens += budget
		}
	}
	// Most recent cached messages first, within the remaining breakpoints.
	for i := len(mr.Messages) - 1; i >= 0 && breakpoints < maxBreakpoints; i-- {
		if cached[i] && markLast(mr.Messages[i].Content) {
			breakpoints++
		}
	}
	p, err := bb.Marshal(mr)
	if err != nil {
		// Only invalid json.RawMessage values (schemas) get here.
		return nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "anthropic: encoding request: " + err.Error(), Err: err}
	}
	return p, nil
}

// lacksThinking reports whether the last assistant message calls tools
// without starting with a thinking block. With thinking enabled the API
// rejects such a conversation (a tool-use turn cannot switch thinking on
// midway), so thinking stays off until the turn ends; this happens after
// a model switch or when a turn's reasoning was cut short.
func lacksThinking(msgs []message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != string(model.RoleAssistant) {
			continue
		}
		blocks := msgs[i].Content
		if t := blocks[0].Type; t == "thinking" || t == "redacted_thinking" {
			return false
		}
		for _, b := range blocks {
			if b.Type == "tool_use" {
				return true
			}
		}
		return false
	}
	return false
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
