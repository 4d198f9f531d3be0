package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/model"
)

// TestPromptTurnReplay plays a scripted turn: reasoning and text stream as
// chunks of one message, a call to an unknown tool fails visibly and the
// model is told so in its next request.
func TestPromptTurnReplay(t *testing.T) {
	env := newEnv(t, "")
	rec := record(env.script(
		`{"type":"reasoning","text":"Let me think."}`,
		`{"type":"reasoning_done","signature":"sig"}`,
		`{"type":"text","text":"Hello"}`,
		`{"type":"text","text":" there"}`,
		`{"type":"tool_done","toolCallId":"c1","toolName":"no_such_tool","input":{"x":1}}`,
		`{"type":"usage","usage":{"inputTokens":10,"outputTokens":5}}`,
		`{"type":"finish"}`,
		`{"type":"expect","contains":"\"toolCallId\":\"c1\""}`,
		`{"type":"text","text":"Recovered."}`,
		`{"type":"finish"}`,
	))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	ups := c.promptUpdates(sid, "hi")

	var thoughtID, msgID acp.MessageID
	var msgIDs = map[acp.MessageID]bool{}
	for _, u := range ups {
		switch {
		case u.AgentThoughtChunk != nil:
			if u.AgentThoughtChunk.MessageID == nil {
				t.Fatal("thought chunk without messageId")
			}
			thoughtID = *u.AgentThoughtChunk.MessageID
		case u.AgentMessageChunk != nil:
			if u.AgentMessageChunk.MessageID == nil {
				t.Fatal("message chunk without messageId")
			}
			if msgID == "" {
				msgID = *u.AgentMessageChunk.MessageID
			}
			msgIDs[*u.AgentMessageChunk.MessageID] = true
		}
	}
	if thoughtID == "" || msgID == "" {
		t.Fatalf("missing thought or message chunks: %v", kinds(ups))
	}
	if len(msgIDs) != 2 {
		t.Errorf("agent chunks carry %d message ids, want 2 (one per model response)", len(msgIDs))
	}
	if got := chunkText(ups); got != "Hello thereRecovered." {
		t.Errorf("agent text %q", got)
	}
	var started *acp.ToolCall
	for _, u := range ups {
		if u.ToolCall != nil && u.ToolCall.ToolCallID == "c1" {
			started = u.ToolCall
		}
	}
	if started == nil || started.Status != acp.ToolCallStatusPending {
		t.Fatalf("tool_call for c1: %+v", started)
	}
	if st := finalStatus(ups, "c1"); st != acp.ToolCallStatusFailed {
		t.Errorf("unknown tool call ends %q, want failed", st)
	}

	reqs := rec.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	res := toolResults(reqs[1])
	if len(res) != 1 || res[0].ToolCallID != "c1" || !res[0].IsError || !strings.Contains(resultText(res[0]), "unknown tool") {
		t.Errorf("second request's tool results %+v, want an error result for c1 naming the unknown tool", res)
	}
	// The assistant message keeps the reasoning signature for the provider.
	var sig bool
	for _, p := range reqs[1].Messages[1].Parts {
		if p.Type == model.PartReasoning && p.Signature == "sig" && p.Text == "Let me think." {
			sig = true
		}
	}
	if !sig {
		t.Errorf("assistant message %+v lost its signed reasoning", reqs[1].Messages[1])
	}
	if len(reqs[0].Tools) == 0 || reqs[0].System == "" || reqs[0].Model != "main" {
		t.Errorf("request lacks tools, system prompt or model id: model=%q tools=%d", reqs[0].Model, len(reqs[0].Tools))
	}
}

func TestStopReasons(t *testing.T) {
	for _, tc := range []struct {
		finish string
		want   acp.StopReason
	}{
		{"end_turn", acp.StopReasonEndTurn},
		{"max_tokens", acp.StopReasonMaxTokens},
		{"refusal", acp.StopReasonRefusal},
	} {
		t.Run(tc.finish, func(t *testing.T) {
			env := newEnv(t, "")
			env.setModel(mainModel, env.script(`{"type":"text","text":"x"}`, `{"type":"finish","finish":"`+tc.finish+`"}`))
			c := env.start(nil)
			c.mustPrompt(c.newSession(), "go", tc.want)
		})
	}
}

func TestMaxTurnRequests(t *testing.T) {
	env := newEnv(t, "[agent]\nmax_turn_requests = 2\n")
	// A model that never stops calling tools.
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		id := "call_" + string(rune('a'+len(req.Messages)))
		_ = yield(model.Event{Type: model.EventToolDone, ToolCallID: id, ToolName: "list_dir", Input: json.RawMessage(`{"path":"."}`)}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
	}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	c.mustPrompt(c.newSession(), "loop forever", acp.StopReasonMaxTurnRequests)
	if n := len(rec.requests()); n != 2 {
		t.Errorf("%d model requests, want 2", n)
	}
}

// TestModelError: a failed model request is a JSON-RPC error that tells the
// user what to do, and what the model said before failing is kept.
func TestModelError(t *testing.T) {
	env := newEnv(t, "")
	// The answer fails after part of it was shown; acpd asks again (twice),
	// then gives up.
	var script []string
	for i := range maxRestarts + 1 {
		script = append(script,
			fmt.Sprintf(`{"type":"text","text":"partial answer %d"}`, i),
			`{"type":"error","kind":"overloaded","status":529,"message":"Overloaded"}`)
	}
	env.setModel(mainModel, env.script(script...))
	c := env.start(nil)
	sid := c.newSession()
	_, err := c.prompt(sid, "go")
	if err == nil {
		t.Fatal("prompt succeeded")
	}
	if rpcCode(err) != int(acp.ErrorCodeInternalError) || !strings.Contains(err.Error(), "try again") || !strings.Contains(err.Error(), "switch model") {
		t.Errorf("error %v does not tell the user to retry or switch model", err)
	}
	if got := chunkText(c.allUpdates(sid)); got != "partial answer 0partial answer 1partial answer 2" {
		t.Errorf("streamed %q", got)
	}
	kept := 0
	for _, m := range loggedMessages(t, env, sid) {
		if m.Role == model.RoleAssistant && strings.HasPrefix(m.Text(), "partial answer") && m.Interrupted {
			kept++
		}
	}
	if kept != maxRestarts+1 {
		t.Errorf("%d partial assistant messages in the log, want %d:\n%s", kept, maxRestarts+1, describeRecords(sessionRecords(t, env, sid)))
	}

	// No model at all: auth required, with instructions.
	env.setModel(mainModel, nil)
	_, err = c.prompt(sid, "again")
	if rpcCode(err) != int(acp.ErrorCodeAuthenticationRequired) || !strings.Contains(err.Error(), "ACPD_MODEL") {
		t.Errorf("prompt without a model: %v, want -32000 explaining how to configure one", err)
	}
}

// TestCancelDuringStreaming: session/cancel ends a streaming turn with
// "cancelled", and nothing of that turn follows its reply.
func TestCancelDuringStreaming(t *testing.T) {
	env, g, c, sid := gatedSession(t)
	for i := range *loops {
		mark := c.out.count()
		res := c.promptAsync(sid, "block")
		g.waitStarted(t)
		c.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionID: sid})
		r := await(t, "the cancelled prompt", res)
		if r.err != nil || r.stop != acp.StopReasonCancelled {
			t.Fatalf("iteration %d: %v %q, want cancelled", i, r.err, r.stop)
		}
		reply := c.in.replyPos(c.out.idSince(mark, acp.AgentMethodSessionPrompt))
		// A round trip before the next prompt: nothing of the cancelled
		// turn may arrive between its reply and this one.
		barrier, err := c.callAt(acp.AgentMethodSessionList, acp.ListSessionsRequest{}, &acp.ListSessionsResponse{})
		if err != nil {
			t.Fatal(err)
		}
		if late := c.updatesBetween(sid, reply, barrier); len(late) > 0 {
			t.Fatalf("iteration %d: updates %v after the cancelled turn's reply", i, kinds(late))
		}
		ups := c.updatesBetween(sid, -1, reply)
		if len(ups) == 0 || chunkText(ups[len(ups)-1:]) != "working" {
			t.Fatalf("iteration %d: the turn's streamed text is not the last update before its reply: %v", i, kinds(ups))
		}
	}
	// The session still works, and the transcript marks the cut answers.
	rec := record(g)
	env.setModel(mainModel, rec)
	c.mustPrompt(sid, "hello", acp.StopReasonEndTurn)
	interrupted := 0
	for _, m := range rec.last(t).Messages {
		if m.Role == model.RoleAssistant && m.Interrupted && m.Text() == "working" {
			interrupted++
		}
	}
	if interrupted != *loops {
		t.Errorf("transcript holds %d interrupted answers, want %d", interrupted, *loops)
	}
}

// TestCancelThenPrompt: editors send session/cancel and the next prompt at
// once; the new prompt waits for the cancelled turn, then runs.
func TestCancelThenPrompt(t *testing.T) {
	_, g, c, sid := gatedSession(t)
	for i := range *loops {
		mark := c.out.count()
		start := len(c.in.messages())
		first := c.promptAsync(sid, "block")
		g.waitStarted(t)
		c.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionID: sid})
		stop, err := c.prompt(sid, "next")
		if err != nil || stop != acp.StopReasonEndTurn {
			t.Fatalf("iteration %d: prompt after cancel: %v %q, want end_turn", i, err, stop)
		}
		r := await(t, "the cancelled prompt", first)
		if r.err != nil || r.stop != acp.StopReasonCancelled {
			t.Fatalf("iteration %d: cancelled prompt: %v %q", i, r.err, r.stop)
		}
		firstPos := c.in.replyPos(c.out.idSince(mark, acp.AgentMethodSessionPrompt))
		// The second turn's answer must follow the first turn's reply.
		for _, u := range c.updates(sid) {
			if u.pos >= start && u.u.AgentMessageChunk != nil && chunkText([]acp.SessionUpdate{u.u}) == "done." && u.pos < firstPos {
				t.Fatalf("iteration %d: the second turn streamed (wire #%d) before the first turn's reply (wire #%d)", i, u.pos, firstPos)
			}
		}
	}
}

// A prompt sent during a turn is queued, not refused: a cancel drops it
// with the running turn (both answered "cancelled"), and one queued
// behind a turn that ends becomes the next turn, answered then.
func TestOverlappingPromptQueued(t *testing.T) {
	_, g, c, sid := gatedSession(t)
	first := c.promptAsync(sid, "block")
	g.waitStarted(t)
	queued := c.promptAsync(sid, "overlap")
	waitFor(t, "the overlapping prompt to queue", func() bool { return c.queued(sid) == 1 })
	c.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionID: sid})
	if r := await(t, "the first prompt", first); r.stop != acp.StopReasonCancelled {
		t.Errorf("first prompt: %v %q", r.err, r.stop)
	}
	if r := await(t, "the queued prompt", queued); r.err != nil || r.stop != acp.StopReasonCancelled {
		t.Errorf("queued prompt after the cancel: %v %q, want cancelled (dropped)", r.err, r.stop)
	}
	// A cancel for an idle or unknown session is harmless.
	c.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionID: sid})
	c.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionID: "s_nope"})
	c.mustPrompt(sid, "again", acp.StopReasonEndTurn)

}

// A prompt queued behind a turn that ends normally becomes the next turn:
// its reply follows the first one's, and its model request carries it.
func TestQueuedPromptIsNextTurn(t *testing.T) {
	env := newEnv(t, "")
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		if lastUserText(req) == "slow" {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
				yield(model.Event{}, ctx.Err())
				return
			}
		}
		_ = yield(model.Event{Type: model.EventText, Text: "answer to " + lastUserText(req)}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
	}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	first := c.promptAsync(sid, "slow")
	<-started
	next := c.promptAsync(sid, "then this")
	waitFor(t, "the next prompt to queue", func() bool { return c.queued(sid) == 1 })
	close(release)
	if r := await(t, "the first prompt", first); r.err != nil || r.stop != acp.StopReasonEndTurn {
		t.Fatalf("first: %v %q", r.err, r.stop)
	}
	if r := await(t, "the queued prompt", next); r.err != nil || r.stop != acp.StopReasonEndTurn {
		t.Fatalf("queued: %v %q", r.err, r.stop)
	}
	reqs := rec.requests()
	if len(reqs) != 2 || lastUserText(&reqs[1]) != "then this" || !strings.Contains(messagesText(reqs[1].Messages), "answer to slow") {
		t.Errorf("the queued prompt's request: %d requests, last user text %q", len(reqs), lastUserText(&reqs[len(reqs)-1]))
	}
}

// TestCancelRequest: "$/cancel_request" for the prompt's request id ends the
// turn, and the reply is -32800.
func TestCancelRequest(t *testing.T) {
	_, g, c, sid := gatedSession(t)
	for i := range *loops {
		mark := c.out.count()
		ctx, cancel := context.WithCancel(context.Background())
		done := async(func() error {
			return c.conn.Call(ctx, acp.AgentMethodSessionPrompt, acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: "block"}}}}, &acp.PromptResponse{})
		})
		g.waitStarted(t)
		cancel() // the client's Call sends $/cancel_request for its id
		if err := await(t, "the abandoned call", done); err != context.Canceled {
			t.Fatalf("abandoned call: %v", err)
		}
		id := c.out.idSince(mark, acp.AgentMethodSessionPrompt)
		var reply wireMsg
		waitFor(t, "the prompt's reply", func() bool {
			var ok bool
			reply, ok = c.in.reply(id)
			return ok
		})
		if reply.Error == nil || reply.Error.Code != int(acp.ErrorCodeRequestCancelled) {
			t.Fatalf("iteration %d: reply to the cancelled prompt: %s %+v, want -32800", i, reply.Result, reply.Error)
		}
	}
	c.mustPrompt(sid, "hello", acp.StopReasonEndTurn)

	// A prompt sent right after $/cancel_request (before the cancelled
	// prompt's reply) waits for the cancelled turn like after session/cancel.
	for i := range *loops {
		ctx, cancel := context.WithCancel(context.Background())
		done := async(func() error {
			return c.conn.Call(ctx, acp.AgentMethodSessionPrompt, acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: "block"}}}}, &acp.PromptResponse{})
		})
		g.waitStarted(t)
		cancel()
		await(t, "the abandoned call", done)
		stop, err := c.prompt(sid, "next")
		if err != nil || stop != acp.StopReasonEndTurn {
			t.Fatalf("iteration %d: prompt right after $/cancel_request: %v %q", i, err, stop)
		}
	}
}
