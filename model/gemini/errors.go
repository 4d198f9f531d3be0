package gemini

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"acpd/model"
	"acpd/model/internal/sse"
)

// apiError is a google.rpc.Status error as the Gemini API sends it:
// {"error":{"code":429,"message":...,"status":"RESOURCE_EXHAUSTED",
// "details":[...]}}.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Details []struct {
		Type       string `json:"@type"`
		Reason     string `json:"reason"`     // ErrorInfo
		RetryDelay string `json:"retryDelay"` // RetryInfo, e.g. "38s"
		Violations []struct {
			QuotaID    string `json:"quotaId"`
			QuotaValue string `json:"quotaValue"`
		} `json:"violations"` // QuotaFailure
	} `json:"details"`
}

// parseAPIError extracts the error of a {"error":{...}} body, or of the
// one-element array [{"error":{...}}] some endpoints send; nil when raw is
// neither.
func parseAPIError(raw []byte) *apiError {
	type body struct {
		Error *apiError `json:"error"`
	}
	var b body
	if json.Unmarshal(raw, &b) != nil {
		var arr []body
		if json.Unmarshal(raw, &arr) != nil || len(arr) == 0 {
			return nil
		}
		b = arr[0]
	}
	if b.Error == nil || (b.Error.Message == "" && b.Error.Status == "" && b.Error.Code == 0) {
		return nil
	}
	return b.Error
}

// classify turns an error answer into a *model.Error. status is the HTTP
// status, 0 for an error inside a stream; h supplies Retry-After and may be
// nil.
//
// 429 RESOURCE_EXHAUSTED is a rate limit (retryable, with the delay of the
// error's RetryInfo) even though Gemini words its per-minute limits as
// "You exceeded your current quota": those clear within a minute, on the
// free tier too. It is ErrQuota (not retried) only when waiting cannot
// help: a per-day quota (QuotaFailure quotaId "...PerDay..."), a quota of
// zero (the model is not available on the project's tier), or depleted
// prepaid credits.
func classify(status int, h http.Header, e *apiError) *model.Error {
	out := sse.NewError(status, h, e.Message, e.Status)
	msg := out.Message
	if out.RetryAfter == 0 {
		out.RetryAfter = e.retryDelay()
	}
	if status == 0 && e.Code >= 400 && e.Code < 600 {
		status = e.Code // an error inside the stream carries its code
	}
	gs := e.Status
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden ||
		gs == "UNAUTHENTICATED" || gs == "PERMISSION_DENIED" || e.hasReason("API_KEY_INVALID", "API_KEY_EXPIRED"):
		out.Kind = model.ErrAuth
	case status == http.StatusTooManyRequests || gs == "RESOURCE_EXHAUSTED":
		out.Kind = model.ErrRateLimit
		if e.exhausted() {
			out.Kind = model.ErrQuota
		}
	case contextOverflow(msg):
		out.Kind = model.ErrContextOverflow
	case status == http.StatusServiceUnavailable || status == 529 || gs == "UNAVAILABLE":
		out.Kind = model.ErrOverloaded
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500 ||
		gs == "INTERNAL" || gs == "DEADLINE_EXCEEDED" || gs == "ABORTED" || gs == "UNKNOWN":
		out.Kind = model.ErrServer
	case status >= 300 || gs == "INVALID_ARGUMENT" || gs == "NOT_FOUND" || gs == "FAILED_PRECONDITION" || gs == "OUT_OF_RANGE":
		out.Kind = model.ErrInvalidRequest
	default:
		// An error inside an accepted stream is the server's failure.
		out.Kind = model.ErrServer
	}
	return out
}

func (e *apiError) hasReason(reasons ...string) bool {
	for _, d := range e.Details {
		for _, r := range reasons {
			if d.Reason == r {
				return true
			}
		}
	}
	return false
}

// exhausted reports whether a RESOURCE_EXHAUSTED error will not clear by
// waiting a minute (see classify).
func (e *apiError) exhausted() bool {
	for _, d := range e.Details {
		for _, v := range d.Violations {
			if strings.Contains(v.QuotaID, "PerDay") || v.QuotaValue == "0" {
				return true
			}
		}
	}
	m := strings.ToLower(e.Message)
	return zeroLimit(m) || strings.Contains(m, "credits are depleted")
}

// zeroLimit reports whether m says "limit: 0" (a quota of zero).
func zeroLimit(m string) bool {
	for {
		_, after, ok := strings.Cut(m, "limit: ")
		if !ok {
			return false
		}
		m = after
		n := 0
		for n < len(m) && m[n] >= '0' && m[n] <= '9' {
			n++
		}
		if n > 0 && strings.Trim(m[:n], "0") == "" {
			return true
		}
	}
}

// retryDelay returns the delay of the error's RetryInfo ("38s", "1.5s"),
// 0 when it has none.
func (e *apiError) retryDelay() time.Duration {
	for _, d := range e.Details {
		s, ok := strings.CutSuffix(strings.TrimSpace(d.RetryDelay), "s")
		if !ok {
			continue
		}
		if secs, err := strconv.ParseFloat(s, 64); err == nil && secs > 0 && secs < 1e9 {
			return time.Duration(secs * float64(time.Second))
		}
	}
	return 0
}

// contextOverflow recognises Gemini's "prompt too long" messages, such as
// "The input token count (1200000) exceeds the maximum number of tokens
// allowed (1048576)."
func contextOverflow(msg string) bool {
	m := strings.ToLower(msg)
	return (strings.Contains(m, "input token count") && strings.Contains(m, "exceeds")) ||
		strings.Contains(m, "exceeds the maximum number of tokens") ||
		strings.Contains(m, "context window")
}

// maxErrorMessage bounds the message kept from an error body.
const maxErrorMessage = sse.MaxErrorMessage
