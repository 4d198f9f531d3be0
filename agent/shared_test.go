package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"acpd/acp"
	"acpd/compact"
	"acpd/model"
)

// TestRequestsShareTheTranscript: a request's messages are the session's
// transcript itself, capped (no copy per request), its breakpoints in
// CacheAt on the last two user messages, and nothing the turns, a
// compaction (in a turn and between turns) or its summary request do
// modifies the messages an earlier
// request was given: the dialects keep what they derived from them for
// the next request (model.Prefix).
func TestRequestsShareTheTranscript(t *testing.T) {
	env := newEnv(t, "")
	env.write("f.txt", "content\n")
	type seen struct {
		msgs []model.Message
		json string
	}
	var mu sync.Mutex
	var reqs []seen
	calls := allAtOnce(toolCallReq{"read_file", map[string]any{"path": "f.txt"}})
	env.setModel(mainModel, backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		j, _ := json.Marshal(req.Messages)
		mu.Lock()
		reqs = append(reqs, seen{req.Messages, string(j)})
		mu.Unlock()
		if isSummaryRequest(req) {
			if len(reqs) == 6 {
				// The compaction in the turn fails: the turn goes on
				// with the transcript as it was.
				yield(model.Event{}, &model.Error{Kind: model.ErrInvalidRequest, Message: "no summary"})
				return
			}
			_ = yield(model.Event{Type: model.EventText, Text: "the summary"}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
			return
		}
		var users []int
		for i := len(req.Messages) - 1; i >= 0 && len(users) < 2; i-- {
			if req.Messages[i].Role == model.RoleUser {
				users = append(users, i)
			}
		}
		if !slices.Equal(req.CacheAt, users) {
			t.Errorf("request of %d messages: CacheAt %v, want the last two user messages %v", len(req.Messages), req.CacheAt, users)
		}
		if cap(req.Messages) != len(req.Messages) {
			t.Errorf("request of %d messages has room for %d: appending to it would write the transcript", len(req.Messages), cap(req.Messages))
		}
		if len(reqs) == 5 && !yield(model.Event{Type: model.EventUsage, Usage: &model.Usage{InputTokens: 1 << 30}}, nil) {
			// The third turn's first answer fills the window: the
			// turn compacts before its next request, in the turn.
			return
		}
		calls(ctx, req, yield)
	}))
	c, sid := env.fullSession()
	for range 3 {
		c.mustPrompt(sid, "read it", acp.StopReasonEndTurn)
	}
	c.mustPrompt(sid, "/compact", acp.StopReasonEndTurn)
	c.mustPrompt(sid, "read it again", acp.StopReasonEndTurn)
	mu.Lock()
	defer mu.Unlock()
	if len(reqs) < 8 {
		t.Fatalf("%d requests, want 8 or more", len(reqs))
	}
	// Requests share the transcript's array until an append outgrows it.
	shared := 0
	for i := 1; i < len(reqs); i++ {
		if &reqs[i].msgs[0] == &reqs[i-1].msgs[0] {
			shared++
		}
	}
	if shared == 0 {
		t.Error("the requests of a conversation do not share its transcript")
	}
	for i, r := range reqs {
		if j, _ := json.Marshal(r.msgs); string(j) != r.json {
			t.Errorf("request %d: its messages were modified after it was made", i)
		}
		if i != 5 && i < 7 && strings.Contains(r.json, compactPromptJSON()) {
			t.Errorf("request %d holds the failed compaction's prompt", i)
		}
	}
}

// compactPromptJSON is compact.Prompt as it is in a JSON string.
func compactPromptJSON() string {
	j, _ := json.Marshal(compact.Prompt)
	return strings.Trim(string(j), `"`)
}
