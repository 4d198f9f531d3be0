package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"acpd/acp"
	"acpd/model"
)

// steerReply is the answer to _session/steering.
type steerReply struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
}

// steer sends a _session/steering request with text; idle, when not "",
// is its _meta.steering.idleBehavior.
func (c *client) steer(sid acp.SessionID, text, idle string) (steerReply, error) {
	p := map[string]any{"sessionId": sid, "prompt": []acp.ContentBlock{{Text: &acp.TextContent{Text: text}}}}
	if idle != "" {
		p["_meta"] = map[string]any{"steering": map[string]any{"idleBehavior": idle}}
	}
	var r steerReply
	err := c.call("_session/steering", p, &r)
	return r, err
}

// userTexts are the texts of the user messages of a request, in order.
func userTexts(req model.Request) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role == model.RoleUser {
			if t := m.Text(); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// userChunks are the texts of the user_message_chunks in us.
func userChunks(us []acp.SessionUpdate) []string {
	var out []string
	for _, u := range us {
		if u.UserMessageChunk != nil && u.UserMessageChunk.Content.Text != nil {
			out = append(out, u.UserMessageChunk.Content.Text.Text)
		}
	}
	return out
}

// A steering message sent during a turn reaches the turn's very next model
// request as a user message, after the tool results of the request before
// it; one sent while the model gives what would be its last answer makes
// the turn go on with another request. Each is shown as a user message
// where it joined, answered "injected" at once, and replayed in its place
// by session/load in another connection.
func TestSteerIntoRunningTurn(t *testing.T) {
	env := newEnv(t, "")
	env.write("a.txt", "alpha\n")
	hold := make(chan chan struct{}, 4) // a request waiting for the test
	var n atomic.Int32
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		step := int(n.Add(1)) - 1
		if step < 2 {
			release := make(chan struct{})
			hold <- release
			select {
			case <-release:
			case <-ctx.Done():
				yield(model.Event{}, ctx.Err())
				return
			}
		}
		if step == 0 {
			in, _ := json.Marshal(map[string]string{"path": "a.txt"})
			_ = yield(model.Event{Type: model.EventToolStart, ToolCallID: "call_1", ToolName: "read_file"}, nil) &&
				yield(model.Event{Type: model.EventToolDone, ToolCallID: "call_1", ToolName: "read_file", Input: in}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
			return
		}
		_ = yield(model.Event{Type: model.EventText, Text: "answer " + string(rune('0'+step))}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
	}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	turn := c.promptAsync(sid, "read a.txt")
	release := await(t, "the first request", hold)
	if r, err := c.steer(sid, "also say hi", ""); err != nil || r.Outcome != "injected" {
		t.Fatalf("steering during the first request: %+v %v", r, err)
	}
	close(release)
	release = await(t, "the second request", hold)
	if r, err := c.steer(sid, "and bye", ""); err != nil || r.Outcome != "injected" {
		t.Fatalf("steering during the second request: %+v %v", r, err)
	}
	close(release)
	if r := await(t, "the turn", turn); r.err != nil || r.stop != acp.StopReasonEndTurn {
		t.Fatalf("turn: %v %q", r.err, r.stop)
	}
	reqs := rec.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if got := userTexts(reqs[0]); !slices.Equal(got, []string{"read a.txt"}) {
		t.Errorf("first request's user messages %q", got)
	}
	// The steering message follows the tool result in the second request.
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	prev := reqs[1].Messages[len(reqs[1].Messages)-2]
	if last.Role != model.RoleUser || last.Text() != "also say hi" || len(toolResults(reqs[1])) != 1 || prev.Parts[0].Type != model.PartToolResult {
		t.Errorf("second request does not end with the tool result then the steering message: %+v", reqs[1].Messages)
	}
	if got := userTexts(reqs[2]); !slices.Equal(got, []string{"read a.txt", "also say hi", "and bye"}) || !strings.Contains(messagesText(reqs[2].Messages), "answer 1") {
		t.Errorf("third request's user messages %q", got)
	}
	live := c.allUpdates(sid)
	order := func(us []acp.SessionUpdate) []string {
		var out []string
		for _, u := range us {
			switch {
			case u.UserMessageChunk != nil:
				out = append(out, "user:"+u.UserMessageChunk.Content.Text.Text)
			case u.ToolCall != nil:
				out = append(out, "tool")
			case u.AgentMessageChunk != nil:
				out = append(out, "agent:"+u.AgentMessageChunk.Content.Text.Text)
			}
		}
		return out
	}
	if got, want := order(live), []string{"tool", "user:also say hi", "agent:answer 1", "user:and bye", "agent:answer 2"}; !slices.Equal(got, want) {
		t.Errorf("live updates %q, want %q", got, want)
	}
	c.close()

	c2 := env.start(nil)
	c2.load(sid)
	if got, want := order(c2.allUpdates(sid)), []string{"user:read a.txt", "tool", "user:also say hi", "agent:answer 1", "user:and bye", "agent:answer 2"}; !slices.Equal(got, want) {
		t.Errorf("session/load replays %q, want %q", got, want)
	}
}

// Without a running turn a steering message is the client's to send when
// it asks (promptRequired), else the prompt of a turn of its own, which the
// client sees as a user message; a bad request is refused.
func TestSteerIdle(t *testing.T) {
	env := newEnv(t, "")
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		_ = yield(model.Event{Type: model.EventText, Text: "ok"}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
	}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	if r, err := c.steer(sid, "kept by the client", "promptRequired"); err != nil || r != (steerReply{"promptRequired", "noRunningTurn"}) {
		t.Fatalf("idle with promptRequired: %+v %v", r, err)
	}
	if n := len(rec.requests()); n != 0 {
		t.Fatalf("promptRequired made %d model requests", n)
	}
	if r, err := c.steer(sid, "run me", ""); err != nil || r.Outcome != "startedNewTurn" {
		t.Fatalf("idle: %+v %v", r, err)
	}
	waitFor(t, "the started turn's answer", func() bool { return chunkText(c.allUpdates(sid)) == "ok" })
	// The next prompt waits for that turn, then sees it.
	c.mustPrompt(sid, "next", acp.StopReasonEndTurn)
	if got := userTexts(rec.last(t)); !slices.Equal(got, []string{"run me", "next"}) {
		t.Errorf("user messages %q", got)
	}
	if got := userChunks(c.allUpdates(sid)); !slices.Equal(got, []string{"run me"}) {
		t.Errorf("user messages shown %q, want the steering one only", got)
	}
	if _, err := c.steer(sid, "x", "later"); rpcCode(err) != int(acp.ErrorCodeInvalidParams) {
		t.Errorf("unknown idleBehavior: %v, want invalid params", err)
	}
	var r steerReply
	if err := c.call("_session/steering", map[string]any{"sessionId": sid, "prompt": []any{}}, &r); rpcCode(err) != int(acp.ErrorCodeInvalidParams) {
		t.Errorf("empty prompt: %v, want invalid params", err)
	}
	if _, err := c.steer("s_nope", "x", ""); rpcCode(err) != int(acp.ErrorCodeResourceNotFound) {
		t.Errorf("unknown session: %v", err)
	}
}

// A cancel drops the prompts queued behind the turn and the steering
// messages it had not delivered: the user is told each one, and none of
// them reaches the model.
func TestSteerQueueCancel(t *testing.T) {
	env, g, c, sid := gatedSession(t)
	rec := record(g)
	env.setModel(mainModel, rec)
	first := c.promptAsync(sid, "block")
	g.waitStarted(t)
	queued := c.promptAsync(sid, "queued prompt")
	waitFor(t, "the prompt to queue", func() bool { return c.queued(sid) == 1 })
	if r, err := c.steer(sid, "steering message", ""); err != nil || r.Outcome != "injected" {
		t.Fatalf("steer: %+v %v", r, err)
	}
	c.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionID: sid})
	if r := await(t, "the cancelled turn", first); r.err != nil || r.stop != acp.StopReasonCancelled {
		t.Fatalf("turn: %v %q", r.err, r.stop)
	}
	if r := await(t, "the queued prompt", queued); r.err != nil || r.stop != acp.StopReasonCancelled {
		t.Fatalf("queued: %v %q", r.err, r.stop)
	}
	told := func() []string {
		var out []string
		for _, u := range c.allUpdates(sid) {
			if u.ToolCall != nil && strings.HasPrefix(u.ToolCall.Title, "Not sent to the model: ") {
				out = append(out, u.ToolCall.Title)
			}
		}
		slices.Sort(out)
		return out
	}
	want := []string{"Not sent to the model: “queued prompt”", "Not sent to the model: “steering message”"}
	waitFor(t, "both to be told", func() bool { return len(told()) == 2 })
	if got := told(); !slices.Equal(got, want) {
		t.Errorf("told %q, want %q", got, want)
	}
	c.mustPrompt(sid, "after", acp.StopReasonEndTurn)
	if got := userTexts(rec.last(t)); !slices.Equal(got, []string{"block", "after"}) {
		t.Errorf("the model saw %q", got)
	}
	if got := userChunks(c.allUpdates(sid)); len(got) != 0 {
		t.Errorf("dropped messages shown as user messages: %q", got)
	}
}
