package sse

import (
	"strings"

	"acpd/model"
)

// SplitUser maps a user message for the dialects whose tool results carry
// only text. Each tool_result part is passed to result with its text parts
// joined by "\n"; result returns the label that introduces the result's
// other parts (images, audio) in the user content. The user content
// returned holds, in order, every part that is not a tool result and each
// result's label and other parts, all converted by conv (a part conv
// refuses is dropped).
func SplitUser[P any](m model.Message, conv func(model.Part) (P, bool), result func(p model.Part, text string) (label string)) []P {
	var rest []P
	for _, p := range m.Parts {
		if p.Type != model.PartToolResult {
			if cp, ok := conv(p); ok {
				rest = append(rest, cp)
			}
			continue
		}
		var texts []string
		var media []P
		for _, c := range p.Content {
			if c.Type == model.PartText {
				texts = append(texts, c.Text)
			} else if cp, ok := conv(c); ok {
				media = append(media, cp)
			}
		}
		label := result(p, strings.Join(texts, "\n"))
		if len(media) > 0 {
			if cp, ok := conv(model.Part{Type: model.PartText, Text: label}); ok {
				rest = append(rest, cp)
			}
			rest = append(rest, media...)
		}
	}
	return rest
}
