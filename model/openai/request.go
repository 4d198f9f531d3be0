package openai

import (
	"encoding/json"
	"strings"

	"acpd/model"
	"acpd/model/internal/body"
	"acpd/model/internal/sse"
)

type chatRequest struct {
	Model string `json:"model"`
	// Messages is a [body.Builder.List] of the messages' fragments.
	Messages json.RawMessage `json:"messages"`
	// Tools is a [body.Builder.Array] of the tools' fragment (kept by
	// the Backend's [body.ToolMemo]), or empty.
	Tools               json.RawMessage `json:"tools,omitempty"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	ReasoningEffort     string          `json:"reasoning_effort,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessage.Content is a string, a []contentPart, or nil (JSON null).
type chatMessage struct {
	Role             string         `json:"role"`
	Content          any            `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

type contentPart struct {
	Type       string      `json:"type"`
	Text       string      `json:"text,omitempty"`
	ImageURL   *imageURL   `json:"image_url,omitempty"`
	InputAudio *inputAudio `json:"input_audio,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type inputAudio struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

type chatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function functionCall `json:"function"`
}

type functionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string      `json:"type"`
	Function functionDef `json:"function"`
}

type functionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptySchema is the parameters schema of a tool that declares none.
var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// requestPayload maps req to a Chat Completions request body.
func (b *Backend) requestPayload(req *model.Request) (*body.Payload, error) {
	if req.WebSearch {
		return nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "openai: the Chat Completions API has no web search tool"}
	}
	cr := chatRequest{
		Model:         req.Model,
		Stream:        true,
		StreamOptions: &streamOptions{IncludeUsage: true},
	}
	switch b.maxTokens {
	case "max_completion_tokens":
		cr.MaxCompletionTokens = req.MaxOutputTokens
	case "max_tokens":
		cr.MaxTokens = req.MaxOutputTokens
	default:
		return nil, &model.Error{Kind: model.ErrInvalidRequest,
			Message: `openai: MaxTokensField must be "max_completion_tokens" or "max_tokens", not ` + quote(b.maxTokens)}
	}
	switch req.Effort {
	case model.EffortLow, model.EffortMedium, model.EffortHigh:
		cr.ReasoningEffort = string(req.Effort)
	}
	var bb body.Builder
	// The run of the last request of this conversation when req extends
	// its messages (model.Prefix): only the messages after it are
	// looked at.
	key := chatKey{b.reasoning}
	var run *body.Run
	start := 0
	if v, n := model.Prefix(req.Messages, key); v != nil {
		if p := v.(*chatPrefix); p.system == req.System {
			run, start = p.run, n
		}
	}
	frags := make([]*body.Fragment, 0, len(req.Messages)-start+1)
	if run == nil && req.System != "" {
		f, err := bb.Encode(chatMessage{Role: "system", Content: req.System})
		if err != nil {
			return nil, encodingError(err)
		}
		frags = append(frags, f)
	}
	for _, m := range req.Messages[start:] {
		f, err := b.message(&bb, m, key)
		if err != nil {
			return nil, err
		}
		frags = append(frags, f)
	}
	if run == nil {
		run = body.NewRun(frags...)
	} else {
		run = run.Extend(frags...)
	}
	model.KeepPrefix(req.Messages, key, &chatPrefix{system: req.System, run: run})
	cr.Messages = bb.ListRun(run)
	if len(req.Tools) > 0 {
		f, err := b.tools.Fragment(nil, req.Tools, func() (*body.Fragment, error) {
			ts := make([]any, len(req.Tools))
			for i, t := range req.Tools {
				params := t.InputSchema
				if len(params) == 0 || string(params) == "null" {
					params = emptySchema
				}
				ts[i] = chatTool{Type: "function",
					Function: functionDef{Name: t.Name, Description: t.Description, Parameters: params}}
			}
			return bb.Encode(ts...)
		})
		if err != nil {
			return nil, encodingError(err)
		}
		cr.Tools = bb.Array([]*body.Fragment{f})
	}
	p, err := bb.Marshal(cr)
	if err != nil {
		return nil, encodingError(err)
	}
	return p, nil
}

// encodingError is the error of a request that cannot be encoded: only
// invalid json.RawMessage values (schemas, inputs) get there.
func encodingError(err error) error {
	return &model.Error{Kind: model.ErrInvalidRequest, Message: "openai: encoding request: " + err.Error(), Err: err}
}

// chatKey is the key of a message's fragment in its memo (model.Memo):
// the fragment depends on the message's role and parts, and on whether
// reasoning is sent back; Chat Completions has no cache breakpoints.
type chatKey struct{ reasoning bool }

// chatPrefix is what a request keeps for the next one of its
// conversation (model.Prefix, under its chatKey): the run of its messages'
// fragments, the system prompt's first, and that prompt.
type chatPrefix struct {
	system string
	run    *body.Run
}

// message returns the fragment of m's Chat Completions messages (none, one,
// or several: see userMessages): the one m's memo keeps under key, or a
// new one that it then keeps.
func (b *Backend) message(bb *body.Builder, m model.Message, key chatKey) (*body.Fragment, error) {
	if f, ok := m.Recall(key); ok {
		return f.(*body.Fragment), nil
	}
	var cms []any
	bm := bb.Message(m)
	switch bm.Role {
	case model.RoleAssistant:
		if cm, ok := assistantMessage(bm, b.reasoning); ok {
			cms = append(cms, cm)
		}
	case model.RoleUser:
		for _, cm := range userMessages(bm) {
			cms = append(cms, cm)
		}
	default:
		return nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "openai: unknown message role " + quote(string(m.Role))}
	}
	f, err := bb.Encode(cms...)
	if err != nil {
		return nil, encodingError(err)
	}
	m.Remember(key, f)
	return f, nil
}

// assistantMessage maps an assistant message; ok is false when nothing of it
// can be sent (only reasoning, or empty).
func assistantMessage(m model.Message, withReasoning bool) (chatMessage, bool) {
	var text, reasoning strings.Builder
	var calls []chatToolCall
	for _, p := range m.Parts {
		switch p.Type {
		case model.PartText:
			text.WriteString(p.Text)
		case model.PartReasoning:
			if withReasoning && !p.Redacted {
				reasoning.WriteString(p.Text)
			}
		case model.PartToolUse:
			calls = append(calls, chatToolCall{ID: p.ToolCallID, Type: "function",
				Function: functionCall{Name: p.ToolName, Arguments: sse.Arguments(p.Input)}})
		}
	}
	cm := chatMessage{Role: "assistant", ToolCalls: calls, ReasoningContent: reasoning.String()}
	if text.Len() > 0 {
		cm.Content = text.String()
	}
	return cm, text.Len() > 0 || len(calls) > 0
}

// userMessages maps a user message: its tool results become "tool"
// messages (which must directly follow the assistant's tool calls), the
// rest and any images the tools returned a following "user" message.
func userMessages(m model.Message) []chatMessage {
	var out []chatMessage
	rest := sse.SplitUser(m, mediaPart, func(p model.Part, text string) string {
		out = append(out, chatMessage{Role: "tool", ToolCallID: p.ToolCallID, Content: text})
		return "Output of tool call " + p.ToolCallID + ":"
	})
	switch {
	case len(rest) == 1 && rest[0].Type == "text":
		out = append(out, chatMessage{Role: "user", Content: rest[0].Text})
	case len(rest) > 0:
		out = append(out, chatMessage{Role: "user", Content: rest})
	}
	return out
}

// mediaPart maps a text, image or audio part; ok is false for parts that
// have no user-content form (reasoning, tool use).
func mediaPart(p model.Part) (contentPart, bool) {
	switch p.Type {
	case model.PartText:
		return contentPart{Type: "text", Text: p.Text}, true
	case model.PartImage:
		return contentPart{Type: "image_url", ImageURL: &imageURL{URL: "data:" + p.MimeType + ";base64," + p.Data}}, true
	case model.PartAudio:
		switch p.MimeType {
		case "audio/wav", "audio/x-wav", "audio/wave":
			return contentPart{Type: "input_audio", InputAudio: &inputAudio{Data: p.Data, Format: "wav"}}, true
		case "audio/mpeg", "audio/mp3":
			return contentPart{Type: "input_audio", InputAudio: &inputAudio{Data: p.Data, Format: "mp3"}}, true
		}
		return contentPart{Type: "text", Text: "[audio attachment omitted: " + p.MimeType + " is not supported]"}, true
	}
	return contentPart{}, false
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
