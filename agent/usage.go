package agent

import (
	"context"
	"iter"
	"sync"

	"acpd/acp"
	"acpd/compact"
	"acpd/model"
)

// turnUsage sums the usage of one prompt turn's model requests: the main
// loop's, compaction's and the task sub-agent's. Safe for concurrent use
// (sub-agents of parallel task calls report at once).
type turnUsage struct {
	mu       sync.Mutex
	sum      model.Usage
	cost     float64 // USD, of the requests whose model's prices are known
	requests int     // responses that reported usage
}

// add counts one response's usage (its latest report).
func (t *turnUsage) add(u model.Usage, info model.ModelInfo) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sum.InputTokens += u.InputTokens
	t.sum.OutputTokens += u.OutputTokens
	t.sum.CacheReadTokens += u.CacheReadTokens
	t.sum.CacheWriteTokens += u.CacheWriteTokens
	t.sum.ReasoningTokens += u.ReasoningTokens
	if info.InputPrice > 0 || info.OutputPrice > 0 {
		t.cost += compact.Cost(u, info)
	}
	t.requests++
}

// acp returns the turn's PromptResponse.usage, nil when no request
// reported usage. The split follows claude-agent-acp's: inputTokens are
// the input tokens not read from or written to the cache, so that
// totalTokens = inputTokens + outputTokens + cachedReadTokens +
// cachedWriteTokens; thoughtTokens are part of outputTokens (providers bill
// reasoning as output). The cache and thought counts are sent when some
// request reported them; the cost, when the model's prices are known, is
// _meta.acpd.cost (the schema's Usage has no cost; usage_update carries the
// session's).
func (t *turnUsage) acp() *acp.Usage {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.requests == 0 {
		return nil
	}
	s := t.sum
	nonNeg := func(n int64) uint64 { return uint64(max(n, 0)) }
	opt := func(n int64) *uint64 {
		if n <= 0 {
			return nil
		}
		v := uint64(n)
		return &v
	}
	u := &acp.Usage{
		InputTokens:       nonNeg(s.InputTokens - s.CacheReadTokens - s.CacheWriteTokens),
		OutputTokens:      nonNeg(s.OutputTokens),
		CachedReadTokens:  opt(s.CacheReadTokens),
		CachedWriteTokens: opt(s.CacheWriteTokens),
		ThoughtTokens:     opt(s.ReasoningTokens),
	}
	u.TotalTokens = u.InputTokens + u.OutputTokens + nonNeg(s.CacheReadTokens) + nonNeg(s.CacheWriteTokens)
	if t.cost > 0 {
		u.Meta = map[string]any{"acpd": map[string]any{"cost": acp.Cost{Amount: t.cost, Currency: "USD"}}}
	}
	return u
}

// meteredBackend counts every response's usage into a turn's tally.
type meteredBackend struct {
	model.Backend
	tally *turnUsage
	info  model.ModelInfo
}

// Stream passes b's events through and, when the stream ends however it
// ends, adds the latest usage it reported (usage events repeat, later
// values win).
func (b meteredBackend) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		var last *model.Usage
		defer func() {
			if last != nil {
				b.tally.add(*last, b.info)
			}
		}()
		for ev, err := range b.Backend.Stream(ctx, req) {
			if err == nil && ev.Usage != nil {
				u := *ev.Usage
				last = &u
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// metered returns b counting into the running turn's tally (b itself
// outside a turn).
func (s *sess) metered(b model.Backend, info model.ModelInfo) model.Backend {
	s.mu.Lock()
	t := s.tally
	s.mu.Unlock()
	if t == nil || b == nil {
		return b
	}
	return meteredBackend{Backend: b, tally: t, info: info}
}

// beginUsage starts the tally of a prompt turn; endUsage ends it and
// returns the turn's PromptResponse.usage.
func (s *sess) beginUsage() {
	s.mu.Lock()
	s.tally = &turnUsage{}
	s.mu.Unlock()
}

func (s *sess) endUsage() *acp.Usage {
	s.mu.Lock()
	t := s.tally
	s.tally = nil
	s.mu.Unlock()
	return t.acp()
}
