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
	"mime"
	"net/http"
	"strings"
	"time"

	"acpd/model"
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

const (
	maxEventBytes = 16 << 20
	maxErrorBody  = 1 << 20
)

// Options configures a [Backend].
type Options struct {
	// BaseURL is the API root, "https://api.anthropic.com" when empty; a
	// trailing "/v1" is accepted. Requests go to {BaseURL}/v1/messages.
	BaseURL string
	// APIKey is sent in the x-api-key header when not empty.
	APIKey string
	// Headers are added to every request and override the defaults (for
	// example anthropic-beta).
	Headers map[string]string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// IdleTimeout is the longest wait for response headers and then for
	// each further byte of the stream; 0 means 5 minutes. An idle stream
	// fails with a retryable model.ErrNetwork.
	IdleTimeout time.Duration
}

// Backend streams Messages API responses. It is safe for concurrent use;
// it holds no per-request state.
type Backend struct {
	url    string
	header http.Header
	client *http.Client
	idle   time.Duration
}

// New returns a Backend for opts. Options are copied.
func New(opts Options) *Backend {
	base := strings.TrimRight(opts.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	base = strings.TrimSuffix(base, "/v1")
	b := &Backend{url: base + "/v1/messages", header: http.Header{}, client: opts.HTTPClient, idle: opts.IdleTimeout}
	b.header.Set("anthropic-version", apiVersion)
	if opts.APIKey != "" {
		b.header.Set("x-api-key", opts.APIKey)
	}
	for k, v := range opts.Headers {
		b.header.Set(k, v)
	}
	return b
}

// Stream implements [model.Backend]. It sends one request; failures are
// *model.Error values (or ctx's error once ctx ends) and are not retried
// here (see package retry).
func (b *Backend) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		body, err := requestBody(req)
		if err != nil {
			yield(model.Event{}, err)
			return
		}
		h := b.header.Clone()
		h.Set("Content-Type", "application/json")
		h.Set("Accept", "text/event-stream")
		s, err := sse.Open(ctx, sse.Call{Client: b.client, Method: http.MethodPost, URL: b.url, Header: h, Body: body, Idle: b.idle})
		if err != nil {
			yield(model.Event{}, err)
			return
		}
		defer s.Close()
		if err := checkResponse(s); err != nil {
			yield(model.Event{}, err)
			return
		}
		var d decoder
		err = d.run(sse.NewReader(s, maxEventBytes), func(ev model.Event) bool { return yield(ev, nil) })
		if err != nil && err != errStopped {
			yield(model.Event{}, s.Err(err))
		}
	}
}

// checkResponse turns an unsuccessful or non-streaming response into a
// classified error.
func checkResponse(s *sse.Stream) error {
	resp := s.Response
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode/100 == 2 && ct != "application/json" {
		return nil
	}
	raw, err := s.ReadAll(maxErrorBody)
	if err != nil && len(raw) == 0 && resp.StatusCode/100 == 2 {
		return s.Err(err)
	}
	e := parseAPIError(raw)
	if resp.StatusCode/100 == 2 {
		if e != nil {
			return classify(0, nil, e)
		}
		return &model.Error{Kind: model.ErrInvalidRequest, Status: resp.StatusCode,
			Message: "server answered with JSON instead of an event stream"}
	}
	if e == nil {
		e = &apiError{Message: string(raw)}
	}
	return classify(resp.StatusCode, resp.Header, e)
}
