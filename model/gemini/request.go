package gemini

import (
	"encoding/json"
	"strconv"
	"strings"

	"acpd/model"
	"acpd/model/internal/body"
	"acpd/model/internal/sse"
)

// skipSignature is the placeholder thought signature Gemini 3 documents
// for function calls it did not produce (see the package documentation).
const skipSignature = "skip_thought_signature_validator"

type generateRequest struct {
	SystemInstruction *content `json:"systemInstruction,omitempty"`
	// Contents is a [body.Builder.Array] of the messages' fragments.
	Contents json.RawMessage `json:"contents"`
	// Tools is a [body.Builder.Array] of the tools' fragment (kept by the
	// Backend's [body.ToolMemo]), or empty.
	Tools            json.RawMessage   `json:"tools,omitempty"`
	GenerationConfig *generationConfig `json:"generationConfig,omitempty"`
}

type content struct {
	Role  string `json:"role,omitempty"`
	Parts []part `json:"parts"`
}

// part is a Content part, in requests and in streamed responses.
type part struct {
	// Text is a pointer so that an empty text part carrying a thought
	// signature can be sent back.
	Text             *string           `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	InlineData       *blob             `json:"inlineData,omitempty"`
	FunctionCall     *functionCall     `json:"functionCall,omitempty"`
	FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
}

type blob struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

type functionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type functionResponse struct {
	Name     string            `json:"name"`
	Response map[string]string `json:"response"`
}

// tool is the function declarations, or (GoogleSearch set) Google Search
// grounding.
type tool struct {
	FunctionDeclarations []functionDeclaration `json:"functionDeclarations,omitempty"`
	GoogleSearch         *struct{}             `json:"google_search,omitempty"`
}

type functionDeclaration struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitempty"`
}

type generationConfig struct {
	MaxOutputTokens int             `json:"maxOutputTokens,omitempty"`
	ThinkingConfig  *thinkingConfig `json:"thinkingConfig,omitempty"`
}

type thinkingConfig struct {
	ThinkingBudget  *int `json:"thinkingBudget,omitempty"`
	IncludeThoughts bool `json:"includeThoughts,omitempty"`
}

// thinkingBudget maps a reasoning effort to a thinking budget.
func thinkingBudget(e model.Effort) (int, bool) {
	switch e {
	case model.EffortOff:
		return 0, true
	case model.EffortLow:
		return 1024, true
	case model.EffortMedium:
		return 8192, true
	case model.EffortHigh:
		return 24576, true
	}
	return 0, false
}

// version returns the generation number of a Gemini model id
// ("gemini-2.5-pro" is 2.5); ok is false for other models. Aliases without
// a number ("gemini-pro-latest") count as the newest generation.
func version(modelID string) (v float64, ok bool) {
	id := strings.ToLower(modelID)
	id = id[strings.LastIndexByte(id, '/')+1:]
	rest, ok := strings.CutPrefix(id, "gemini-")
	if !ok {
		return 0, false
	}
	n := 0
	for n < len(rest) && (rest[n] >= '0' && rest[n] <= '9' || rest[n] == '.') {
		n++
	}
	if f, err := strconv.ParseFloat(rest[:n], 64); err == nil {
		return f, true
	}
	return 99, true
}

// alwaysThinks reports whether a model rejects a thinking budget of 0
// (the Pro models since Gemini 2.5).
func alwaysThinks(modelID string) bool {
	v, ok := version(modelID)
	return ok && v >= 2.5 && strings.Contains(strings.ToLower(modelID), "-pro")
}

// toolsKey is what the encoding of a request's tools depends on besides
// the tools (see [body.ToolMemo]).
type toolsKey struct {
	webSearch bool
}

// requestPayload maps req to a GenerateContentRequest body (see the package
// documentation for the rules). The tools' encoding (their schemas
// converted) is kept in tm.
func requestPayload(tm *body.ToolMemo, req *model.Request) (*body.Payload, error) {
	if strings.TrimSpace(req.Model) == "" {
		return nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "gemini: no model given"}
	}
	var gr generateRequest
	if req.System != "" {
		gr.SystemInstruction = &content{Parts: []part{textPart(req.System)}}
	}
	var gc generationConfig
	gc.MaxOutputTokens = max(req.MaxOutputTokens, 0)
	if budget, ok := thinkingBudget(req.Effort); ok {
		switch {
		case budget > 0:
			gc.ThinkingConfig = &thinkingConfig{ThinkingBudget: &budget, IncludeThoughts: true}
			if gc.MaxOutputTokens > 0 && gc.MaxOutputTokens <= budget {
				// Thoughts count against maxOutputTokens: leave room
				// for the answer.
				gc.MaxOutputTokens += budget
			}
		case !alwaysThinks(req.Model):
			gc.ThinkingConfig = &thinkingConfig{ThinkingBudget: &budget}
		}
	}
	if gc != (generationConfig{}) {
		gr.GenerationConfig = &gc
	}
	var bb body.Builder
	if len(req.Tools) > 0 || req.WebSearch {
		key := toolsKey{webSearch: req.WebSearch}
		f, err := tm.Fragment(key, req.Tools, func() (*body.Fragment, error) {
			var ts []any
			if len(req.Tools) > 0 {
				var decls []functionDeclaration
				for _, t := range req.Tools {
					params, err := convertSchema(t.InputSchema)
					if err != nil {
						return nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "gemini: tool " + quote(t.Name) + ": " + err.Error(), Err: err}
					}
					decls = append(decls, functionDeclaration{Name: t.Name, Description: t.Description, Parameters: params})
				}
				ts = append(ts, tool{FunctionDeclarations: decls})
			}
			if key.webSearch {
				ts = append(ts, tool{GoogleSearch: &struct{}{}})
			}
			f, err := bb.Encode(ts...)
			if err != nil {
				return nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "gemini: encoding request: " + err.Error(), Err: err}
			}
			return f, nil
		})
		if err != nil {
			return nil, err
		}
		gr.Tools = bb.Array([]*body.Fragment{f})
	}
	v, _ := version(req.Model)
	sentinel := v >= 3
	names := map[string]string{} // tool call id -> tool name
	frags := make([]*body.Fragment, len(req.Messages))
	for i, m := range req.Messages {
		f, err := messageFragment(&bb, m, sentinel, names)
		if err != nil {
			return nil, err
		}
		frags[i] = f
	}
	gr.Contents = bb.Array(frags)
	p, err := bb.Marshal(gr)
	if err != nil {
		// Only invalid json.RawMessage values (tool inputs) get here.
		return nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "gemini: encoding request: " + err.Error(), Err: err}
	}
	return p, nil
}

// memoKey is the key of a message's encoding in its memo (model.Memo):
// it depends on the message's role and parts, on whether calls without a
// signature get the sentinel one, and (for tool results) on the names of
// the calls, which encoded records.
type memoKey struct{ sentinel bool }

// encoded is a message's fragment, with the tool calls the message makes
// (for the results that follow) or the names its tool results were
// encoded with.
type encoded struct {
	frag  *body.Fragment
	calls []toolName // an assistant message's calls
	used  []toolName // a user message's results: names[id] when encoded
}

type toolName struct{ id, name string }

// messageFragment returns the fragment of m's contents and adds the tool
// calls m makes to names (tool call id -> tool name): the fragment m's
// memo keeps when the names its tool results need are still those it was
// encoded with, or a new one that it then keeps.
func messageFragment(bb *body.Builder, m model.Message, sentinel bool, names map[string]string) (*body.Fragment, error) {
	key := memoKey{sentinel}
	if v, ok := m.Recall(key); ok {
		e := v.(*encoded)
		valid := true
		for _, u := range e.used {
			valid = valid && names[u.id] == u.name
		}
		if valid {
			for _, c := range e.calls {
				names[c.id] = c.name
			}
			return e.frag, nil
		}
	}
	e := &encoded{}
	var contents []any
	bm := bb.Message(m)
	switch bm.Role {
	case model.RoleAssistant:
		for _, p := range bm.Parts {
			if p.Type == model.PartToolUse {
				e.calls = append(e.calls, toolName{p.ToolCallID, p.ToolName})
			}
		}
		if c, ok := modelContent(bm, sentinel, names); ok {
			contents = append(contents, c)
		}
	case model.RoleUser:
		for _, p := range bm.Parts {
			if p.Type == model.PartToolResult {
				e.used = append(e.used, toolName{p.ToolCallID, names[p.ToolCallID]})
			}
		}
		for _, c := range userContents(bm, names) {
			contents = append(contents, c)
		}
	default:
		return nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "gemini: unknown message role " + quote(string(m.Role))}
	}
	f, err := bb.Encode(contents...)
	if err != nil {
		return nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "gemini: encoding request: " + err.Error(), Err: err}
	}
	e.frag = f
	m.Remember(key, e)
	return f, nil
}

func textPart(s string) part { return part{Text: &s} }

// modelContent maps an assistant message and records its tool call names;
// ok is false when nothing of it can be sent.
func modelContent(m model.Message, sentinel bool, names map[string]string) (content, bool) {
	var parts []part
	firstCall, signed := -1, false
	for _, p := range m.Parts {
		switch p.Type {
		case model.PartText:
			if p.Text != "" {
				parts = append(parts, textPart(p.Text))
			}
		case model.PartReasoning:
			if p.Provider != Provider || p.Signature == "" {
				continue // unsigned or foreign reasoning: Gemini cannot use it
			}
			if p.Text != "" {
				tp := textPart(p.Text)
				tp.Thought, tp.ThoughtSignature = true, p.Signature
				parts = append(parts, tp)
				continue
			}
			// A signature Gemini sent on a text part or an empty part.
			if n := len(parts); n > 0 && parts[n-1].Text != nil && !parts[n-1].Thought && parts[n-1].ThoughtSignature == "" {
				parts[n-1].ThoughtSignature = p.Signature
				continue
			}
			sp := textPart("")
			sp.ThoughtSignature = p.Signature
			parts = append(parts, sp)
		case model.PartToolUse:
			names[p.ToolCallID] = p.ToolName
			fc := part{FunctionCall: &functionCall{Name: p.ToolName, Args: objectInput(p.Input)}}
			if p.Provider == Provider && p.Signature != "" {
				fc.ThoughtSignature = p.Signature
				signed = true
			}
			if firstCall < 0 {
				firstCall = len(parts)
			}
			parts = append(parts, fc)
		}
	}
	if firstCall >= 0 && !signed && sentinel {
		parts[firstCall].ThoughtSignature = skipSignature
	}
	return content{Role: "model", Parts: parts}, len(parts) > 0
}

// objectInput returns input when it is a JSON object, else {}.
func objectInput(input json.RawMessage) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &obj) != nil || obj == nil {
		return json.RawMessage("{}")
	}
	return input
}

// userContents maps a user message: its tool results become one content
// of functionResponse parts; the rest, and images the tools returned, a
// second content.
func userContents(m model.Message, names map[string]string) []content {
	var responses []part
	rest := sse.SplitUser(m, mediaPart, func(p model.Part, text string) string {
		name := names[p.ToolCallID]
		if name == "" {
			name = p.ToolCallID
		}
		key := "output"
		if p.IsError {
			key = "error"
		}
		responses = append(responses, part{FunctionResponse: &functionResponse{Name: name,
			Response: map[string]string{key: text}}})
		return "Output of tool call " + p.ToolCallID + " (" + name + "):"
	})
	var out []content
	if len(responses) > 0 {
		out = append(out, content{Role: "user", Parts: responses})
	}
	if len(rest) > 0 {
		out = append(out, content{Role: "user", Parts: rest})
	}
	return out
}

// mediaPart maps a text, image or audio part; ok is false for empty text
// and parts without a user-content form.
func mediaPart(p model.Part) (part, bool) {
	switch p.Type {
	case model.PartText:
		return textPart(p.Text), p.Text != ""
	case model.PartImage:
		switch p.MimeType {
		case "image/png", "image/jpeg", "image/webp", "image/heic", "image/heif":
			return part{InlineData: &blob{MimeType: p.MimeType, Data: p.Data}}, true
		}
		return textPart("[image attachment omitted: " + p.MimeType + " is not supported]"), true
	case model.PartAudio:
		mt := p.MimeType
		switch mt {
		case "audio/x-wav", "audio/wave":
			mt = "audio/wav"
		case "audio/mpeg":
			mt = "audio/mp3"
		}
		switch mt {
		case "audio/wav", "audio/mp3", "audio/aiff", "audio/aac", "audio/ogg", "audio/flac":
			return part{InlineData: &blob{MimeType: mt, Data: p.Data}}, true
		}
		return textPart("[audio attachment omitted: " + p.MimeType + " is not supported]"), true
	}
	return part{}, false
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
