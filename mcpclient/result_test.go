package mcpclient

import (
	"strings"
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
	got, err := convertResult(res, nil)
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

func TestConvertRichResult(t *testing.T) {
	size := int64(42)
	res := &mcp.CallToolResult{
		Content: []mcp.Content{
			&mcp.TextContent{Text: "for both"},
			&mcp.TextContent{Text: "for the user", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.5}},
			&mcp.TextContent{Text: "for the model", Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant"}}},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte{1, 2}},
			&mcp.ResourceLink{URI: "file:///a", Name: "a", Title: "A", MIMEType: "text/plain", Size: &size},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///c", MIMEType: "application/zip", Blob: []byte{9}}},
		},
		StructuredContent: map[string]any{"n": 1},
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []any{"n"}}
	got, err := convertResult(res, schema)
	if err != nil {
		t.Fatal(err)
	}
	if got.IsError || strings.Contains(got.Text, "for the user") || !strings.Contains(got.Text, "for the model") {
		t.Errorf("result = %+v", got)
	}
	if len(got.Content) != 6 {
		t.Fatalf("content = %+v", got.Content)
	}
	if c := got.Content[1]; c.ForModel() || !c.ForUser() || c.Priority != 0.5 {
		t.Errorf("user-only block = %+v", c)
	}
	if c := got.Content[3]; c.Type != ContentImage || string(c.Data) != "\x01\x02" || c.MIMEType != "image/png" {
		t.Errorf("image = %+v", c)
	}
	if c := got.Content[4]; c.Type != ContentResourceLink || c.Title != "A" || *c.Size != 42 {
		t.Errorf("link = %+v", c)
	}
	if c := got.Content[5]; c.Type != ContentResource || c.URI != "file:///c" || string(c.Data) != "\x09" {
		t.Errorf("resource = %+v", c)
	}

	// A mismatch with the output schema fails the call.
	res.StructuredContent = map[string]any{"n": "one"}
	if got, _ := convertResult(res, schema); !got.IsError || !strings.Contains(got.Text, "output schema") {
		t.Errorf("mismatch = %+v", got)
	}
	res.StructuredContent = nil
	if got, _ := convertResult(res, schema); !got.IsError {
		t.Errorf("missing structured content = %+v", got)
	}
}
