package anthropic

import (
	"encoding/json"
	"net/http"
	"strings"

	"acpd/model"
	"acpd/model/internal/sse"
)

// apiError is the error object of the Messages API.
type apiError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// parseAPIError extracts the error of a {"type":"error","error":{...}}
// body; nil when raw is not one.
func parseAPIError(raw []byte) *apiError {
	var body struct {
		Error *apiError `json:"error"`
	}
	if json.Unmarshal(raw, &body) != nil || body.Error == nil || (body.Error.Type == "" && body.Error.Message == "") {
		return nil
	}
	return body.Error
}

// classify turns an error answer into a *model.Error. status is the HTTP
// status, 0 for an error event inside a stream; h supplies Retry-After.
func classify(status int, h http.Header, e *apiError) *model.Error {
	out := sse.NewError(status, h, e.Message, e.Type)
	lower := strings.ToLower(out.Message)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		e.Type == "authentication_error" || e.Type == "permission_error":
		out.Kind = model.ErrAuth
	case status == http.StatusPaymentRequired || e.Type == "billing_error" ||
		strings.Contains(lower, "credit balance"):
		out.Kind = model.ErrQuota
	case status == http.StatusTooManyRequests || e.Type == "rate_limit_error":
		out.Kind = model.ErrRateLimit
	case status == 529 || status == http.StatusServiceUnavailable || e.Type == "overloaded_error":
		out.Kind = model.ErrOverloaded
	case contextOverflow(lower):
		out.Kind = model.ErrContextOverflow
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500 ||
		e.Type == "api_error" || e.Type == "timeout_error":
		out.Kind = model.ErrServer
	case status >= 300 || e.Type == "invalid_request_error" || e.Type == "not_found_error" || e.Type == "request_too_large":
		out.Kind = model.ErrInvalidRequest
	default:
		// An error event inside an accepted stream is the server's failure.
		out.Kind = model.ErrServer
	}
	return out
}

// contextOverflow recognises the API's "prompt too long" messages.
func contextOverflow(lower string) bool {
	return strings.Contains(lower, "prompt is too long") ||
		strings.Contains(lower, "exceed context limit") ||
		strings.Contains(lower, "context window")
}

// maxErrorMessage bounds the message kept from an error body.
const maxErrorMessage = sse.MaxErrorMessage
