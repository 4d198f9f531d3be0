package model

import (
	"net/http"
	"time"
)

// HTTPOptions is the HTTP plumbing every HTTP dialect's Options embeds
// (openai, responses, anthropic, gemini). Each dialect documents its
// default BaseURL, the version path it accepts, and the header carrying
// APIKey.
type HTTPOptions struct {
	// BaseURL is the API root; empty means the dialect's default. A query
	// in it applies to every request, like Query.
	BaseURL string
	// APIKey is sent in the dialect's key header when not empty.
	APIKey string
	// Headers are added to every request and override the defaults.
	Headers map[string]string
	// Query parameters are added to every request URL (Azure's
	// "api-version"), after (and overriding) any query BaseURL has.
	Query map[string]string
	// HTTPClient sends the requests; nil means http.DefaultClient.
	HTTPClient *http.Client
	// IdleTimeout is the longest wait for response headers and then for
	// each further byte of the stream; 0 means 5 minutes. An idle stream
	// fails with a retryable ErrNetwork.
	IdleTimeout time.Duration
}
