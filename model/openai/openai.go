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
	"strconv"
	"strings"

	"acpd/model"
	"acpd/model/internal/body"
	"acpd/model/internal/openaierr"
	"acpd/model/internal/sse"
)

// DefaultBaseURL is the OpenAI API root used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// maxEventBytes bounds one SSE event (see [openaierr.Dialect]).
const maxEventBytes = openaierr.MaxEventBytes

// Options configures a [Backend]. The zero value talks to OpenAI without
// credentials. BaseURL is the API root including its version path, for
// example "https://api.openai.com/v1", "http://localhost:11434/v1" or, for
// Azure, "https://RESOURCE.openai.azure.com/openai/deployments/DEPLOYMENT";
// empty means DefaultBaseURL. APIKey is sent as "Authorization: Bearer
// APIKey"; Azure takes its key in the "api-key" header instead: leave
// APIKey empty and set Headers["api-key"].
type Options struct {
	model.HTTPOptions
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
	c         *sse.Client
	maxTokens string
	reasoning bool
	tools     body.ToolMemo // the encodings of the tool lists sent
	// idPrefix returns the prefix of ids for tool calls the server sent
	// without one (replaced in tests for stable output).
	idPrefix func() string
}

// New returns a Backend for opts. Options are copied; later changes to the
// maps do not affect the Backend.
func New(opts Options) *Backend {
	b := &Backend{
		c:         sse.NewClient(opts.HTTPOptions, openaierr.Dialect),
		maxTokens: opts.MaxTokensField,
		reasoning: opts.ReasoningContent,
		idPrefix:  newIDPrefix,
	}
	if b.maxTokens == "" {
		b.maxTokens = "max_completion_tokens"
	}
	return b
}

// Stream implements [model.Backend]. It sends one request; failures are
// *model.Error values (or ctx's error once ctx ends) and are not retried
// here (see package retry).
func (b *Backend) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return b.c.Stream(ctx, "/chat/completions", func() (*body.Payload, error) { return b.requestPayload(req) },
		func() sse.Decoder { return &decoder{idPrefix: b.idPrefix()} })
}

// Models lists the server's models with GET {BaseURL}/models. Only the
// OpenAI list shape {"object":"list","data":[{"id":...},...]} is accepted;
// optional details some servers add (OpenRouter's name, context_length,
// pricing and modalities) are used when present.
func (b *Backend) Models(ctx context.Context) ([]model.ModelInfo, error) {
	raw, err := b.c.Get(ctx, "/models", 32<<20)
	if err != nil {
		return nil, err
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
