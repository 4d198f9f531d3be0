package openaierr

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"acpd/model"
)

func TestParse(t *testing.T) {
	tests := []struct {
		raw  string
		want *APIError
	}{
		{`{"error":{"message":"m","type":"t","code":"c"}}`, &APIError{Message: "m", Type: "t", Code: "c"}},
		{`{"error":{"message":"m","code":402}}`, &APIError{Message: "m", Code: "402"}},
		{`{"error":"model not found"}`, &APIError{Message: "model not found"}},
		{`{"type":"error","code":"rate_limit_exceeded","message":"slow","param":null}`, &APIError{Message: "slow", Type: "error", Code: "rate_limit_exceeded"}},
		{`{"detail":"Not Found"}`, &APIError{Message: "Not Found"}},
		{`{"ok":true}`, nil},
		{`<html>`, nil},
	}
	for _, tt := range tests {
		got := Parse([]byte(tt.raw))
		if (got == nil) != (tt.want == nil) || (got != nil && *got != *tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.raw, got, tt.want)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		status int
		e      APIError
		want   model.ErrorKind
	}{
		{401, APIError{Message: "bad key"}, model.ErrAuth},
		{429, APIError{Code: "insufficient_quota"}, model.ErrQuota},
		{429, APIError{Code: "rate_limit_exceeded"}, model.ErrRateLimit},
		{400, APIError{Message: "This model's maximum context length is 8192 tokens."}, model.ErrContextOverflow},
		{400, APIError{Type: "invalid_request_error"}, model.ErrInvalidRequest},
		{503, APIError{}, model.ErrOverloaded},
		{500, APIError{}, model.ErrServer},
		{0, APIError{Code: "429", Message: "upstream rate limited"}, model.ErrRateLimit},
		{0, APIError{Message: "boom"}, model.ErrServer},
	}
	for _, tt := range tests {
		e := tt.e
		if got := Classify(tt.status, nil, &e); got.Kind != tt.want || got.Status != tt.status || got.Message == "" {
			t.Errorf("%d %+v: %+v, want %s", tt.status, tt.e, got, tt.want)
		}
	}
	got := Classify(429, http.Header{"Retry-After": {"2"}}, &APIError{Message: strings.Repeat("é", 2000)})
	if got.RetryAfter != 2*time.Second || len(got.Message) > MaxMessage+3 || !strings.HasSuffix(got.Message, "...") {
		t.Errorf("retry/truncation: %+v", got)
	}
}
