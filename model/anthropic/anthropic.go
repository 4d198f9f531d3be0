// Package anthropic is a [model.Backend] for the Anthropic Messages API
// (POST {BaseURL}/v1/messages with stream: true).
//
// It is a thin client over net/http and the shared SSE reader.
//
// Request mapping:
//   - the system prompt is one text block; CacheSystem puts a cache
//     breakpoint on it, CacheTools on the last tool, and Message.Cache on the
//     last cacheable block of that message. The API allows 4 breakpoints:
//     system and tools come first, then the most recent cached messages
//     (older message breakpoints are dropped, since a later breakpoint
//     covers everything before it);
//   - Effort low/medium/high enables extended thinking with a budget of
//     1024/8192/24576 tokens; max_tokens (8192 when the request sets none)
//     is raised to budget+max_tokens when it would not exceed the budget.
//     Thinking stays off while the last assistant message calls tools
//     without a thinking block (after a model switch, or reasoning cut
//     short): the API rejects enabling it in the middle of a tool-use turn;
//   - reasoning parts are sent back only when they came from this dialect
//     (Part.Provider == [Provider]) with a signature (thinking) or opaque
//     data (redacted_thinking); they are placed first in the assistant
//     message, before any tool_use, as the API requires. Reasoning from
//     other providers is dropped: the API cannot verify it;
//   - tool results come first in a user message, as the API requires;
//   - a tool_use part whose input is not a JSON object (arguments cut short
//     by max_tokens) is sent with input {};
//   - audio parts and images of types the API does not take are replaced by
//     a short text note; empty text parts are dropped (the API rejects them).
//
// Stop reasons: end_turn and stop_sequence map to end_turn; tool_use to
// tool_use; max_tokens and model_context_window_exceeded to max_tokens;
// refusal to refusal. pause_turn (only sent when server-side tools run
// long, which this client never requests) and unknown reasons map to
// end_turn.
package anthropic

import (
	"context"
	"iter"
	"net/http"

	"acpd/model"
	"acpd/model/internal/body"
	"acpd/model/internal/sse"
)

// Provider is the [model.Part] Provider value of reasoning this backend
// produces and accepts back. Callers set it on the reasoning parts they
// build from this backend's events.
const Provider = "anthropic"

// DefaultBaseURL is the API root used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.anthropic.com"

// apiVersion is the anthropic-version header value.
const apiVersion = "2023-06-01"

// maxEventBytes bounds one SSE event.
const maxEventBytes = 16 << 20

// Options configures a [Backend]. BaseURL is the API root,
// DefaultBaseURL when empty; a trailing "/v1" is accepted. Requests go to
// {BaseURL}/v1/messages. APIKey is sent in the x-api-key header; Headers
// override the defaults (for example anthropic-beta).
type Options struct {
	model.HTTPOptions
}

// Backend streams Messages API responses. It is safe for concurrent use;
// it holds no per-request state.
type Backend struct {
	c     *sse.Client
	tools body.ToolMemo // the encodings of the tool lists sent
}

// dialect is the HTTP plumbing of the Messages API.
var dialect = sse.Dialect{
	BaseURL:       DefaultBaseURL,
	Version:       "/v1",
	KeyHeader:     "x-api-key",
	Header:        [][2]string{{"Anthropic-Version", apiVersion}},
	MaxEventBytes: maxEventBytes,
	Error:         answerError,
	NotStreaming:  "server answered with JSON instead of an event stream",
}

// New returns a Backend for opts. Options are copied.
func New(opts Options) *Backend {
	return &Backend{c: sse.NewClient(opts.HTTPOptions, dialect)}
}

// Stream implements [model.Backend]. It sends one request; failures are
// *model.Error values (or ctx's error once ctx ends) and are not retried
// here (see package retry).
func (b *Backend) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return b.c.Stream(ctx, "/messages", func() (*body.Payload, error) { return requestPayload(&b.tools, req) }, func() sse.Decoder { return &decoder{} })
}

// answerError is the dialect's Error (see sse.Answer).
func answerError(status int, h http.Header, raw []byte) error {
	return sse.Answer(status, h, raw, parseAPIError, func(body string) *apiError { return &apiError{Message: body} }, classify)
}
