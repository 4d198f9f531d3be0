package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"

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
