package gemini

import (
	"testing"

	"acpd/model"
	"acpd/model/internal/sse/ssetest"
)

// TestWebSearchRequest: Request.WebSearch adds Google Search grounding (google_search) to the request, and the
// search's queries and sources come back as events.
func TestWebSearchRequest(t *testing.T) {
	ssetest.WebSearch(t, func(o model.HTTPOptions) model.Backend { return New(Options{HTTPOptions: o}) }, "testdata/grounding.sse", "/v1beta/", "gemini-2.5-flash")
}
