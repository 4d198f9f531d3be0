// Package openai is a [model.Backend] for the OpenAI Chat Completions
// streaming API and the many servers that speak it (Ollama, vLLM,
// llama.cpp, LM Studio, OpenRouter, Groq, DeepSeek, Azure OpenAI, ...).
//
// It is a thin client over net/http and the shared SSE reader: it posts
// {BaseURL}/chat/completions with stream: true and
// stream_options.include_usage, and translates the chunks to normalised
// events.
//
// Request mapping notes (Chat Completions has no field for these):
//   - reasoning parts of earlier assistant messages are not sent back
//     unless Options.ReasoningContent is set;
//   - a tool result's IsError flag is not sent (its text is);
//   - images returned by tools are sent in a user message that follows the
//     tool messages, since tool messages carry text only;
//   - audio parts are sent as input_audio when they are WAV or MP3 and
//     replaced by a short text note otherwise.
package openai

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"acpd/model"
	"acpd/model/internal/sse"
)

// DefaultBaseURL is the OpenAI API root used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

const (
	// maxEventBytes bounds one SSE event; servers that send a whole tool
	// call in one chunk need room for large arguments.
	maxEventBytes = 16 << 20
	// maxErrorBody bounds how much of an error response is read.
	maxErrorBody = 1 << 20
)

// Options configures a [Backend]. The zero value talks to OpenAI without
// credentials.
type Options struct {
	// BaseURL is the API root including its version path, for example
	// "https://api.openai.com/v1", "http://localhost:11434/v1" or, for
	// Azure, "https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT".
	// Empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer APIKey" when not empty.
	// Azure takes its key in the "api-key" header instead: leave APIKey
	// empty and set Headers["api-key"].
	APIKey string
	// Headers are added to every request and override the defaults.
	Headers map[string]string
	// Query parameters are added to every request URL (Azure's
	// "api-version"), after any query BaseURL has.
	Query map[string]string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// IdleTimeout is the longest wait for response headers and then for
	// each further byte of the stream; 0 means 5 minutes. An idle stream
	// fails with a retryable model.ErrNetwork.
	IdleTimeout time.Duration
	// MaxTokensField names the request field carrying
	// Request.MaxOutputTokens: "max_completion_tokens" (the default, what
	// OpenAI wants) or "max_tokens" (older compatible servers).
	MaxTokensField string
	// ReasoningContent sends the reasoning text of earlier assistant
	// messages back in their "reasoning_content" field, which DeepSeek's
	// thinking mode requires during tool calls. Off, reasoning is not sent
	// (OpenAI has no such field).
	ReasoningContent bool
}

// Backend streams chat completions. It is safe for concurrent use; it holds
// no per-request state.
type Backend struct {
	base      string
	query     url.Values
	header    http.Header
	client    *http.Client
	idle      time.Duration
	maxTokens string
	reasoning bool
	// idPrefix returns the prefix of ids for tool calls the server sent
	// without one (replaced in tests for stable output).
	idPrefix func() string
}

// New returns a Backend for opts. Options are copied; later changes to the
// maps do not affect the Backend.
func New(opts Options) *Backend {
	b := &Backend{
		base:      strings.TrimRight(opts.BaseURL, "/"),
		query:     url.Values{},
		header:    http.Header{},
		client:    opts.HTTPClient,
		idle:      opts.IdleTimeout,
		maxTokens: opts.MaxTokensField,
		reasoning: opts.ReasoningContent,
		idPrefix:  newIDPrefix,
	}
	if b.base == "" {
		b.base = DefaultBaseURL
	}
	// A query in BaseURL applies to every endpoint, like Options.Query.
	if base, rawQuery, ok := strings.Cut(b.base, "?"); ok {
		b.base = strings.TrimRight(base, "/")
		b.query, _ = url.ParseQuery(rawQuery) // keeps the valid pairs
	}
	if b.maxTokens == "" {
		b.maxTokens = "max_completion_tokens"
	}
	for k, v := range opts.Query {
		b.query.Set(k, v)
	}
	if opts.APIKey != "" {
		b.header.Set("Authorization", "Bearer "+opts.APIKey)
	}
	for k, v := range opts.Headers {
		b.header.Set(k, v)
	}
	return b
}

// endpoint returns base+path with the configured query.
func (b *Backend) endpoint(path string) string {
	if len(b.query) == 0 {
		return b.base + path
	}
	return b.base + path + "?" + b.query.Encode()
}

// Stream implements [model.Backend]. It sends one request; failures are
// *model.Error values (or ctx's error once ctx ends) and are not retried
// here (see package retry).
func (b *Backend) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		body, err := b.requestBody(req)
		if err != nil {
			yield(model.Event{}, err)
			return
		}
		h := b.header.Clone()
		h.Set("Content-Type", "application/json")
		h.Set("Accept", "text/event-stream")
		s, err := sse.Open(ctx, sse.Call{Client: b.client, Method: http.MethodPost,
			URL: b.endpoint("/chat/completions"), Header: h, Body: body, Idle: b.idle})
		if err != nil {
			yield(model.Event{}, err)
			return
		}
		defer s.Close()
		if err := checkResponse(s); err != nil {
			yield(model.Event{}, err)
			return
		}
		d := decoder{idPrefix: b.idPrefix()}
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
	if resp.StatusCode/100 == 2 {
		if e := parseAPIError(raw); e != nil {
			return classify(0, nil, e)
		}
		return &model.Error{Kind: model.ErrInvalidRequest, Status: resp.StatusCode,
			Message: "server answered with JSON instead of an event stream; does it support stream: true?"}
	}
	e := parseAPIError(raw)
	if e == nil {
		e = &apiError{Message: strings.TrimSpace(string(raw))}
	}
	return classify(resp.StatusCode, resp.Header, e)
}

// Models lists the server's models with GET {BaseURL}/models. Only the
// OpenAI list shape {"object":"list","data":[{"id":...},...]} is accepted;
// optional details some servers add (OpenRouter's name, context_length,
// pricing and modalities) are used when present.
func (b *Backend) Models(ctx context.Context) ([]model.ModelInfo, error) {
	h := b.header.Clone()
	h.Set("Accept", "application/json")
	s, err := sse.Open(ctx, sse.Call{Client: b.client, Method: http.MethodGet,
		URL: b.endpoint("/models"), Header: h, Idle: b.idle})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	raw, err := s.ReadAll(32 << 20)
	if err != nil {
		return nil, s.Err(err)
	}
	if s.Response.StatusCode/100 != 2 {
		e := parseAPIError(raw)
		if e == nil {
			e = &apiError{Message: strings.TrimSpace(string(raw))}
		}
		return nil, classify(s.Response.StatusCode, s.Response.Header, e)
	}
	return parseModels(raw)
}

func parseModels(raw []byte) ([]model.ModelInfo, error) {
	var list struct {
		Object *string             `json:"object"`
		Data   *[]*json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("openai: models: not an OpenAI model list: %w", err)
	}
	if list.Data == nil || (list.Object != nil && *list.Object != "list") {
		return nil, errors.New(`openai: models: not an OpenAI model list (want {"object":"list","data":[...]})`)
	}
	out := make([]model.ModelInfo, 0, len(*list.Data))
	for i, entry := range *list.Data {
		// Optional details are read leniently: servers disagree on them.
		var m struct {
			ID            string          `json:"id"`
			Name          json.RawMessage `json:"name"`
			ContextLength json.RawMessage `json:"context_length"` // OpenRouter
			ContextWindow json.RawMessage `json:"context_window"` // Groq
			MaxModelLen   json.RawMessage `json:"max_model_len"`  // vLLM
			Pricing       struct {
				Prompt     json.RawMessage `json:"prompt"`
				Completion json.RawMessage `json:"completion"`
			} `json:"pricing"`
			Architecture struct {
				InputModalities []json.RawMessage `json:"input_modalities"`
			} `json:"architecture"`
			TopProvider struct {
				MaxCompletionTokens json.RawMessage `json:"max_completion_tokens"`
			} `json:"top_provider"`
			SupportedParameters []json.RawMessage `json:"supported_parameters"`
		}
		if entry == nil || json.Unmarshal(*entry, &m) != nil || m.ID == "" {
			return nil, fmt.Errorf("openai: models: entry %d is not a model with a string id", i)
		}
		info := model.ModelInfo{
			ID:              m.ID,
			Name:            str(m.Name),
			ContextWindow:   int(max(num(m.ContextLength), num(m.ContextWindow), num(m.MaxModelLen))),
			MaxOutputTokens: int(num(m.TopProvider.MaxCompletionTokens)),
			// OpenRouter prices are USD per token, as strings.
			InputPrice:  num(m.Pricing.Prompt) * 1e6,
			OutputPrice: num(m.Pricing.Completion) * 1e6,
		}
		for _, mod := range m.Architecture.InputModalities {
			switch str(mod) {
			case "image":
				info.Images = true
			case "audio":
				info.Audio = true
			}
		}
		for _, p := range m.SupportedParameters {
			switch str(p) {
			case "tools":
				info.Tools = true
			case "reasoning":
				info.Reasoning = true
			}
		}
		out = append(out, info)
	}
	return out, nil
}

// str returns raw as a string when it is a JSON string, else "".
func str(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// num returns raw as a non-negative finite number when it is a JSON number
// or a string holding one, else 0.
func num(raw json.RawMessage) float64 {
	s := str(raw)
	if s == "" {
		s = string(raw)
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > 1e15 {
		return 0
	}
	return f
}

// newIDPrefix returns a random prefix for tool call ids a server omits.
func newIDPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "call_" + hex.EncodeToString(b[:]) + "_"
}
