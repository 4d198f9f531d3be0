package anthropic

import (
	"testing"

	"acpd/model"
	"acpd/model/internal/sse/ssetest"
)

// TestWebSearchRequest: Request.WebSearch adds Anthropic's web search tool (web_search_20250305, max_uses) to the request, and the
// search's queries and sources come back as events.
func TestWebSearchRequest(t *testing.T) {
	ssetest.WebSearch(t, func(o model.HTTPOptions) model.Backend { return New(Options{HTTPOptions: o}) }, "testdata/server_tools.sse", "/v1/", "claude-sonnet-4-5")
}
