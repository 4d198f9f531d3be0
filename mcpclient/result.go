package mcpclient

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Content kinds, as in [Content.Type].
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource" // an embedded resource: Text or Blob
)

// Content is one content block of a tool result, as the server sent it.
type Content struct {
	// Type is one of the Content* constants.
	Type string
	// Text is a text block's text, or an embedded text resource's.
	Text string
	// Data is an image's or audio clip's bytes, or an embedded binary
	// resource's.
	Data []byte
	// MIMEType is the media type of an image, audio clip or resource.
	MIMEType string
	// URI, Name, Title, Description and Size describe a resource link or an
	// embedded resource (URI only for the latter).
	URI, Name, Title, Description string
	Size                          *int64
	// Audience is the annotations' audience ("user", "assistant"); empty
	// means both. Priority is the annotations' priority (0 when absent).
	Audience []string
	Priority float64
}

// ForModel reports whether the block is meant for the model: its audience
// is empty or names "assistant".
func (c Content) ForModel() bool {
	return len(c.Audience) == 0 || slices.Contains(c.Audience, "assistant")
}

// ForUser reports whether the block is meant for the user: its audience is
// empty or names "user".
func (c Content) ForUser() bool {
	return len(c.Audience) == 0 || slices.Contains(c.Audience, "user")
}

// Result is the outcome of a tool call.
type Result struct {
	// Text joins the blocks meant for the model (see [Content.ForModel])
	// with newlines; images, audio and resources appear as one-line
	// summaries, embedded text resources in full. It is not truncated.
	Text string
	// IsError reports that the tool itself failed (the model should see
	// Text), or that its structuredContent did not match its outputSchema.
	IsError bool
	// Structured is the result's structuredContent, if any (validated
	// against the tool's outputSchema when it has one).
	Structured json.RawMessage
	// Content holds every block, in the server's order.
	Content []Content
	// res is the result as decoded, for Raw.
	res *mcp.CallToolResult
}

// Raw is the complete CallToolResult as the server sent it (content,
// structuredContent, _meta, isError), for an MCP App's view: encoded when
// asked for, as only a call with a view open needs it.
func (r Result) Raw() json.RawMessage {
	if r.res == nil {
		return nil
	}
	b, _ := json.Marshal(r.res)
	return b
}

// convertResult converts a tool result; outputSchema is the tool's, if any.
func convertResult(res *mcp.CallToolResult, outputSchema any) (Result, error) {
	out := Result{IsError: res.IsError, res: res}
	var parts []string
	for _, c := range res.Content {
		cc, ok := convertContent(c)
		if !ok {
			continue
		}
		out.Content = append(out.Content, cc)
		if s := contentText(c); s != "" && cc.ForModel() {
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
	if outputSchema != nil && !res.IsError {
		if err := validateStructured(outputSchema, out.Structured); err != nil {
			out.IsError = true
			msg := "the tool's result does not match its output schema: " + err.Error()
			if out.Text != "" {
				msg += "\n" + out.Text
			}
			out.Text = msg
		}
	}
	return out, nil
}

// validateStructured checks structured content against a tool's output
// schema: a tool with an output schema must return matching content.
func validateStructured(schema any, structured json.RawMessage) error {
	if len(structured) == 0 {
		return fmt.Errorf("structuredContent is missing")
	}
	b, err := json.Marshal(schema)
	if err != nil {
		return err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("invalid output schema: %w", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return fmt.Errorf("invalid output schema: %w", err)
	}
	var v any
	if err := json.Unmarshal(structured, &v); err != nil {
		return err
	}
	return rs.Validate(v)
}

func annotations(a *mcp.Annotations) (aud []string, prio float64) {
	if a == nil {
		return nil, 0
	}
	for _, r := range a.Audience {
		aud = append(aud, string(r))
	}
	return aud, a.Priority
}

// convertContent converts one block; ok is false for nil or unknown blocks.
func convertContent(c mcp.Content) (Content, bool) {
	switch c := c.(type) {
	case *mcp.TextContent:
		aud, prio := annotations(c.Annotations)
		return Content{Type: ContentText, Text: c.Text, Audience: aud, Priority: prio}, true
	case *mcp.ImageContent:
		aud, prio := annotations(c.Annotations)
		return Content{Type: ContentImage, Data: c.Data, MIMEType: c.MIMEType, Audience: aud, Priority: prio}, true
	case *mcp.AudioContent:
		aud, prio := annotations(c.Annotations)
		return Content{Type: ContentAudio, Data: c.Data, MIMEType: c.MIMEType, Audience: aud, Priority: prio}, true
	case *mcp.ResourceLink:
		aud, prio := annotations(c.Annotations)
		return Content{Type: ContentResourceLink, URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description,
			MIMEType: c.MIMEType, Size: c.Size, Audience: aud, Priority: prio}, true
	case *mcp.EmbeddedResource:
		if c.Resource == nil {
			return Content{}, false
		}
		aud, prio := annotations(c.Annotations)
		r := c.Resource
		return Content{Type: ContentResource, URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Data: r.Blob, Audience: aud, Priority: prio}, true
	}
	return Content{}, false
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
