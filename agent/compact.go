package agent

import (
	"context"

	"acpd/acp"
	"acpd/compact"
	"acpd/model"
)

// needsCompaction reports whether the last request filled most of the window.
func (s *sess) needsCompaction(info model.ModelInfo) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return float64(s.used) > compact.Threshold*float64(compact.Window(info)) && len(s.transcript) > 2
}

// compact shrinks the conversation to fit the window (see compact.Run),
// asking for a summary with the session's main request so that it reads
// the prompt cache, and shows the compaction to a client that takes
// compaction updates. The new transcript is logged as a "compact" record
// so load and resume continue from it.
func (s *sess) compact(ctx context.Context, b model.Backend, info model.ModelInfo) error {
	out := s.a.baseContext()
	id := acp.CompactionID(newID("c_"))
	show := s.a.compactionUpdates()
	if show {
		s.notify(out, acp.SessionUpdate{CompactionUpdate: &acp.CompactionUpdate{CompactionID: id, Status: acp.CompactionStatusInProgress}})
	}
	s.mu.Lock()
	job := compact.Job{
		Messages: append([]model.Message(nil), s.transcript...),
		Plan:     s.plan,
		Used:     s.used,
		Window:   compact.Window(info),
		Backend:  b,
		Request:  func() *model.Request { return s.buildRequest(info) },
	}
	s.mu.Unlock()
	if show {
		job.Chunk = func(text string) {
			s.notify(out, acp.SessionUpdate{CompactionSummaryChunk: &acp.CompactionSummaryChunk{CompactionID: id, Content: acp.ContentBlock{Text: &acp.TextContent{Text: text}}}})
		}
	}
	next, text, err := compact.Run(ctx, job)
	if err != nil {
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
	s.transcript = memoized(append([]model.Message(nil), next...))
	s.used = 0
	s.mu.Unlock()
	s.record(kindCompact, next)
	s.sync()
	if show {
		s.notify(out, acp.SessionUpdate{CompactionUpdate: &acp.CompactionUpdate{CompactionID: id, Status: acp.CompactionStatusCompleted, Summary: []acp.ContentBlock{{Text: &acp.TextContent{Text: text}}}}})
	}
	return nil
}

// compactionUpdates reports whether the client shows compaction updates.
func (a *Agent) compactionUpdates() bool {
	caps := a.clientCapabilities()
	return caps.Session != nil && caps.Session.Compaction != nil
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
		s.cost += compact.Cost(*u, info)
	}
	used, cost := s.used, s.cost
	s.mu.Unlock()
	upd := &acp.UsageUpdate{Used: uint64(max(used, 0)), Size: uint64(compact.Window(info))}
	if cost > 0 {
		upd.Cost = &acp.Cost{Amount: cost, Currency: "USD"}
	}
	s.notify(ctx, acp.SessionUpdate{UsageUpdate: upd})
}
