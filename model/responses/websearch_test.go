package responses

import (
	"testing"

	"acpd/model"
	"acpd/model/internal/sse/ssetest"
)

// TestWebSearchRequest: Request.WebSearch adds Responses' web_search tool and its sources include to the request, and the
// search's queries and sources come back as events.
func TestWebSearchRequest(t *testing.T) {
	ssetest.WebSearch(t, func(o model.HTTPOptions) model.Backend { return New(Options{HTTPOptions: o}) }, "testdata/ignored_events.sse", "/openai/v1/", "gpt-5")
}
