// Package compact shrinks a conversation ([]model.Message) to fit a
// model's context window: it clears old tool outputs (ClearOldOutputs) and,
// when that is not enough, has the model summarise the conversation (Run),
// keeping the current turn's prompt and its latest exchange, and the
// user's earlier messages (newest first within KeepUserBytes), verbatim. It
// also renders a transcript for a request without tools (SummaryTranscript,
// FinalRequest), and says when compaction is due (Threshold) and what a
// response cost (Cost). Inputs are never modified; nothing here
// keeps state, so every function is safe for concurrent use.
package compact

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"acpd/model"
)

// Threshold is the share of the context window past which the
// conversation is compacted before the next request.
const Threshold = 0.8

// Target is the share of the window compaction aims for: clearing old tool
// outputs alone is enough when it brings the estimate below it.
const Target = 0.5

// Prompt asks for the structured summary compaction keeps.
const Prompt = `The conversation is about to be compacted to fit the context window: everything above will be replaced by your summary (the user's own messages are kept verbatim, and the latest tool calls may be kept). Do not call tools now. Write the summary, so that the work can continue from it alone, under these headings:

## Goal
What the user wants, in one or two sentences.
## Constraints
Every instruction, preference and constraint the user gave, quoted verbatim.
## Files
Each file read, created or changed (path), and its current state.
## Commands
Commands run that matter (builds, tests) and their results.
## Errors
Errors met and whether they are resolved.
## Plan
The steps done and left.
## Next step
Exactly what to do next.

Be factual and concise; include paths, names and values needed to continue.`

// Tool outputs compaction keeps: the most recent results, up to
// KeepResults of them and keepResultBytes in all; older ones longer than
// clearMin bytes are replaced by ClearedNote.
const (
	KeepResults     = 6
	keepResultBytes = 40 << 10
	clearMin        = 512
	ClearedNote     = "[output cleared to save context; run the call again if you need it]"
)

// ClearOldOutputs returns msgs (not modified) with old tool outputs cleared,
// and how many bytes that saved.
func ClearOldOutputs(msgs []model.Message) ([]model.Message, int) {
	out := make([]model.Message, len(msgs))
	copy(out, msgs)
	kept, keptBytes, saved := 0, 0, 0
	for i := len(out) - 1; i >= 0; i-- {
		var parts []model.Part
		for j := len(out[i].Parts) - 1; j >= 0; j-- {
			p := out[i].Parts[j]
			if p.Type != model.PartToolResult {
				continue
			}
			n := partBytes(p)
			if kept < KeepResults && keptBytes+n <= keepResultBytes {
				kept++
				keptBytes += n
				continue
			}
			kept = KeepResults // everything older is cleared
			if n <= clearMin {
				continue
			}
			if parts == nil {
				parts = append([]model.Part(nil), out[i].Parts...)
			}
			parts[j].Content = []model.Part{{Type: model.PartText, Text: ClearedNote}}
			saved += n - len(ClearedNote)
		}
		if parts != nil {
			out[i].Parts = parts
		}
	}
	return out, saved
}

func partBytes(p model.Part) int {
	n := len(p.Text) + len(p.Input) + len(p.Data)
	for _, c := range p.Content {
		n += partBytes(c)
	}
	return n
}

// Bytes is the size of msgs in bytes (at least 1), the measure the
// window estimates scale by.
func Bytes(msgs []model.Message) int {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			n += partBytes(p)
		}
	}
	return max(n, 1)
}

// Job is one compaction.
type Job struct {
	// Messages is the transcript to shrink; it is not modified.
	Messages []model.Message
	// Plan is the session's plan, kept after the summary; "" for none.
	Plan string
	// Used is how many tokens the last request's context held (0 when
	// unknown).
	Used int64
	// Window is the model's context window in tokens (see Window).
	Window int
	// Backend answers the summary request.
	Backend model.Backend
	// Request builds the session's main request (system prompt, tools,
	// messages), so the summary request reads them from the prompt cache.
	Request func() *model.Request
	// Chunk, when set, receives the summary's text as it streams.
	Chunk func(text string)
}

// Run shrinks j.Messages to fit the window and returns the new transcript
// and a text saying what was done (the summary, or what was cleared).
// First old tool outputs are cleared (the most recent are kept); if the
// estimate is then still above Target, the model summarises the
// conversation, in a request with the main system prompt, tools and
// messages ending with Prompt. During a turn (the transcript ends with the
// user's prompt or tool results), the new transcript starts with the
// current turn's prompt verbatim followed by the summary, keeps the latest
// exchange of the turn when it fits, and ends with a user message; between
// turns it is the summary and an acknowledgement. The plan is kept.
func Run(ctx context.Context, j Job) (next []model.Message, text string, err error) {
	msgs := j.Messages
	inTurn := len(msgs) > 0 && msgs[len(msgs)-1].Role == model.RoleUser

	// 1. Clear old tool outputs; enough if the estimate drops below the
	// target (estimated from the last usage, in proportion to the bytes).
	cleared, saved := ClearOldOutputs(msgs)
	if inTurn && saved > 0 && j.Used > 0 {
		before := Bytes(msgs)
		est := float64(j.Used) * float64(before-saved) / float64(before)
		if est < Target*float64(j.Window) {
			return cleared, fmt.Sprintf("Cleared old tool outputs (%d bytes).", saved), nil
		}
	}

	// 2. A summary, asked with the main request's prefix.
	req := j.Request()
	note := model.Part{Type: model.PartText, Text: Prompt}
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == model.RoleUser {
		// A new array: Messages may be the transcript's own (shared).
		last := req.Messages[n-1]
		last.Parts = append(append([]model.Part(nil), last.Parts...), note)
		req.Messages = append(req.Messages[:n-1:n-1], last)
	} else {
		req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Parts: []model.Part{note}})
	}
	var sum strings.Builder
	finished := false
	for ev, err := range j.Backend.Stream(ctx, req) {
		if err != nil {
			return nil, "", err
		}
		switch ev.Type {
		case model.EventText:
			sum.WriteString(ev.Text)
			if j.Chunk != nil {
				j.Chunk(ev.Text)
			}
		case model.EventFinish:
			finished = true
		}
		// Tool calls the model makes anyway are ignored.
	}
	if !finished || strings.TrimSpace(sum.String()) == "" {
		return nil, "", fmt.Errorf("the model returned no summary")
	}
	text = summaryHead + strings.TrimSpace(sum.String())
	if j.Plan != "" {
		text += "\n\nCurrent plan:\n" + j.Plan
	}
	if !inTurn {
		parts := append(withEarlier(nil, UserTexts(msgs, len(msgs), KeepUserBytes)), model.Part{Type: model.PartText, Text: text})
		return []model.Message{
			{Role: model.RoleUser, Parts: parts},
			{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartText, Text: ackNote}}},
		}, text, nil
	}
	return turn(cleared, text, j.Window), text, nil
}

// KeepUserBytes bounds the user's own earlier messages a compacted
// transcript keeps verbatim (about 20k tokens, as Codex keeps).
const KeepUserBytes = 80 << 10

// ackNote is the assistant's reply to a summary between turns.
const ackNote = "Understood; I will continue from this summary."

// UserTexts is what the user wrote in msgs[:end], verbatim: the text parts
// of the user's prompts (not tool results, not acpd's own notes or
// summaries), newest first within max bytes, returned oldest first. A
// summary loses what the user asked in their own words; these keep it.
func UserTexts(msgs []model.Message, end, max int) []model.Part {
	var kept []model.Part
	used := 0
	for i := end - 1; i >= 0; i-- {
		if msgs[i].Role != model.RoleUser {
			continue
		}
		texts := userTexts(msgs[i])
		for k := len(texts) - 1; k >= 0; k-- {
			if used+len(texts[k]) > max {
				slices.Reverse(kept)
				return kept
			}
			used += len(texts[k])
			kept = append(kept, model.Part{Type: model.PartText, Text: texts[k]})
		}
	}
	slices.Reverse(kept)
	return kept
}

// userTexts is the user's texts of one message in the order written: a
// compacted message keeps the earlier ones after earlierNote (after the
// current prompt, which stays first), so those come first.
func userTexts(m model.Message) []string {
	var now, earlier []string
	in := false
	for _, p := range m.Parts {
		switch {
		case p.Type != model.PartText || strings.TrimSpace(p.Text) == "":
		case p.Text == earlierNote:
			in = true
		case acpdNote(p.Text):
			in = false
		case in:
			earlier = append(earlier, p.Text)
		default:
			now = append(now, p.Text)
		}
	}
	return append(earlier, now...)
}

// earlierNote introduces, in a compacted transcript, the user's earlier
// messages kept verbatim.
const earlierNote = "[acpd: the user's earlier messages in this conversation, verbatim, oldest first:]"

// withEarlier is parts followed by the user's earlier texts under
// earlierNote (none: parts as they are).
func withEarlier(parts, earlier []model.Part) []model.Part {
	if len(earlier) == 0 {
		return parts
	}
	out := append(slices.Clone(parts), model.Part{Type: model.PartText, Text: earlierNote})
	return append(out, earlier...)
}

// acpdNote reports whether a user message's text is acpd's, not the
// user's: a summary, a note in brackets ("[acpd: …]"), the continue note.
func acpdNote(text string) bool {
	return strings.HasPrefix(text, "[acpd:") || strings.HasPrefix(text, summaryHead) || text == continueNote
}

// Texts of a compacted turn's first message.
const (
	summaryHead  = "Summary of the earlier conversation (compacted to fit the context window):\n\n"
	summaryMark  = "[acpd: " + summaryHead
	continueNote = "Continue the task from the summary."
)

// turn is the transcript of a turn being compacted: the user's earlier
// messages verbatim (UserTexts), its prompt verbatim, then the summary
// (text), then the latest exchange of the turn (from an assistant message
// to the end) when it fits in about a quarter of the window (at 4 bytes a
// token). It ends with a user message.
func turn(msgs []model.Message, text string, window int) []model.Message {
	p := lastUserPrompt(msgs)
	head := model.Message{Role: model.RoleUser}
	if p < len(msgs) {
		for _, part := range msgs[p].Parts {
			// A summary from an earlier compaction of this turn is
			// superseded by the new one, which covers it; the earlier
			// messages kept then are kept again below.
			if part.Type == model.PartText && part.Text == earlierNote {
				break
			}
			if part.Type == model.PartText && (strings.HasPrefix(part.Text, summaryMark) || part.Text == continueNote) {
				continue
			}
			head.Parts = append(head.Parts, part)
		}
	}
	earlier := UserTexts(msgs, min(p, len(msgs)), KeepUserBytes)
	if p < len(msgs) {
		var prior []model.Part
		for _, t := range userTexts(model.Message{Parts: msgs[p].Parts[len(head.Parts):]}) {
			prior = append(prior, model.Part{Type: model.PartText, Text: t})
		}
		earlier = append(earlier, prior...)
	}
	head.Parts = withEarlier(head.Parts, earlier)
	head.Parts = append(head.Parts, model.Part{Type: model.PartText, Text: summaryMark + strings.TrimPrefix(text, summaryHead) + "]"})
	// The tail: from the latest assistant message after the prompt whose
	// exchange fits the budget.
	budget := window // a quarter of the window's tokens, in bytes
	tail := len(msgs)
	for k := len(msgs) - 1; k > p; k-- {
		if msgs[k].Role != model.RoleAssistant {
			continue
		}
		if Bytes(msgs[k:]) > budget {
			break
		}
		tail = k
		break // only the latest exchange
	}
	if tail == len(msgs) {
		head.Parts = append(head.Parts, model.Part{Type: model.PartText, Text: continueNote})
		return []model.Message{head}
	}
	return append([]model.Message{head}, msgs[tail:]...)
}

// SummaryTranscript renders msgs for a request that offers no tools:
// tool calls and results become text (Anthropic and Bedrock reject tool
// blocks in a request without tools), reasoning is dropped (its signatures
// bind it to the request that produced it), messages left empty are
// dropped and consecutive messages of one role merged, so roles still
// alternate. msgs is not modified.
func SummaryTranscript(msgs []model.Message) []model.Message {
	names := map[string]string{}
	out := make([]model.Message, 0, len(msgs)+1)
	for _, m := range msgs {
		var parts []model.Part
		for _, p := range m.Parts {
			switch p.Type {
			case model.PartToolUse:
				names[p.ToolCallID] = p.ToolName
				parts = append(parts, model.Part{Type: model.PartText, Text: fmt.Sprintf("[called tool %s (call %s) with input %s]", p.ToolName, p.ToolCallID, p.Input)})
			case model.PartToolResult:
				var b strings.Builder
				for _, c := range p.Content {
					if c.Type == model.PartText {
						b.WriteString(c.Text)
					}
				}
				failed := ""
				if p.IsError {
					failed = ", failed"
				}
				parts = append(parts, model.Part{Type: model.PartText, Text: fmt.Sprintf("[result of %s (call %s%s)]\n%s", names[p.ToolCallID], p.ToolCallID, failed, b.String())})
			case model.PartReasoning:
			default:
				parts = append(parts, p)
			}
		}
		if len(parts) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			continue
		}
		out = append(out, model.Message{Role: m.Role, Parts: parts})
	}
	return out
}

// lastUserPrompt is the index of the last user message that is a prompt
// (not tool results), or len(msgs) if there is none.
func lastUserPrompt(msgs []model.Message) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != model.RoleUser {
			continue
		}
		for _, p := range msgs[i].Parts {
			if p.Type != model.PartToolResult {
				return i
			}
		}
	}
	return len(msgs)
}

// finalNote asks for the turn's closing summary on its last request.
const finalNote = "This is the last model request allowed in this turn, and no tools are available for it. Do not call tools. Reply to the user with a summary: what was done, what remains, and how to continue (the user can say \"continue\" to start a new turn)."

// FinalRequest turns req into the last request of a capped turn: no tools
// (tool calls and results become text, as providers reject tool blocks in
// a request without tools) and a closing instruction in the last user
// message.
func FinalRequest(req *model.Request) {
	req.Tools = nil
	req.CacheTools = false
	req.CacheAt = nil // the indexes of the messages SummaryTranscript renders
	msgs := SummaryTranscript(req.Messages)
	note := model.Part{Type: model.PartText, Text: finalNote}
	if n := len(msgs); n > 0 && msgs[n-1].Role == model.RoleUser {
		msgs[n-1].Parts = append(msgs[n-1].Parts, note)
	} else {
		msgs = append(msgs, model.Message{Role: model.RoleUser, Parts: []model.Part{note}})
	}
	req.Messages = msgs
}

// Window is the model's window, or a conservative default.
func Window(info model.ModelInfo) int {
	if info.ContextWindow > 0 {
		return info.ContextWindow
	}
	return 128000
}

// Cost is what a response with usage u cost in USD at info's prices (0
// when they are unknown). Cache reads are billed at a tenth and writes at
// 1.25x the input price by the providers that report them; the catalog
// gives the base prices.
func Cost(u model.Usage, info model.ModelInfo) float64 {
	plain := u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens
	return (float64(max(plain, 0))*info.InputPrice +
		float64(u.CacheReadTokens)*info.InputPrice*0.1 +
		float64(u.CacheWriteTokens)*info.InputPrice*1.25 +
		float64(u.OutputTokens)*info.OutputPrice) / 1e6
}
