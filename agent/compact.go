package agent

import (
	"context"
	"fmt"
	"strings"

	"acpd/acp"
	"acpd/model"
)

// compactThreshold is the share of the context window past which the
// conversation is compacted before the next request.
const compactThreshold = 0.8

// compactTarget is the share of the window compaction aims for: clearing
// old tool outputs alone is enough when it brings the estimate below it.
const compactTarget = 0.5

// needsCompaction reports whether the last request filled most of the window.
func (s *sess) needsCompaction(info model.ModelInfo) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return float64(s.used) > compactThreshold*float64(contextWindow(info)) && len(s.transcript) > 2
}

// compactPrompt asks for the structured summary compaction keeps.
const compactPrompt = `The conversation is about to be compacted to fit the context window: everything above will be replaced by your summary (the user's current request is kept verbatim, and the latest tool calls may be kept). Do not call tools now. Write the summary, so that the work can continue from it alone, under these headings:

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
// keepResults of them and keepResultBytes in all; older ones longer than
// clearMin bytes are replaced by clearedNote.
const (
	keepResults     = 6
	keepResultBytes = 40 << 10
	clearMin        = 512
	clearedNote     = "[output cleared to save context; run the call again if you need it]"
)

// clearOldOutputs returns msgs (not modified) with old tool outputs cleared,
// and how many bytes that saved.
func clearOldOutputs(msgs []model.Message) ([]model.Message, int) {
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
			if kept < keepResults && keptBytes+n <= keepResultBytes {
				kept++
				keptBytes += n
				continue
			}
			kept = keepResults // everything older is cleared
			if n <= clearMin {
				continue
			}
			if parts == nil {
				parts = append([]model.Part(nil), out[i].Parts...)
			}
			parts[j].Content = []model.Part{{Type: model.PartText, Text: clearedNote}}
			saved += n - len(clearedNote)
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

func transcriptBytes(msgs []model.Message) int {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			n += partBytes(p)
		}
	}
	return max(n, 1)
}

// compact shrinks the conversation to fit the window. First old tool
// outputs are cleared (the most recent are kept); if the estimate is then
// still above compactTarget, the model summarises the conversation, in a
// request with the main system prompt, tools and messages so that it
// reads them from the prompt cache. During a turn (the transcript ends with
// the user's prompt or tool results), the new transcript starts with the
// current turn's prompt verbatim followed by the summary, keeps the latest
// exchange of the turn when it fits, and ends with a user message; between
// turns (/compact) it is the summary and an acknowledgement. The plan is
// kept. The new transcript is logged as a "compact" record so load and
// resume continue from it.
func (s *sess) compact(ctx context.Context, b model.Backend, info model.ModelInfo) error {
	out := s.a.baseContext()
	id := acp.CompactionID(newID("c_"))
	show := s.a.compactionUpdates()
	if show {
		s.notify(out, acp.SessionUpdate{CompactionUpdate: &acp.CompactionUpdate{CompactionID: id, Status: acp.CompactionStatusInProgress}})
	}
	fail := func(err error) error {
		if show {
			msg := err.Error()
			st := acp.CompactionStatusFailed
			if ctx.Err() != nil {
				st = acp.CompactionStatusCancelled
			}
			s.notify(out, acp.SessionUpdate{CompactionUpdate: &acp.CompactionUpdate{CompactionID: id, Status: st, Error: &msg}})
		}
		return err
	}
	done := func(next []model.Message, text string) {
		s.mu.Lock()
		s.transcript = next
		s.used = 0
		s.mu.Unlock()
		s.record(kindCompact, next)
		s.sync()
		if show {
			s.notify(out, acp.SessionUpdate{CompactionUpdate: &acp.CompactionUpdate{CompactionID: id, Status: acp.CompactionStatusCompleted, Summary: []acp.ContentBlock{{Text: &acp.TextContent{Text: text}}}}})
		}
	}
	s.mu.Lock()
	msgs := append([]model.Message(nil), s.transcript...)
	plan, used := s.plan, s.used
	s.mu.Unlock()
	inTurn := len(msgs) > 0 && msgs[len(msgs)-1].Role == model.RoleUser

	// 1. Clear old tool outputs; enough if the estimate drops below the
	// target (estimated from the last usage, in proportion to the bytes).
	cleared, saved := clearOldOutputs(msgs)
	if inTurn && saved > 0 && used > 0 {
		before := transcriptBytes(msgs)
		est := float64(used) * float64(before-saved) / float64(before)
		if est < compactTarget*float64(contextWindow(info)) {
			done(cleared, fmt.Sprintf("Cleared old tool outputs (%d bytes).", saved))
			return nil
		}
	}

	// 2. A summary, asked with the main request's prefix.
	req := s.buildRequest(info)
	note := model.Part{Type: model.PartText, Text: compactPrompt}
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == model.RoleUser {
		last := req.Messages[n-1]
		last.Parts = append(append([]model.Part(nil), last.Parts...), note)
		req.Messages[n-1] = last
	} else {
		req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Parts: []model.Part{note}})
	}
	var sum strings.Builder
	finished := false
	for ev, err := range b.Stream(ctx, req) {
		if err != nil {
			return fail(err)
		}
		switch ev.Type {
		case model.EventText:
			sum.WriteString(ev.Text)
			if show {
				s.notify(out, acp.SessionUpdate{CompactionSummaryChunk: &acp.CompactionSummaryChunk{CompactionID: id, Content: acp.ContentBlock{Text: &acp.TextContent{Text: ev.Text}}}})
			}
		case model.EventFinish:
			finished = true
		}
		// Tool calls the model makes anyway are ignored.
	}
	if !finished || strings.TrimSpace(sum.String()) == "" {
		return fail(fmt.Errorf("the model returned no summary"))
	}
	text := summaryHead + strings.TrimSpace(sum.String())
	if plan != "" {
		text += "\n\nCurrent plan:\n" + plan
	}
	var next []model.Message
	if !inTurn {
		next = []model.Message{
			{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: text}}},
			{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartText, Text: "Understood; I will continue from this summary."}}},
		}
	} else {
		next = compactedTurn(cleared, text, contextWindow(info))
	}
	done(next, text)
	return nil
}

// Texts of a compacted turn's first message.
const (
	summaryHead  = "Summary of the earlier conversation (compacted to fit the context window):\n\n"
	summaryMark  = "[acpd: " + summaryHead
	continueNote = "Continue the task from the summary."
)

// compactedTurn is the transcript of a turn being compacted: its prompt
// verbatim, then the summary (text), then the latest exchange of the turn
// (from an assistant message to the end) when it fits in about a quarter of
// the window (at 4 bytes a token). It ends with a user message.
func compactedTurn(msgs []model.Message, text string, window int) []model.Message {
	p := lastUserPrompt(msgs)
	head := model.Message{Role: model.RoleUser}
	if p < len(msgs) {
		for _, part := range msgs[p].Parts {
			// A summary from an earlier compaction of this turn is
			// superseded by the new one, which covers it.
			if part.Type == model.PartText && (strings.HasPrefix(part.Text, summaryMark) || part.Text == continueNote) {
				continue
			}
			head.Parts = append(head.Parts, part)
		}
	}
	head.Parts = append(head.Parts, model.Part{Type: model.PartText, Text: summaryMark + strings.TrimPrefix(text, summaryHead) + "]"})
	// The tail: from the latest assistant message after the prompt whose
	// exchange fits the budget.
	budget := window // a quarter of the window's tokens, in bytes
	tail := len(msgs)
	for k := len(msgs) - 1; k > p; k-- {
		if msgs[k].Role != model.RoleAssistant {
			continue
		}
		if transcriptBytes(msgs[k:]) > budget {
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

// summaryTranscript renders msgs for a request that offers no tools:
// tool calls and results become text (Anthropic and Bedrock reject tool
// blocks in a request without tools), reasoning is dropped (its signatures
// bind it to the request that produced it), messages left empty are
// dropped and consecutive messages of one role merged, so roles still
// alternate. msgs is not modified.
func summaryTranscript(msgs []model.Message) []model.Message {
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

// compactionUpdates reports whether the client shows compaction updates.
func (a *Agent) compactionUpdates() bool {
	caps := a.clientCapabilities()
	return caps.Session != nil && caps.Session.Compaction != nil
}

// contextWindow is the model's window, or a conservative default.
func contextWindow(info model.ModelInfo) int {
	if info.ContextWindow > 0 {
		return info.ContextWindow
	}
	return 128000
}

// reportUsage records a response's usage and sends usage_update: the tokens
// the context now holds, the window, and the session's cost so far when the
// model's prices are known.
func (s *sess) reportUsage(ctx context.Context, u *model.Usage, info model.ModelInfo) {
	if u == nil {
		return
	}
	s.mu.Lock()
	s.used = u.InputTokens + u.OutputTokens
	if info.InputPrice > 0 || info.OutputPrice > 0 {
		// Cache reads are billed at a tenth and writes at 1.25x the input
		// price by the providers that report them; the catalog gives the
		// base prices.
		plain := u.InputTokens - u.CacheReadTokens - u.CacheWriteTokens
		s.cost += (float64(max(plain, 0))*info.InputPrice +
			float64(u.CacheReadTokens)*info.InputPrice*0.1 +
			float64(u.CacheWriteTokens)*info.InputPrice*1.25 +
			float64(u.OutputTokens)*info.OutputPrice) / 1e6
	}
	used, cost := s.used, s.cost
	s.mu.Unlock()
	upd := &acp.UsageUpdate{Used: uint64(max(used, 0)), Size: uint64(contextWindow(info))}
	if cost > 0 {
		upd.Cost = &acp.Cost{Amount: cost, Currency: "USD"}
	}
	s.notify(ctx, acp.SessionUpdate{UsageUpdate: upd})
}
