// Package promptin converts a user's ACP prompt (content blocks) into
// what the model is sent: text as it is, images and audio when the model
// takes them (a note for the user and the model otherwise), embedded
// resources inline, and file:// resource links read through a Reader (at
// most MaxLinkedBytes of each); and derives a session title from the
// first prompt. Functions keep no state and are safe for concurrent use.
package promptin

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"acpd/acp"
	"acpd/internal/lazy"
	"acpd/model"
	"acpd/tools"
)

// Reader reads a file a prompt links to, by absolute path.
type Reader func(ctx context.Context, path string) (string, error)

// Parts converts ACP prompt content into model parts for the model info
// describes (an unknown model, info.ID "", is sent images). notes are
// warnings for the user (content the model cannot take). file:// resource
// links are read with read.
func Parts(ctx context.Context, prompt []acp.ContentBlock, info model.ModelInfo, read Reader) (parts []model.Part, notes []string) {
	for _, b := range prompt {
		switch {
		case b.Text != nil:
			parts = append(parts, model.Part{Type: model.PartText, Text: b.Text.Text})
		case b.Image != nil:
			if info.ID != "" && !info.Images {
				parts = append(parts, model.Part{Type: model.PartText, Text: "[The user attached an image, but this model cannot read images.]"})
				notes = append(notes, "This model cannot read images; the image was not sent.")
				continue
			}
			parts = append(parts, model.Part{Type: model.PartImage, MimeType: b.Image.MimeType, Data: b.Image.Data})
		case b.Audio != nil:
			if !info.Audio {
				parts = append(parts, model.Part{Type: model.PartText, Text: "[The user attached audio, but this model cannot take audio.]"})
				notes = append(notes, "This model cannot take audio; the recording was not sent.")
				continue
			}
			parts = append(parts, model.Part{Type: model.PartAudio, MimeType: b.Audio.MimeType, Data: b.Audio.Data})
		case b.ResourceLink != nil:
			parts = append(parts, model.Part{Type: model.PartText, Text: linked(ctx, b.ResourceLink, read)})
		case b.Resource != nil:
			r := b.Resource.Resource
			switch {
			case r.Text != nil:
				parts = append(parts, model.Part{Type: model.PartText, Text: fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", r.Text.URI, r.Text.Text)})
			case r.Blob != nil:
				parts = append(parts, model.Part{Type: model.PartText, Text: fmt.Sprintf("[Attached binary resource %s (%s), not shown]", r.Blob.URI, derefOr(r.Blob.MimeType, "unknown type"))})
			}
		}
	}
	return parts, notes
}

func derefOr(p *string, def string) string {
	if p == nil || *p == "" {
		return def
	}
	return *p
}

// Title derives a session title from what the user typed in the first
// prompt: the first paragraph of its first text, without the context an
// editor attaches after it (a blank line, or a "file:12-14" reference line
// such as agent-shell's, ends what was typed).
func Title(prompt []acp.ContentBlock) string {
	for _, b := range prompt {
		if b.Text == nil {
			continue
		}
		t := strings.Join(strings.Fields(typed(b.Text.Text)), " ")
		if t == "" {
			continue
		}
		const max = 80
		if utf8.RuneCountInString(t) > max {
			r := []rune(t)
			t = strings.TrimSpace(string(r[:max-1])) + "…"
		}
		return t
	}
	return ""
}

// contextRef matches a line that names an attached excerpt, e.g.
// "demo.txt:1-1" or "src/main.go:12".
var contextRef = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^\S+:\d+(-\d+)?:?$`) }}

// typed is the leading part of text the user typed: its lines up to the
// first blank line or context reference after some text.
func typed(text string) string {
	var kept []string
	for line := range strings.Lines(text) {
		l := strings.TrimSpace(line)
		if len(kept) > 0 && (l == "" || contextRef.Get().MatchString(l)) {
			break
		}
		if l != "" {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, " ")
}

// MaxLinkedBytes caps a file attached to a prompt by a resource link.
const MaxLinkedBytes = 256 << 10

// linked renders a prompt's resource link for the model: a file:// link is
// read with read; other links are named only.
func linked(ctx context.Context, l *acp.ResourceLink, read Reader) string {
	u, err := url.Parse(l.URI)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return fmt.Sprintf("[Referenced resource: %s (%s)]", l.Name, l.URI)
	}
	content, err := read(ctx, u.Path)
	if err != nil {
		return fmt.Sprintf("[Referenced file %s could not be read: %v]", u.Path, err)
	}
	if len(content) > MaxLinkedBytes {
		content = tools.Truncate(content, MaxLinkedBytes) + fmt.Sprintf("\n[… the file continues; %d bytes in all. Use read_file with an offset for the rest.]", len(content))
	}
	return fmt.Sprintf("<file path=%q>\n%s\n</file>", u.Path, content)
}

// NoteTitle is the few words titling the card or notice of one of
// [Parts]'s notes: what was not sent.
func NoteTitle(note string) string {
	switch {
	case strings.Contains(note, "image"):
		return "The image was not sent"
	case strings.Contains(note, "audio"), strings.Contains(note, "recording"):
		return "The recording was not sent"
	}
	return "Part of the prompt was not sent"
}
