// Package model is acpd's boundary to language models: a normalised request
// and a normalised event stream that every provider (OpenAI-compatible,
// Anthropic, Gemini, exec plug-ins, replay) translates to and from.
//
// The session log stores [Message] values verbatim, so a loaded or resumed
// session continues with the model exactly, provider-opaque fields included.
// Changing the JSON shape of these types is a change to the on-disk format.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"
)

// Role is the author of a [Message].
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// PartType says which fields of a [Part] are meaningful.
type PartType string

const (
	// PartText is plain text (Text).
	PartText PartType = "text"
	// PartImage is an image (MimeType, Data as base64).
	PartImage PartType = "image"
	// PartAudio is audio (MimeType, Data as base64).
	PartAudio PartType = "audio"
	// PartToolUse is a tool call made by the model (ToolCallID, ToolName, Input).
	PartToolUse PartType = "tool_use"
	// PartToolResult answers a tool call (ToolCallID, Content, IsError).
	PartToolResult PartType = "tool_result"
	// PartReasoning is the model's reasoning (Text, Signature, Redacted, Opaque).
	PartReasoning PartType = "reasoning"
)

// Part is one piece of a [Message]. Fields irrelevant to Type are empty.
//
// A long streamed text or reasoning is a run of parts of its type, in
// blocks of at most 64 KiB (see [Assembler]), so that it is never joined
// in one more copy: every part of the run but the first is marked
// Continued, and only its last carries Signature, Opaque, Redacted or
// Provider. Dialects send a run as one text.
type Part struct {
	Type PartType `json:"type"`
	// Text is the text of a text or reasoning part.
	Text string `json:"text,omitempty"`
	// MimeType and Data (base64) carry an image or audio part.
	MimeType string `json:"mimeType,omitempty"`
	Data     string `json:"data,omitempty"`
	// ToolCallID links a tool_use part to its tool_result part.
	ToolCallID string `json:"toolCallId,omitempty"`
	// ToolName names the tool of a tool_use part.
	ToolName string `json:"toolName,omitempty"`
	// Input is the JSON arguments of a tool_use part.
	Input json.RawMessage `json:"input,omitempty"`
	// Content is the result of a tool_result part (text and image parts).
	Content []Part `json:"content,omitempty"`
	// IsError marks a tool_result that reports a failure.
	IsError bool `json:"isError,omitempty"`
	// Signature is a reasoning part's signature (Anthropic thinking) or a
	// tool_use part's thought signature (Gemini), sent back verbatim.
	Signature string `json:"signature,omitempty"`
	// Redacted marks reasoning whose content only the provider can read
	// (Anthropic redacted_thinking, OpenAI encrypted reasoning); Opaque holds it.
	Redacted bool `json:"redacted,omitempty"`
	// Opaque is provider-private data that must be sent back unchanged to
	// the same provider (encrypted reasoning, item ids).
	Opaque json.RawMessage `json:"opaque,omitempty"`
	// Provider names the dialect that produced Signature/Opaque; other
	// dialects drop those fields (they cannot verify them).
	Provider string `json:"provider,omitempty"`
	// Continued marks a text or reasoning part that continues the text of
	// the part before it, of the same type (see above).
	Continued bool `json:"continued,omitempty"`
}

// Message is one turn of the model-facing transcript.
type Message struct {
	Role  Role   `json:"role"`
	Parts []Part `json:"parts"`
	// Cache asks providers that support prompt caching to put a cache
	// breakpoint after this message.
	Cache bool `json:"cache,omitempty"`
	// Interrupted marks an assistant message whose stream was cut short
	// (cancel, error, or a retry after deltas reached the client).
	Interrupted bool `json:"interrupted,omitempty"`

	// memo keeps the dialects' encodings of the message (see [Memo]); it
	// is not part of the message's content or of its JSON form.
	memo *Memo
}

// Text returns the concatenated text parts of m.
func (m Message) Text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// ToolDef describes a tool offered to the model.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Effort is the requested reasoning effort.
type Effort string

const (
	EffortOff    Effort = "off"
	EffortLow    Effort = "low"
	EffortMedium Effort = "medium"
	EffortHigh   Effort = "high"
)

// Request is a normalised model request. Backends must not modify it.
type Request struct {
	// Model is the provider-side model id (the part after "provider/").
	Model    string    `json:"model"`
	System   string    `json:"system,omitempty"`
	Messages []Message `json:"messages"`
	Tools    []ToolDef `json:"tools,omitempty"`
	// MaxOutputTokens caps the response; 0 lets the backend choose.
	MaxOutputTokens int    `json:"maxOutputTokens,omitempty"`
	Effort          Effort `json:"effort,omitempty"`
	// CacheSystem and CacheTools ask for cache breakpoints after the system
	// prompt and after the tool definitions.
	CacheSystem bool `json:"cacheSystem,omitempty"`
	CacheTools  bool `json:"cacheTools,omitempty"`
	// CacheAt lists messages (indexes into Messages) that get a cache
	// breakpoint after them, as a message's Cache does: a caller that
	// marks messages this way can pass its transcript's own slice as
	// Messages, shared, instead of marked copies (see [Prefix]).
	CacheAt []int `json:"cacheAt,omitempty"`
	// WebSearch lets the model search the web with the provider's own
	// search (Anthropic's web search tool, OpenAI Responses' web_search,
	// Gemini's Google Search grounding); the searches and their sources
	// come back as [EventSearch] and [EventSource]. A dialect without one
	// rejects the request (see [ModelInfo.WebSearch]).
	WebSearch bool `json:"webSearch,omitempty"`
}

// EventType says which fields of an [Event] are meaningful.
type EventType string

const (
	// EventText is a text delta (Text).
	EventText EventType = "text"
	// EventReasoning is a reasoning delta (Text).
	EventReasoning EventType = "reasoning"
	// EventReasoningDone ends a reasoning block and carries its Signature,
	// Redacted flag and Opaque data.
	EventReasoningDone EventType = "reasoning_done"
	// EventToolStart starts a tool call (ToolCallID, ToolName).
	EventToolStart EventType = "tool_start"
	// EventToolDelta streams a tool call's JSON arguments (ToolCallID, Text).
	EventToolDelta EventType = "tool_delta"
	// EventToolDone completes a tool call (ToolCallID, ToolName, Input,
	// optionally Signature/Opaque).
	EventToolDone EventType = "tool_done"
	// EventUsage reports token usage (Usage); may repeat, later values win.
	EventUsage EventType = "usage"
	// EventFinish ends the response (Finish). It is always the last event of
	// a successful stream.
	EventFinish EventType = "finish"
	// EventSearch reports a web search the provider ran (Text: the query;
	// Request.WebSearch).
	EventSearch EventType = "search"
	// EventSource reports a web page a search found or the answer cites
	// (URL, Text: its title, possibly empty); a page may be reported more
	// than once.
	EventSource EventType = "source"
)

// Event is one normalised streaming event.
type Event struct {
	Type       EventType       `json:"type"`
	Text       string          `json:"text,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	ToolName   string          `json:"toolName,omitempty"`
	Input      json.RawMessage `json:"input,omitempty"`
	Signature  string          `json:"signature,omitempty"`
	Redacted   bool            `json:"redacted,omitempty"`
	Opaque     json.RawMessage `json:"opaque,omitempty"`
	Usage      *Usage          `json:"usage,omitempty"`
	Finish     FinishReason    `json:"finish,omitempty"`
	// Provider names the dialect that produced Signature/Opaque on
	// reasoning_done and tool_done events; the agent copies it into the
	// transcript's [Part.Provider].
	Provider string `json:"provider,omitempty"`
	// URL is a source's address (EventSource).
	URL string `json:"url,omitempty"`
}

// Usage counts tokens of one response. Input includes cache reads/writes.
type Usage struct {
	InputTokens      int64 `json:"inputTokens,omitempty"`
	OutputTokens     int64 `json:"outputTokens,omitempty"`
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
	ReasoningTokens  int64 `json:"reasoningTokens,omitempty"`
}

// FinishReason is why a response ended.
type FinishReason string

const (
	FinishEndTurn   FinishReason = "end_turn"
	FinishToolUse   FinishReason = "tool_use"
	FinishMaxTokens FinishReason = "max_tokens"
	FinishRefusal   FinishReason = "refusal"
)

// Backend streams model responses. Implementations must be safe for
// concurrent use by several sessions.
//
// Stream returns an iterator of events for one request. The iterator yields
// events until an [EventFinish] or an error (yielded once, as the last
// element); the consumer may stop early by breaking out of the loop, and the
// backend then releases everything the stream held. Cancelling ctx ends the
// stream promptly with ctx's error.
type Backend interface {
	Stream(ctx context.Context, req *Request) iter.Seq2[Event, error]
}

// ModelInfo describes one model of a provider's catalog.
type ModelInfo struct {
	ID              string `json:"id"`
	Name            string `json:"name,omitempty"`
	ContextWindow   int    `json:"contextWindow,omitempty"`
	MaxOutputTokens int    `json:"maxOutputTokens,omitempty"`
	Tools           bool   `json:"tools,omitempty"`
	Images          bool   `json:"images,omitempty"`
	Audio           bool   `json:"audio,omitempty"`
	Reasoning       bool   `json:"reasoning,omitempty"`
	// WebSearch: the provider's own web search is available
	// (Request.WebSearch).
	WebSearch   bool    `json:"webSearch,omitempty"`
	InputPrice  float64 `json:"inputPrice,omitempty"`  // USD per million input tokens
	OutputPrice float64 `json:"outputPrice,omitempty"` // USD per million output tokens
}

// ErrorKind classifies model errors for retries and for the user's message.
type ErrorKind string

const (
	ErrAuth            ErrorKind = "auth"             // bad or missing credentials: never retried
	ErrQuota           ErrorKind = "quota"            // billing/quota exhausted: never retried
	ErrRateLimit       ErrorKind = "rate_limit"       // 429: retried
	ErrOverloaded      ErrorKind = "overloaded"       // 529/503/overloaded_error: retried
	ErrServer          ErrorKind = "server"           // other 5xx: retried
	ErrNetwork         ErrorKind = "network"          // connection failure or cut stream: retried
	ErrContextOverflow ErrorKind = "context_overflow" // prompt too long: not retried
	ErrInvalidRequest  ErrorKind = "invalid_request"  // 4xx the request caused: not retried
	ErrReplay          ErrorKind = "replay"           // replay script error or exhaustion
)

// Error is a classified model error.
type Error struct {
	Kind       ErrorKind
	Status     int           // HTTP status, 0 if none
	RetryAfter time.Duration // server's hint, 0 if none
	Message    string
	Err        error // underlying error, may be nil
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Status != 0 {
		return fmt.Sprintf("model %s error (HTTP %d): %s", e.Kind, e.Status, msg)
	}
	return fmt.Sprintf("model %s error: %s", e.Kind, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether a request failing with e may be retried.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case ErrRateLimit, ErrOverloaded, ErrServer, ErrNetwork:
		return true
	}
	return false
}

// KindOf returns the ErrorKind of err, or "" when err is not a model error.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// ParseRef splits a "provider/model" reference at the first slash.
func ParseRef(ref string) (provider, model string, err error) {
	for i := 0; i < len(ref); i++ {
		if ref[i] == '/' {
			if i == 0 || i == len(ref)-1 {
				break
			}
			return ref[:i], ref[i+1:], nil
		}
	}
	return "", "", fmt.Errorf("model %q: want provider/model (for example anthropic/claude-sonnet-4-5 or replay/path/to/script.jsonl)", ref)
}
