package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStatelessSamplingAndRoots runs against a Go SDK server over
// streamable HTTP, which speaks the 2026-07-28 revision: its tool's
// sampling and roots requests reach the Manager's hooks (as input_required
// rounds of the stateless revision), and the session reports that era.
func TestStatelessSamplingAndRoots(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "stateless-test", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{ProtocolStateless}})
	srv.AddTool(&mcp.Tool{Name: "think", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			in := req.Params.InputResponses
			if len(in) == 0 { // first round: ask for a sample and the roots
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
					//lint:ignore SA1019 MCP sampling is deprecated by SEP-2577 but acpd serves it through the deprecation window
					"sample": &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "2+2?"}}}},
					//lint:ignore SA1019 MCP roots are deprecated by SEP-2577 but acpd serves them through the deprecation window
					"roots": &mcp.ListRootsParams{},
				}}, nil
			}
			text := fmt.Sprintf("%T", in["sample"])
			switch r := in["sample"].(type) {
			//lint:ignore SA1019 MCP sampling is deprecated by SEP-2577 but acpd serves it through the deprecation window
			case *mcp.CreateMessageResult:
				if tc, ok := r.Content.(*mcp.TextContent); ok {
					text = tc.Text
				}
			//lint:ignore SA1019 MCP sampling is deprecated by SEP-2577 but acpd serves it through the deprecation window
			case *mcp.CreateMessageWithToolsResult:
				for _, c := range r.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						text = tc.Text
					}
				}
			}
			//lint:ignore SA1019 MCP roots are deprecated by SEP-2577 but acpd serves them through the deprecation window
			if r, ok := in["roots"].(*mcp.ListRootsResult); ok {
				for _, root := range r.Roots {
					text += " " + root.URI
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer hs.Close()
	dir := t.TempDir()
	m := newTestManager(t, Options{Dir: dir, Sample: func(_ context.Context, _ string, req SampleRequest) (SampleResult, error) {
		return SampleResult{Text: "four", Model: "m"}, nil
	}})
	startOK(t, m, Server{Name: "s", URL: hs.URL, Transport: TransportHTTP})
	if st := m.Status(); len(st) != 1 || st[0].ProtocolVersion != ProtocolStateless {
		t.Errorf("status = %+v, want protocol %s", st, ProtocolStateless)
	}
	res := call(t, m, "mcp__s__think", `{}`)
	if res.IsError || !strings.HasPrefix(res.Text, "four ") || !strings.Contains(res.Text, "file://") {
		t.Errorf("result = %+v", res)
	}
	m.Close() // before the server closes
}
