// Package responses is a [model.Backend] for the OpenAI Responses API
// (POST {BaseURL}/responses), which OpenAI's reasoning models prefer and
// which alone returns their reasoning for later turns.
//
// Requests are stateless: store is false and the full conversation is sent
// each time, with include ["reasoning.encrypted_content"] so that the
// model's reasoning comes back encrypted and can be passed back.
//
// Request mapping:
//   - the system prompt is "instructions";
//   - user messages are message items with input_text and input_image
//     content; audio parts are replaced by a short text note; tool results
//     are function_call_output items (their text; the IsError flag has no
//     field) placed before the rest of the message, and images returned by
//     tools follow in the user message item;
//   - assistant messages become, in order, message items with output_text
//     content, function_call items (arguments as the model produced them)
//     and reasoning items;
//   - reasoning goes back only when it came from this dialect
//     (Part.Provider == [Provider]) with the encrypted content of its
//     reasoning item: the item is sent as {type, id, summary,
//     encrypted_content}. Other reasoning is dropped;
//   - tools are {type: "function", name, description, parameters};
//   - Effort low/medium/high sets reasoning {effort, summary: "auto"};
//     Effort off sends no reasoning parameter (the model's default: not
//     every model can turn reasoning off), nor does an empty Effort.
//
// Stream mapping: output_text deltas are text, refusal deltas text that
// finishes with refusal, reasoning summary deltas (and raw reasoning_text
// deltas of compatible servers) reasoning; a new summary part starts with
// a blank line. A function_call item is announced (tool_start) when it is
// added, streams its argument deltas and completes (tool_done) at its
// arguments' done event or at the item's done event, whichever comes
// first. A reasoning item's done event ends the reasoning with
// reasoning_done carrying the whole item JSON as Opaque (Provider set);
// Redacted is set when the item had no summary text. Terminal events:
// response.completed finishes with tool_use when the response called
// tools, refusal after a refusal, else end_turn; response.incomplete
// finishes with max_tokens (reason max_output_tokens, and unknown reasons)
// or refusal (content_filter); response.failed and the error event fail
// with a classified error. A stream that ends without a terminal event
// fails with ErrNetwork. Usage maps input_tokens (cached tokens
// included), output_tokens (reasoning included), cached_tokens and
// reasoning_tokens.
//
// HTTP errors are classified exactly as package openai classifies them.
package responses

import (
	"context"
	"iter"

	"acpd/model"
	"acpd/model/internal/body"
	"acpd/model/internal/openaierr"
	"acpd/model/internal/sse"
	"acpd/model/openai"
)

// Provider is the [model.Part] Provider value of the reasoning this
// backend produces and accepts back; the events carrying it have it set.
const Provider = "openai-responses"

// DefaultBaseURL is the API root used when Options.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// maxEventBytes bounds one SSE event; done events repeat a whole item,
// and response.completed the whole response.
const maxEventBytes = openaierr.MaxEventBytes

// Options configures a [Backend]. The zero value talks to OpenAI without
// credentials. BaseURL is the API root including its version path, for
// example "https://api.openai.com/v1" or, for Azure,
// "https://RESOURCE.openai.azure.com/openai/v1"; empty means
// DefaultBaseURL. Requests go to {BaseURL}/responses. APIKey is sent as
// "Authorization: Bearer APIKey"; Azure takes its key in the "api-key"
// header: leave APIKey empty and set Headers["api-key"].
type Options struct {
	model.HTTPOptions
}

// Backend streams Responses API responses. It is safe for concurrent use;
// it holds no per-request state.
type Backend struct {
	lister *openai.Backend // answers Models
	c      *sse.Client
	tools  body.ToolMemo // the encodings of the tool lists sent
}

// New returns a Backend for opts. Options are copied; later changes to the
// maps do not affect the Backend.
func New(opts Options) *Backend {
	return &Backend{
		c:      sse.NewClient(opts.HTTPOptions, openaierr.Dialect),
		lister: openai.New(openai.Options{HTTPOptions: opts.HTTPOptions}),
	}
}

// Stream implements [model.Backend]. It sends one request; failures are
// *model.Error values (or ctx's error once ctx ends) and are not retried
// here (see package retry).
func (b *Backend) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return b.c.Stream(ctx, "/responses", func() (*body.Payload, error) { return requestPayload(&b.tools, req) },
		func() sse.Decoder { return &decoder{} })
}

// Models lists the server's models with GET {BaseURL}/models, exactly as
// [openai.Backend.Models] does (the Responses API shares the endpoint).
func (b *Backend) Models(ctx context.Context) ([]model.ModelInfo, error) {
	return b.lister.Models(ctx)
}
