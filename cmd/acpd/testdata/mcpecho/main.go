// Command mcpecho is a small MCP server on stdio, built on the MCP Go SDK,
// for acpd's benchmarks (perf_scale_bench_test.go): its tool "echo"
// answers its "message" argument, and it lists three more tools so that a
// session's model request carries several per server.
package main

import (
	"context"
	"encoding/json"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcpecho", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"message":{"type":"string"}}}`)
	echo := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Message string }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Message}}}, nil
	}
	for _, name := range []string{"echo", "echo2", "echo3", "echo4"} {
		srv.AddTool(&mcp.Tool{Name: name, Description: "Echoes its message.", InputSchema: schema}, echo)
	}
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
