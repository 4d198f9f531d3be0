package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"acpd/acp"
	"acpd/model"
	"acpd/tools"
)

// notices reports whether the client shows notice updates.
func (a *Agent) notices() bool {
	caps := a.clientCapabilities()
	return caps.Session != nil && caps.Session.Notices != nil
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

// compactThreshold is the share of the context window past which the
// conversation is compacted before the next request.
const compactThreshold = 0.8

// needsCompaction reports whether the last request filled most of the window.
func (s *sess) needsCompaction(info model.ModelInfo) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return float64(s.used) > compactThreshold*float64(contextWindow(info)) && len(s.transcript) > 2
}

const compactPrompt = `Summarise the conversation so far so that the work can continue from the summary alone. Include: the user's goals and constraints, decisions made, files read or changed (with paths), commands run and their outcome, the current state, and the next steps. Be concise and factual; do not call tools.`

// compact replaces older turns with a model-written summary, keeping the
// latest user prompt (and what followed it) and the plan. The new transcript
// is logged as a "compact" record so load and resume continue from it.
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
	s.mu.Lock()
	msgs := append([]model.Message(nil), s.transcript...)
	plan := s.plan
	s.mu.Unlock()
	keepFrom := lastUserPrompt(msgs)
	older, recent := msgs[:keepFrom], msgs[keepFrom:]
	if len(older) == 0 {
		older, recent = msgs, nil
	}
	st := s.settings()
	_, modelID, _ := model.ParseRef(st.Model)
	req := &model.Request{
		Model:    modelID,
		System:   "You write concise, complete summaries of coding-agent sessions.",
		Messages: append(summaryTranscript(older), model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: compactPrompt}}}),
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
	}
	if !finished || strings.TrimSpace(sum.String()) == "" {
		return fail(fmt.Errorf("the model returned no summary"))
	}
	text := "Summary of the earlier conversation (compacted to fit the context window):\n\n" + strings.TrimSpace(sum.String())
	if plan != "" {
		text += "\n\nCurrent plan:\n" + plan
	}
	head := []model.Message{
		{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: text}}},
		{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartText, Text: "Understood; I will continue from this summary."}}},
	}
	next := append(head, recent...)
	s.mu.Lock()
	s.transcript = next
	s.used = 0
	s.mu.Unlock()
	s.record(kindCompact, next)
	s.sync()
	if show {
		s.notify(out, acp.SessionUpdate{CompactionUpdate: &acp.CompactionUpdate{CompactionID: id, Status: acp.CompactionStatusCompleted, Summary: []acp.ContentBlock{{Text: &acp.TextContent{Text: text}}}}})
	}
	return nil
}

// summaryTranscript renders msgs for the summarisation request, which
// offers no tools: tool calls and results become text (Anthropic and Bedrock
// reject tool blocks in a request without tools), reasoning is dropped (its
// signatures bind it to the request that produced it), messages left empty
// are dropped and consecutive messages of one role merged, so roles still
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
// (not tool results).
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
	return 0
}

// repeatLimit is how many times in a row (in the flat sequence of the
// turn's calls) the same call with the same arguments runs. The next
// identical call is not run: it gets an error result telling the model the
// result will not change. Only if the model persists with one more
// identical call does the turn end.
const repeatLimit = 3

// repeatRefusal is the result of a call refused as a repetition.
const repeatRefusal = "Not run: identical call repeated; the result will not change. Try something else, or ask the user."

// callKey identifies a tool call by name and canonical arguments.
func callKey(name string, input json.RawMessage) string {
	var v any
	if err := json.Unmarshal(input, &v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			input = b
		}
	}
	return name + "\x00" + string(input)
}

// loopGuard detects a model repeating itself within a turn.
type loopGuard struct {
	last  string
	count int
}

// observe records one response's calls in order. It returns the IDs of the
// calls refused as repetitions, and stop (with the call's name) when the
// model repeated a call again after being refused: the turn ends. Any
// different call resets the count.
func (g *loopGuard) observe(calls []*pendingCall) (refused map[string]bool, name string, stop bool) {
	for _, pc := range calls {
		k := callKey(pc.name, pc.input)
		if k == g.last {
			g.count++
		} else {
			g.last, g.count = k, 1
		}
		switch {
		case g.count > repeatLimit+1:
			return nil, pc.name, true
		case g.count > repeatLimit:
			if refused == nil {
				refused = map[string]bool{}
			}
			refused[pc.id] = true
		}
	}
	return refused, "", false
}

// sawFile records that the agent read or wrote path, so it is no longer
// reported as changed outside the agent.
func (s *sess) sawFile(path string) {
	s.mu.Lock()
	delete(s.changed, path)
	s.mu.Unlock()
}

// maxLinkedBytes caps a file attached to a prompt by a resource link.
const maxLinkedBytes = 256 << 10

// linkedResource renders a prompt's resource link for the model: a file://
// link is read through the file broker (so an unsaved buffer is what the
// user sees and attached); other links are named only.
func (s *sess) linkedResource(ctx context.Context, l *acp.ResourceLink) string {
	u, err := url.Parse(l.URI)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return fmt.Sprintf("[Referenced resource: %s (%s)]", l.Name, l.URI)
	}
	content, err := s.broker.ReadFile(ctx, u.Path)
	if err != nil {
		return fmt.Sprintf("[Referenced file %s could not be read: %v]", u.Path, err)
	}
	s.sawFile(u.Path)
	if len(content) > maxLinkedBytes {
		content = tools.Truncate(content, maxLinkedBytes) + fmt.Sprintf("\n[… the file continues; %d bytes in all. Use read_file with an offset for the rest.]", len(content))
	}
	return fmt.Sprintf("<file path=%q>\n%s\n</file>", u.Path, content)
}
