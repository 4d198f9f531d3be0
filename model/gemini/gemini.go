// Package gemini is a [model.Backend] for the Google Gemini API (the
// Generative Language API, v1beta): it posts
// {BaseURL}/v1beta/models/{model}:streamGenerateContent?alt=sse with the
// key in the x-goog-api-key header (never in the URL) and translates the
// streamed GenerateContentResponse objects to normalised events.
//
// Request mapping:
//   - the system prompt is the systemInstruction; assistant messages are
//     "model" contents, user messages "user" contents;
//   - images and audio are inlineData parts; image and audio types Gemini
//     does not take are replaced by a short text note;
//   - tool calls are functionCall parts {name, args} (args is {} when the
//     recorded input is not a JSON object, as after max_tokens). Call ids
//     are not sent: Gemini pairs calls and responses by order and name,
//     and some Gemini-compatible endpoints reject the id field;
//   - tool results are functionResponse parts named after the call they
//     answer, with response {"output": text} or, when IsError is set,
//     {"error": text}. They form one "user" content; images returned by
//     tools, and the rest of the user message, follow in a second one;
//   - reasoning and thought signatures are sent back only when they came
//     from this dialect (Part.Provider == [Provider]): a reasoning part with
//     text and a signature becomes a thought part carrying it; a reasoning
//     part holding only a signature (Gemini put it on a text part or on an
//     empty part) is put back on the text part it followed, or sent as an
//     empty text part carrying it. Reasoning text without a signature and
//     reasoning from other providers are dropped (Gemini reads nothing from
//     unsigned thoughts). A tool_use part's signature goes back on its
//     functionCall part, as Gemini 2.5 and 3 require;
//   - Gemini 3 rejects a turn whose function calls carry no signature (a
//     conversation begun with another provider, or calls cut short): for
//     models newer than Gemini 2 the first functionCall of such a message
//     gets the documented "skip_thought_signature_validator" placeholder;
//   - Effort low/medium/high sets generationConfig.thinkingConfig to a
//     thinking budget of 1024/8192/24576 tokens with includeThoughts
//     (thoughts count against maxOutputTokens, so a MaxOutputTokens not
//     above the budget is raised by it);
//     Effort off sets a budget of 0, except on Pro models of Gemini 2.5 and
//     later, which cannot stop thinking: there it only leaves out the
//     thought summaries. Without Effort no thinkingConfig is sent;
//   - tool schemas are converted from JSON Schema to the OpenAPI subset
//     Gemini accepts (see convertSchema): local $refs are inlined, type
//     arrays become nullable/anyOf, const becomes enum, keywords Gemini
//     rejects (additionalProperties, $schema, patternProperties, ...) are
//     dropped, and a tool without parameters declares none.
//
// Stream mapping: text parts are text deltas, thought parts reasoning
// deltas; each functionCall (Gemini sends whole calls) becomes tool_start,
// one tool_delta with the arguments and tool_done, with a generated id
// when Gemini gives none. A thoughtSignature is reported with Provider set:
// on a functionCall part in its tool_done event, on a thought part in the
// reasoning_done event ending that thought, on a text or empty part in a
// reasoning_done event (without text) right after the text. Finish
// reasons: STOP is end_turn (tool_use when the response called tools),
// MAX_TOKENS max_tokens; SAFETY, RECITATION, LANGUAGE, BLOCKLIST,
// PROHIBITED_CONTENT, SPII, IMAGE_SAFETY and a prompt blocked by
// promptFeedback.blockReason are refusal; MALFORMED_FUNCTION_CALL,
// UNEXPECTED_TOOL_CALL and TOO_MANY_TOOL_CALLS fail the stream with a
// retryable ErrServer (the model produced no usable answer); other reasons
// are end_turn. A stream that ends without a finish reason fails with
// ErrNetwork.
//
// Errors: 401, 403 and an invalid API key (400 API_KEY_INVALID) are
// ErrAuth; 429 RESOURCE_EXHAUSTED is ErrRateLimit with the delay of the
// error's RetryInfo, even when worded "You exceeded your current quota"
// (Gemini's per-minute limits, free tier included, clear within a minute),
// and ErrQuota only when waiting cannot help: a per-day quota, a quota of
// zero, or depleted prepaid credits; 400 "input token count ... exceeds"
// is ErrContextOverflow; 503 UNAVAILABLE ErrOverloaded; other 5xx
// ErrServer; other 4xx ErrInvalidRequest.
//
// Usage: InputTokens is promptTokenCount (cached tokens included, as
// model.Usage wants), OutputTokens candidatesTokenCount plus
// thoughtsTokenCount (Gemini bills thoughts as output), ReasoningTokens
// thoughtsTokenCount, CacheReadTokens cachedContentTokenCount.
package gemini

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"acpd/model"
	"acpd/model/internal/body"
	"acpd/model/internal/sse"
)

// Provider is the [model.Part] Provider value of the thought signatures
// this backend produces and accepts back; the events carrying them have
// it set.
const Provider = "gemini"

// DefaultBaseURL is the API root used when Options.BaseURL is empty.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// maxEventBytes bounds one SSE event: Gemini sends whole function calls,
// and large arguments, in one event.
const maxEventBytes = 16 << 20

// Options configures a [Backend]. BaseURL is the API root, DefaultBaseURL
// when empty; a trailing "/v1beta" is accepted. Requests go to
// {BaseURL}/v1beta/.... APIKey is sent in the x-goog-api-key header.
type Options struct {
	model.HTTPOptions
}

// Backend streams Gemini responses. It is safe for concurrent use; it holds
// no per-request state.
type Backend struct {
	c     *sse.Client   // under /v1beta
	tools body.ToolMemo // the encodings of the tool lists sent
	// idPrefix returns the prefix of ids generated for function calls
	// Gemini sent without one (replaced in tests for stable output).
	idPrefix func() string
}

// dialect is the HTTP plumbing of the Gemini API.
var dialect = sse.Dialect{
	BaseURL:       DefaultBaseURL,
	Version:       "/v1beta",
	KeyHeader:     "x-goog-api-key",
	MaxEventBytes: maxEventBytes,
	Error:         answerError,
	NotStreaming:  "server answered with JSON instead of an event stream (is alt=sse supported?)",
}

// New returns a Backend for opts. Options are copied.
func New(opts Options) *Backend {
	return &Backend{c: sse.NewClient(opts.HTTPOptions, dialect), idPrefix: newIDPrefix}
}

// streamPath returns the streaming endpoint of modelName: a bare id goes
// under models/, a full resource name ("models/x", "tunedModels/y") is used
// as it is.
func streamPath(modelName string) string {
	if !strings.Contains(modelName, "/") {
		modelName = "models/" + modelName
	}
	segs := strings.Split(modelName, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "/" + strings.Join(segs, "/") + ":streamGenerateContent?alt=sse"
}

// Stream implements [model.Backend]. It sends one request; failures are
// *model.Error values (or ctx's error once ctx ends) and are not retried
// here (see package retry).
func (b *Backend) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return b.c.Stream(ctx, streamPath(strings.TrimSpace(req.Model)), func() (*body.Payload, error) { return requestPayload(&b.tools, req) },
		func() sse.Decoder { return &decoder{idPrefix: b.idPrefix()} })
}

// newIDPrefix returns a random prefix for the ids of function calls Gemini
// sends without one, unique across responses so that tool call ids stay
// unique within a session.
func newIDPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return "call_" + hex.EncodeToString(b[:]) + "_"
}

// answerError is the dialect's Error (see sse.Answer).
func answerError(status int, h http.Header, raw []byte) error {
	return sse.Answer(status, h, raw, parseAPIError, func(body string) *apiError { return &apiError{Message: strings.TrimSpace(body)} }, classify)
}
