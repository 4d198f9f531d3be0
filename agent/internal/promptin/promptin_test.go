package promptin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/model"
)

// TestParts: media the model cannot take become notes; file links are
// read through the Reader and capped; other links are named.
func TestParts(t *testing.T) {
	big := strings.Repeat("x", MaxLinkedBytes+10)
	read := func(_ context.Context, p string) (string, error) {
		switch p {
		case "/big":
			return big, nil
		case "/small":
			return "hello", nil
		}
		return "", errors.New("no such file")
	}
	prompt := []acp.ContentBlock{
		{Text: &acp.TextContent{Text: "look"}},
		{Image: &acp.ImageContent{MimeType: "image/png", Data: "AAAA"}},
		{ResourceLink: &acp.ResourceLink{Name: "s", URI: "file:///small"}},
		{ResourceLink: &acp.ResourceLink{Name: "b", URI: "file:///big"}},
		{ResourceLink: &acp.ResourceLink{Name: "m", URI: "file:///missing"}},
		{ResourceLink: &acp.ResourceLink{Name: "web", URI: "https://example.com/x"}},
	}
	parts, notes := Parts(context.Background(), prompt, model.ModelInfo{ID: "m"}, read)
	if len(parts) != 6 || len(notes) != 1 || !strings.Contains(notes[0], "cannot read images") {
		t.Fatalf("%d parts, notes %q", len(parts), notes)
	}
	if parts[1].Type != model.PartText {
		t.Error("an image reached a model without images")
	}
	if got := parts[2].Text; got != "<file path=\"/small\">\nhello\n</file>" {
		t.Errorf("small file: %q", got)
	}
	if got := parts[3].Text; len(got) > MaxLinkedBytes+200 || !strings.Contains(got, "the file continues") {
		t.Errorf("big file: %d bytes", len(got))
	}
	if got := parts[4].Text; !strings.Contains(got, "could not be read") {
		t.Errorf("missing file: %q", got)
	}
	if got := parts[5].Text; !strings.Contains(got, "Referenced resource: web") {
		t.Errorf("web link: %q", got)
	}
	parts, _ = Parts(context.Background(), prompt[1:2], model.ModelInfo{}, read)
	if parts[0].Type != model.PartImage {
		t.Error("an unknown model was not sent the image")
	}
}

func TestTitle(t *testing.T) {
	long := strings.Repeat("word ", 40)
	got := Title([]acp.ContentBlock{{Image: &acp.ImageContent{}}, {Text: &acp.TextContent{Text: "  fix\n the   bug "}}})
	if got != "fix the bug" {
		t.Errorf("title %q", got)
	}
	if got := Title([]acp.ContentBlock{{Text: &acp.TextContent{Text: long}}}); len([]rune(got)) > 80 || !strings.HasSuffix(got, "…") {
		t.Errorf("long title %q", got)
	}
	// What the editor attaches after the typed text stays out of the title.
	for _, text := range []string{
		"say hello\ndemo.txt:1-1\nold line",
		"say hello\n\ndemo.txt:1-1\n```\nold line\n```",
		"\n  say hello\nsrc/main.go:12\n",
	} {
		if got := Title([]acp.ContentBlock{{Text: &acp.TextContent{Text: text}}}); got != "say hello" {
			t.Errorf("Title(%q) = %q, want %q", text, got, "say hello")
		}
	}
}

// A note's title says what was not sent.
func TestNoteTitle(t *testing.T) {
	for note, want := range map[string]string{
		"The model does not take images: the image was left out.":    "The image was not sent",
		"The model does not take audio: the recording was left out.": "The recording was not sent",
		"The linked file could not be read: it was left out.":        "Part of the prompt was not sent",
	} {
		if got := NoteTitle(note); got != want {
			t.Errorf("NoteTitle(%q) = %q, want %q", note, got, want)
		}
	}
}
