package mcpclient

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// convertResult flattens a tool result for the model.
func convertResult(res *mcp.CallToolResult) (Result, error) {
	out := Result{IsError: res.IsError}
	var parts []string
	for _, c := range res.Content {
		if s := contentText(c); s != "" {
			parts = append(parts, s)
		}
	}
	out.Text = strings.Join(parts, "\n")
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return Result{}, fmt.Errorf("mcpclient: structured content: %w", err)
		}
		out.Structured = b
	}
	return out, nil
}

// contentText renders one content block as text: text in full, binary
// content as a one-line summary.
func contentText(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *mcp.ResourceLink:
		s := "[resource link " + c.URI
		if c.Name != "" {
			s += " (" + c.Name + ")"
		}
		if c.Description != "" {
			s += ": " + c.Description
		}
		return s + "]"
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[resource]"
		}
		if r.Text != "" {
			return "[resource " + r.URI + "]\n" + r.Text
		}
		return fmt.Sprintf("[resource %s, %s, %d bytes]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
	case nil:
		return ""
	default:
		return fmt.Sprintf("[%T content]", c)
	}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
