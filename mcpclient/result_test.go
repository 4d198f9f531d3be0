package mcpclient

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestConvertResult(t *testing.T) {
	res := &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{
			&mcp.TextContent{Text: "first"},
			&mcp.ImageContent{MIMEType: "image/png", Data: make([]byte, 10)},
			&mcp.AudioContent{Data: make([]byte, 3)},
			&mcp.ResourceLink{URI: "file:///a", Name: "a", Description: "the a"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", Text: "bee"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///c", MIMEType: "application/zip", Blob: make([]byte, 5)}},
		},
		StructuredContent: map[string]any{"n": 1},
	}
	got, err := convertResult(res)
	if err != nil {
		t.Fatal(err)
	}
	want := "first\n[image image/png, 10 bytes]\n[audio unknown type, 3 bytes]\n[resource link file:///a (a): the a]\n[resource file:///b]\nbee\n[resource file:///c, application/zip, 5 bytes]"
	if got.Text != want {
		t.Errorf("Text = %q\nwant %q", got.Text, want)
	}
	if !got.IsError {
		t.Error("IsError lost")
	}
	if string(got.Structured) != `{"n":1}` {
		t.Errorf("Structured = %s", got.Structured)
	}
}
