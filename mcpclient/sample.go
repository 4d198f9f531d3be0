// This file is only about MCP sampling, which SEP-2577 deprecates; acpd
// serves it through the deprecation window.
//
//lint:file-ignore SA1019 MCP sampling is deprecated by SEP-2577 but acpd serves it through the deprecation window

package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Content types that only occur in sampling messages ([SampleContent]).
const (
	ContentToolUse    = "tool_use"    // the model calls one of the request's tools
	ContentToolResult = "tool_result" // the server's result of such a call
)

// Tool choices of a [SampleRequest].
const (
	ToolChoiceAuto     = "auto"     // the model decides (also when empty)
	ToolChoiceRequired = "required" // the model must call at least one tool
	ToolChoiceNone     = "none"     // the model must not call tools
)

// SampleRequest is a server's request to sample the session's model
// (sampling/createMessage). Every field is untrusted server input.
type SampleRequest struct {
	// Messages is the conversation to continue, oldest first.
	Messages []SampleMessage
	// SystemPrompt is the server's system prompt (may be empty).
	SystemPrompt string
	// MaxTokens bounds the answer, as the server asks.
	MaxTokens int64
	// Temperature is the requested temperature (0: the model's default).
	Temperature float64
	// StopSequences end the answer early.
	StopSequences []string
	// ModelHints are the server's model name hints, in preference order.
	ModelHints []string
	// Tools are the server's own tools the model may call (only with
	// Options.SampleTools). The model's calls are not run by the client:
	// they are the answer ([SampleResult.ToolUses]), which the server
	// executes before it asks again with the results.
	Tools []SampleTool
	// ToolChoice is ToolChoiceAuto (or empty), ToolChoiceRequired or
	// ToolChoiceNone.
	ToolChoice string
}

// SampleTool is a tool a [SampleRequest] offers the model.
type SampleTool struct {
	Name, Description string
	// InputSchema is the tool's JSON Schema for its arguments.
	InputSchema json.RawMessage
}

// SampleMessage is one message of a [SampleRequest].
type SampleMessage struct {
	// Role is "user" or "assistant".
	Role string
	// Content is the message's blocks: text, image or audio, and in a
	// request with tools also tool uses (assistant) and tool results
	// (user).
	Content []SampleContent
}

// SampleContent is one block of a [SampleMessage]. Type is a Content*
// constant: text, image and audio use the embedded [Content]'s fields,
// ContentToolUse uses ToolUseID, ToolName and Input, ContentToolResult uses
// ToolUseID, Result and IsError.
type SampleContent struct {
	Content
	// ToolUseID links a tool use to its result.
	ToolUseID string
	// ToolName and Input (a JSON object) are a tool use's.
	ToolName string
	Input    json.RawMessage
	// Result is a tool result's content; IsError marks a failed call.
	Result  []Content
	IsError bool
}

// SampleResult is the model's answer to a [SampleRequest].
type SampleResult struct {
	// Text is the answer's text (may be empty when it calls tools).
	Text string
	// ToolUses are the model's calls of the request's tools, in order;
	// StopReason is then "toolUse".
	ToolUses []SampleToolUse
	// Model names the model that answered.
	Model string
	// StopReason is "endTurn", "stopSequence", "maxTokens" or "toolUse"
	// (or empty).
	StopReason string
}

// SampleToolUse is one tool call in a [SampleResult].
type SampleToolUse struct {
	// ID identifies the call (the server's tool_result refers to it).
	ID, Name string
	// Input is the call's arguments, a JSON object.
	Input json.RawMessage
}

// maxSampleTools bounds the tools one sampling request may offer.
const maxSampleTools = 128

// sampleHandler returns the SDK handler serving sampling/createMessage
// (with tools when Options.SampleTools is set) through Options.Sample, or
// nil (sampling is then not advertised).
func (m *Manager) sampleHandler(server string) func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	sample := m.opts.Sample
	if sample == nil {
		return nil
	}
	return func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		sr, err := m.sampleRequest(req.Params)
		if err != nil {
			return nil, err
		}
		res, err := runHook(m, ctx, "sampling", server, sample, sr)
		if err != nil {
			return nil, err
		}
		return sampleResult(res, len(sr.Tools) > 0)
	}
}

// sampleRequest converts a server's sampling request; what the client does
// not offer (tools without Options.SampleTools) or cannot read is an error.
func (m *Manager) sampleRequest(p *mcp.CreateMessageWithToolsParams) (SampleRequest, error) {
	if p == nil {
		return SampleRequest{}, errors.New("sampling request without params")
	}
	sr := SampleRequest{SystemPrompt: p.SystemPrompt, MaxTokens: p.MaxTokens, Temperature: p.Temperature, StopSequences: p.StopSequences}
	if mp := p.ModelPreferences; mp != nil {
		for _, h := range mp.Hints {
			if h != nil && h.Name != "" {
				sr.ModelHints = append(sr.ModelHints, h.Name)
			}
		}
	}
	if p.ToolChoice != nil {
		switch p.ToolChoice.Mode {
		case "", ToolChoiceAuto, ToolChoiceRequired, ToolChoiceNone:
			sr.ToolChoice = p.ToolChoice.Mode
		default:
			return SampleRequest{}, fmt.Errorf("sampling: unknown toolChoice mode %q", p.ToolChoice.Mode)
		}
	}
	if len(p.Tools) > 0 && !m.opts.SampleTools {
		return SampleRequest{}, errors.New("sampling: this client does not offer tools in sampling (no sampling.tools capability)")
	}
	if len(p.Tools) > maxSampleTools {
		return SampleRequest{}, fmt.Errorf("sampling: %d tools offered, at most %d are accepted", len(p.Tools), maxSampleTools)
	}
	seen := map[string]bool{}
	for _, t := range p.Tools {
		if t == nil || t.Name == "" || seen[t.Name] {
			return SampleRequest{}, errors.New("sampling: a tool without a name, or with a duplicate name")
		}
		seen[t.Name] = true
		schema := json.RawMessage(`{"type":"object"}`)
		if t.InputSchema != nil {
			b, err := json.Marshal(t.InputSchema)
			if err != nil {
				return SampleRequest{}, fmt.Errorf("sampling: tool %q: input schema: %w", t.Name, err)
			}
			schema = b
		}
		sr.Tools = append(sr.Tools, SampleTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	for _, msg := range p.Messages {
		if msg == nil {
			continue
		}
		sm := SampleMessage{Role: string(msg.Role)}
		for _, c := range msg.Content {
			sc, err := sampleContent(c)
			if err != nil {
				return SampleRequest{}, fmt.Errorf("sampling: a %s message: %w", msg.Role, err)
			}
			sm.Content = append(sm.Content, sc)
		}
		sr.Messages = append(sr.Messages, sm)
	}
	return sr, nil
}

// sampleContent converts one block of a sampling message.
func sampleContent(c mcp.Content) (SampleContent, error) {
	switch c := c.(type) {
	case *mcp.ToolUseContent:
		in, err := json.Marshal(c.Input)
		if err != nil || c.Input == nil {
			in = json.RawMessage(`{}`)
		}
		return SampleContent{Content: Content{Type: ContentToolUse}, ToolUseID: c.ID, ToolName: c.Name, Input: in}, nil
	case *mcp.ToolResultContent:
		out := SampleContent{Content: Content{Type: ContentToolResult}, ToolUseID: c.ToolUseID, IsError: c.IsError}
		for _, r := range c.Content {
			rc, ok := convertContent(r)
			if !ok {
				return SampleContent{}, errors.New("unsupported content in a tool result")
			}
			out.Result = append(out.Result, rc)
		}
		if len(out.Result) == 0 && c.StructuredContent != nil {
			if b, err := json.Marshal(c.StructuredContent); err == nil {
				out.Result = []Content{{Type: ContentText, Text: string(b)}}
			}
		}
		return out, nil
	case *mcp.TextContent, *mcp.ImageContent, *mcp.AudioContent:
		cc, _ := convertContent(c)
		return SampleContent{Content: cc}, nil
	}
	return SampleContent{}, fmt.Errorf("unsupported content %T", c)
}

// sampleResult is the wire form of res; tool uses are only valid when the
// request offered tools.
func sampleResult(res SampleResult, tools bool) (*mcp.CreateMessageWithToolsResult, error) {
	out := &mcp.CreateMessageWithToolsResult{Model: res.Model, Role: "assistant", StopReason: res.StopReason}
	if res.Text != "" || len(res.ToolUses) == 0 {
		out.Content = append(out.Content, &mcp.TextContent{Text: res.Text})
	}
	if len(res.ToolUses) > 0 && !tools {
		return nil, errors.New("sampling failed: the model called tools the request did not offer")
	}
	for _, u := range res.ToolUses {
		var in map[string]any
		if len(u.Input) > 0 {
			if err := json.Unmarshal(u.Input, &in); err != nil {
				return nil, fmt.Errorf("sampling failed: the model's call of %q has arguments that are not a JSON object", u.Name)
			}
		}
		out.Content = append(out.Content, &mcp.ToolUseContent{ID: u.ID, Name: u.Name, Input: in})
	}
	if len(res.ToolUses) > 0 {
		out.StopReason = "toolUse"
	}
	return out, nil
}
