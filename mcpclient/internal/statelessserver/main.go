// Command statelessserver is an MCP server on stdio, built on the MCP Go
// SDK and restricted to the 2026-07-28 revision, for mcpclient's tests. Its
// tool "hello" answers "hello from 2026-07-28"; its tool "add" adds a tool
// named "added" (a tools/list_changed).
package main

import (
	"context"
	"encoding/json"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "statelessserver", Version: "1"},
		&mcp.ServerOptions{SupportedProtocolVersions: []string{"2026-07-28"}})
	text := func(s string) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil
		}
	}
	schema := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&mcp.Tool{Name: "hello", InputSchema: schema}, text("hello from 2026-07-28"))
	srv.AddTool(&mcp.Tool{Name: "add", InputSchema: schema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		srv.AddTool(&mcp.Tool{Name: "added", InputSchema: schema}, text("added"))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
