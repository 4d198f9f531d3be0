package mcpclient

import (
	"testing"
)

// TestEverythingRichContent: images, resource links, annotations,
// structured content (validated against the output schema) and tool titles
// and hints reach the caller as they are.
func TestEverythingRichContent(t *testing.T) {
	node, entry := everything(t)
	m := newTestManager(t, Options{BaseEnv: baseEnv(node)})
	startOK(t, m, stdioEverything("everything", node, entry))

	img := call(t, m, "mcp__everything__get-tiny-image", `{}`)
	var sawImage bool
	for _, c := range img.Content {
		if c.Type == ContentImage {
			sawImage = len(c.Data) > 0 && c.MIMEType == "image/png"
		}
	}
	if !sawImage {
		t.Errorf("tiny image content = %+v", img.Content)
	}

	links := call(t, m, "mcp__everything__get-resource-links", `{"count":2}`)
	n := 0
	for _, c := range links.Content {
		if c.Type == ContentResourceLink && c.URI != "" && c.Name != "" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("resource links = %+v", links.Content)
	}

	ann := call(t, m, "mcp__everything__get-annotated-message", `{"messageType":"error","includeImage":true}`)
	var annotated bool
	for _, c := range ann.Content {
		annotated = annotated || len(c.Audience) > 0 || c.Priority > 0
	}
	if !annotated {
		t.Errorf("annotated message = %+v", ann.Content)
	}

	sc := call(t, m, "mcp__everything__get-structured-content", `{"location":"Chicago"}`)
	if sc.IsError || len(sc.Structured) == 0 {
		t.Errorf("structured content = %+v", sc)
	}

	tl, ok := findTool(m.Tools(), "mcp__everything__get-annotated-message")
	if !ok || tl.Title == "" {
		t.Errorf("title of get-annotated-message = %+v", tl)
	}
	if tl, _ := findTool(m.Tools(), "mcp__everything__get-structured-content"); len(tl.OutputSchema) == 0 {
		t.Errorf("get-structured-content has no output schema: %+v", tl)
	}
}
