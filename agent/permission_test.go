package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/model"
)

// writeCall is a write_file call of path with content.
func writeCall(path, content string) toolCallReq {
	return toolCallReq{"write_file", map[string]string{"path": path, "content": content}}
}

// TestPermissionAnswers: only a selected, offered allow option lets a call
// run; every other answer is a rejection the model hears about.
func TestPermissionAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer permFunc
		want   string // in the tool result the model gets
	}{
		{"forged option id", func(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
			return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.SelectedPermissionOutcome{OptionID: "allow_everything"}}}, nil
		}, "rejected"},
		{"unknown outcome shape", func(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
			return json.RawMessage(`{"outcome":{"outcome":"approved","optionId":"allow_once"}}`), nil
		}, "Not allowed"},
		{"error reply", func(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
			return nil, fmt.Errorf("the dialog crashed")
		}, "Not allowed"},
		{"reject", choose(acp.PermissionOptionKindRejectOnce), "The user rejected this write_file call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, "")
			rec := record(toolSeq(writeCall("out.txt", "data")))
			env.setModel(mainModel, rec)
			c := env.start(nil)
			c.setPerm(tc.answer)
			sid := c.newSession()
			c.mustPrompt(sid, "write it", acp.StopReasonEndTurn)
			if fileExists(env.path("out.txt")) {
				t.Fatal("write_file ran without permission")
			}
			reqs := c.permissionRequests()
			if len(reqs) != 1 {
				t.Fatalf("%d permission requests, want 1", len(reqs))
			}
			res := toolResults(rec.last(t))
			if len(res) != 1 || !res[0].IsError || !strings.Contains(resultText(res[0]), tc.want) {
				t.Errorf("tool results %+v, want an error containing %q", res, tc.want)
			}
			ups := c.allUpdates(sid)
			if st := finalStatus(ups, res[0].ToolCallID); st != acp.ToolCallStatusFailed {
				t.Errorf("rejected call ends %q, want failed", st)
			}
		})
	}
}

// TestRejectedCardText: a rejected call's card says "Rejected." to the
// user, while the model gets the instruction meant for it.
func TestRejectedCardText(t *testing.T) {
	env := newEnv(t, "")
	rec := record(toolSeq(writeCall("out.txt", "data")))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	c.setPerm(choose(acp.PermissionOptionKindRejectOnce))
	sid := c.newSession()
	c.mustPrompt(sid, "write it", acp.StopReasonEndTurn)
	res := toolResults(rec.last(t))
	if len(res) != 1 || !strings.Contains(resultText(res[0]), "Do not retry it") {
		t.Fatalf("the model's result: %+v", res)
	}
	var card []string
	for _, u := range c.allUpdates(sid) {
		if u.ToolCallUpdate != nil && string(u.ToolCallUpdate.ToolCallID) == res[0].ToolCallID {
			for _, cc := range u.ToolCallUpdate.Content {
				if cc.Content != nil && cc.Content.Content.Text != nil {
					card = append(card, cc.Content.Content.Text.Text)
				}
			}
		}
	}
	if got := strings.Join(card, "|"); got != "Rejected." {
		t.Errorf("the rejected call's card shows %q, want %q", got, "Rejected.")
	}
}

// TestPermissionCancelledOutcome: a cancelled outcome means the client is
// cancelling the turn (ACP), so the turn ends "cancelled" with no further
// model request, whether the session/cancel comes before the answer, after
// it (agent-shell), or not at all; the next prompt works.
func TestPermissionCancelledOutcome(t *testing.T) {
	for _, order := range []string{"cancel first", "outcome first", "outcome only"} {
		t.Run(order, func(t *testing.T) {
			env := newEnv(t, "")
			rec := record(toolSeq(writeCall("out.txt", "data")))
			env.setModel(mainModel, rec)
			c := env.start(nil)
			var sid acp.SessionID
			c.setPerm(func(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
				if order == "cancel first" {
					c.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionID: sid})
				}
				return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
			})
			sid = c.newSession()
			c.mustPrompt(sid, "write it", acp.StopReasonCancelled)
			if order == "outcome first" {
				c.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionID: sid})
			}
			if fileExists(env.path("out.txt")) {
				t.Fatal("write_file ran after a cancelled permission outcome")
			}
			if n := len(rec.requests()); n != 1 {
				t.Errorf("%d model requests, want 1 (none after the cancelled outcome)", n)
			}
			for _, u := range c.allUpdates(sid) {
				if u.ToolCallUpdate != nil {
					for _, cc := range u.ToolCallUpdate.Content {
						if cc.Content != nil && cc.Content.Content.Text != nil && strings.Contains(cc.Content.Content.Text.Text, "rejected") {
							t.Errorf("the card says the user rejected the call: %q", cc.Content.Content.Text.Text)
						}
					}
				}
			}
			// The session goes on: the next prompt is a turn of its own.
			c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
			c.mustPrompt(sid, "try again", acp.StopReasonEndTurn)
		})
	}
}

// TestPermissionRequestShape checks what the client is asked.
func TestPermissionRequestShape(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, toolSeq(writeCall("out.txt", "data")))
	c, sid := env.allowingSession()
	c.mustPrompt(sid, "write it", acp.StopReasonEndTurn)
	reqs := c.permissionRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d permission requests", len(reqs))
	}
	r := reqs[0]
	if r.SessionID != sid || r.ToolCall.ToolCallID == "" || r.ToolCall.Kind == nil || *r.ToolCall.Kind != acp.ToolKindEdit {
		t.Errorf("permission request %+v", r)
	}
	if len(r.ToolCall.Locations) != 1 || r.ToolCall.Locations[0].Path != env.path("out.txt") {
		t.Errorf("locations %+v, want the absolute path", r.ToolCall.Locations)
	}
	got := map[acp.PermissionOptionKind]bool{}
	for _, o := range r.Options {
		got[o.Kind] = true
		if o.Name == "" || o.OptionID == "" {
			t.Errorf("option %+v lacks a name or id", o)
		}
	}
	for _, k := range []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce, acp.PermissionOptionKindAllowAlways, acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways} {
		if !got[k] {
			t.Errorf("option %s not offered", k)
		}
	}
	if data, err := os.ReadFile(env.path("out.txt")); err != nil || string(data) != "data" {
		t.Errorf("allowed write: %q %v", data, err)
	}
}

// TestPermissionAllowAlways: an "always" answer is remembered, so the same
// call does not ask again, in this session or the next.
func TestPermissionAllowAlways(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, toolSeq(writeCall("out.txt", "one")))
	c := env.start(nil)
	c.setPerm(choose(acp.PermissionOptionKindAllowAlways))
	sid := c.newSession()
	c.mustPrompt(sid, "first", acp.StopReasonEndTurn)
	if n := len(c.permissionRequests()); n != 1 {
		t.Fatalf("%d permission requests, want 1", n)
	}
	c.setPerm(func(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
		t.Error("asked again after allow_always")
		return choose(acp.PermissionOptionKindRejectOnce)(ctx, req)
	})
	env.setModel(mainModel, toolSeq(writeCall("out.txt", "two")))
	c.mustPrompt(sid, "second", acp.StopReasonEndTurn)
	if data, _ := os.ReadFile(env.path("out.txt")); string(data) != "two" {
		t.Errorf("second write left %q", data)
	}
	// Another file still asks.
	rec := record(toolSeq(writeCall("other.txt", "x")))
	env.setModel(mainModel, rec)
	c.setPerm(nil)
	c.mustPrompt(sid, "third", acp.StopReasonEndTurn)
	if n := len(c.permissionRequests()); n != 2 {
		t.Errorf("a different file: %d permission requests in all, want 2", n)
	}
}

// TestCancelWhilePermissionPending: session/cancel while the client shows
// a permission dialog ends the turn "cancelled", withdraws the dialog and
// never runs the tool.
func TestCancelWhilePermissionPending(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		// Each turn writes a file named after the prompt.
		toolSeq(writeCall(lastUserText(req)+".txt", "x"))(ctx, req, yield)
	}))
	c := env.start(nil)
	asked := make(chan context.Context, 1)
	c.setPerm(func(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
		asked <- ctx
		<-ctx.Done() // the user never answers
		return nil, ctx.Err()
	})
	sid := c.newSession()
	for i := range *loops {
		name := fmt.Sprintf("file%d", i)
		res := c.promptAsync(sid, name)
		dialog := await(t, "the permission request", asked)
		c.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionID: sid})
		r := await(t, "the cancelled prompt", res)
		if r.err != nil || r.stop != acp.StopReasonCancelled {
			t.Fatalf("iteration %d: %v %q, want cancelled", i, r.err, r.stop)
		}
		if dialog.Err() == nil {
			t.Fatalf("iteration %d: the permission request was not withdrawn ($/cancel_request)", i)
		}
		if fileExists(env.path(name + ".txt")) {
			t.Fatalf("iteration %d: the tool ran after the turn was cancelled", i)
		}
	}
	// The session goes on.
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	c.mustPrompt(sid, "final", acp.StopReasonEndTurn)
	if !fileExists(env.path("final.txt")) {
		t.Error("the tool did not run after the cancelled turns")
	}
}
