// Package openaierr parses and classifies the error answers of OpenAI's
// APIs (Chat Completions and Responses) and of the servers that imitate
// them, so that every OpenAI dialect maps the same answer to the same
// [model.ErrorKind].
package openaierr

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"acpd/model"
	"acpd/model/internal/sse"
)

// APIError is the error object of OpenAI and of compatible servers.
type APIError struct {
	Message string
	Type    string
	Code    string // string or number in the wire format
}

// Parse extracts an error from a response body or stream event. It
// accepts {"error":{"message","type","code"}} (OpenAI, vLLM, llama.cpp,
// OpenRouter with numeric codes), {"error":"text"} (Ollama) and
// {"message":...,"code":...} / {"detail":...} (including the Responses
// API's "error" stream event). It returns nil when raw holds none of these.
func Parse(raw []byte) *APIError {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &body) != nil {
		return nil
	}
	if s := jsonText(body.Error); s != "" && body.Error[0] == '"' {
		return &APIError{Message: s}
	}
	if len(body.Error) > 0 && body.Error[0] == '{' {
		var obj struct {
			Message json.RawMessage `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		if json.Unmarshal(body.Error, &obj) == nil {
			return &APIError{Message: jsonText(obj.Message), Type: obj.Type, Code: jsonText(obj.Code)}
		}
	}
	if msg := jsonText(body.Message); msg != "" {
		return &APIError{Message: msg, Type: body.Type, Code: jsonText(body.Code)}
	}
	if msg := jsonText(body.Detail); msg != "" {
		return &APIError{Message: msg}
	}
	return nil
}

// jsonText renders a JSON string or number as text, other JSON compactly,
// and null or nothing as "".
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// Classify turns an error answer into a *model.Error. status is the HTTP
// status, 0 for an error inside a stream; h supplies Retry-After and may be
// nil.
func Classify(status int, h http.Header, e *APIError) *model.Error {
	out := sse.NewError(status, h, e.Message)
	msg := out.Message
	code, typ := strings.ToLower(e.Code), strings.ToLower(e.Type)
	if status == 0 {
		// Errors inside a stream: OpenRouter puts an HTTP status in code.
		if n, err := strconv.Atoi(code); err == nil && n >= 400 && n < 600 {
			status = n
		}
	}
	switch {
	case code == "insufficient_quota" || typ == "insufficient_quota" || status == http.StatusPaymentRequired:
		out.Kind = model.ErrQuota
	case code == "context_length_exceeded" || typ == "exceed_context_size_error" || contextOverflow(msg):
		out.Kind = model.ErrContextOverflow
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		code == "invalid_api_key" || typ == "authentication_error":
		out.Kind = model.ErrAuth
	case status == http.StatusTooManyRequests || code == "rate_limit_exceeded" || typ == "rate_limit_error":
		out.Kind = model.ErrRateLimit
	case status == http.StatusServiceUnavailable || status == 529 || typ == "overloaded_error" || code == "overloaded":
		out.Kind = model.ErrOverloaded
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500:
		out.Kind = model.ErrServer
	case status >= 300: // 3xx: a redirect the client refused to follow
		out.Kind = model.ErrInvalidRequest
	case typ == "invalid_request_error":
		out.Kind = model.ErrInvalidRequest
	default:
		// An error inside an accepted stream is the server's failure.
		out.Kind = model.ErrServer
	}
	return out
}

// MaxMessage bounds the message kept from an error body (an HTML error page
// can be large); longer messages are cut.
const MaxMessage = sse.MaxErrorMessage

// contextOverflow recognises "prompt too long" messages of servers that
// send no code (vLLM, llama.cpp, LM Studio, Groq).
func contextOverflow(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{
		"maximum context length",
		"context length exceeded",
		"context_length_exceeded",
		"exceeds the available context size",
		"exceeds the context window",
		"prompt is too long",
		"input is too long",
		"reduce the length of the messages",
	} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// Dialect is the HTTP plumbing of OpenAI's APIs (Chat Completions and
// Responses): the key as a bearer token, and errors parsed by [Parse] and
// classified by [Classify] (a body that is no error object becomes the
// message). Its MaxEventBytes bounds one SSE event: servers that send a
// whole tool call in one chunk, and the Responses API's done events,
// which repeat a whole item, need room.
var Dialect = sse.Dialect{
	BaseURL:       "https://api.openai.com/v1",
	KeyHeader:     "Authorization",
	KeyPrefix:     "Bearer ",
	MaxEventBytes: MaxEventBytes,
	Error:         answerError,
	NotStreaming:  "server answered with JSON instead of an event stream; does it support stream: true?",
}

// MaxEventBytes is the event size limit of [Dialect].
const MaxEventBytes = 16 << 20

// answerError is [Dialect]'s Error (see sse.Answer).
func answerError(status int, h http.Header, raw []byte) error {
	return sse.Answer(status, h, raw, Parse, func(body string) *APIError { return &APIError{Message: strings.TrimSpace(body)} }, Classify)
}
