package agent

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"acpd/acp"
	"acpd/model"
	"acpd/tools"
)

var formCaps = &acp.ClientCapabilities{Elicitation: &acp.ElicitationCapabilities{Form: &acp.ElicitationFormCapabilities{}}}

var askInput = map[string]any{"question": "Which database?", "choices": []string{"Postgres", "SQLite"}}

// An editor that shows forms gets ask_user's question as elicitation/create
// (scoped to the session and the call, claude-agent-acp's form), and the
// model is told its answer: accepted, declined or cancelled.
func TestAskUserForm(t *testing.T) {
	sqlite := "SQLite"
	tests := []struct {
		name   string
		answer acp.CreateElicitationResponse
		want   string
	}{
		{"accept", acp.CreateElicitationResponse{Accept: &acp.ElicitationAcceptAction{Content: map[string]acp.ElicitationContentValue{tools.AskChoiceField: {String: &sqlite}}}}, "The user answered: SQLite"},
		{"decline", acp.CreateElicitationResponse{Decline: &acp.CreateElicitationResponseDecline{}}, "The user declined to answer."},
		{"cancel", acp.CreateElicitationResponse{Cancel: &acp.CreateElicitationResponseCancel{}}, "The user cancelled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t, "")
			rec := record(toolSeq(toolCallReq{"ask_user", askInput}))
			env.setModel(mainModel, rec)
			c := env.start(formCaps)
			var mu sync.Mutex
			var got []acp.CreateElicitationRequest
			c.mu.Lock()
			c.elicit = func(ctx context.Context, req acp.CreateElicitationRequest) (any, error) {
				mu.Lock()
				got = append(got, req)
				mu.Unlock()
				return tc.answer, nil
			}
			c.mu.Unlock()
			sid := c.newSession()
			c.mustPrompt(sid, "pick one", acp.StopReasonEndTurn)

			res := toolResults(rec.last(t))
			if len(res) != 1 || res[0].IsError || !strings.HasPrefix(resultText(res[0]), tc.want) {
				t.Fatalf("tool result = %+v, want %q", res, tc.want)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 {
				t.Fatalf("editor got %d elicitation requests, want 1", len(got))
			}
			r := got[0]
			if r.Message != "Which database?" || r.Form == nil || r.Form.Session == nil || r.Form.Session.SessionID != sid ||
				r.Form.Session.ToolCallID == nil || *r.Form.Session.ToolCallID != acp.ToolCallID(res[0].ToolCallID) {
				t.Fatalf("request = %+v", r)
			}
			p := r.Form.RequestedSchema.Properties[tools.AskChoiceField]
			if p.String == nil || len(p.String.OneOf) != 2 || p.String.OneOf[1].Const != "SQLite" || r.Form.RequestedSchema.Properties[tools.AskCustomField].String == nil {
				t.Errorf("requested schema = %+v", r.Form.RequestedSchema)
			}
		})
	}
}

// An unanswered form is withdrawn after agent.ask_timeout_ms and the model
// is told nobody answered.
func TestAskUserTimeout(t *testing.T) {
	env := newEnv(t, "[agent]\nask_timeout_ms = 20\n")
	rec := record(toolSeq(toolCallReq{"ask_user", askInput}))
	env.setModel(mainModel, rec)
	c := env.start(formCaps)
	withdrawn := make(chan struct{})
	c.mu.Lock()
	c.elicit = func(ctx context.Context, req acp.CreateElicitationRequest) (any, error) {
		<-ctx.Done() // $/cancel_request from the agent
		close(withdrawn)
		return nil, ctx.Err()
	}
	c.mu.Unlock()
	sid := c.newSession()
	c.mustPrompt(sid, "pick one", acp.StopReasonEndTurn)
	await(t, "the request withdrawn", withdrawn)
	res := toolResults(rec.last(t))
	if len(res) != 1 || res[0].IsError || !strings.HasPrefix(resultText(res[0]), "No answer within 20ms") {
		t.Fatalf("tool result = %+v", res)
	}
}

// session/cancel while the form is shown withdraws it and ends the turn
// cancelled.
func TestAskUserCancelledTurn(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, toolSeq(toolCallReq{"ask_user", askInput}))
	c := env.start(formCaps)
	asked := make(chan struct{}, 1)
	c.mu.Lock()
	c.elicit = func(ctx context.Context, req acp.CreateElicitationRequest) (any, error) {
		asked <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	c.mu.Unlock()
	sid := c.newSession()
	done := c.promptAsync(sid, "pick one")
	await(t, "elicitation/create", asked)
	c.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionID: sid})
	if r := await(t, "prompt reply", done); r.err != nil || r.stop != acp.StopReasonCancelled {
		t.Fatalf("prompt = %+v, want stop reason cancelled", r)
	}
}

// An editor without form elicitation is never sent elicitation/create: the
// question, with its choices, is the agent's message and the turn ends
// there; the next prompt answers it, after the question in the
// transcript. Plan mode offers ask_user and says to use it.
func TestAskUserWithoutElicitation(t *testing.T) {
	env := newEnv(t, "")
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		if lastUserText(req) == "plan it" && turnStep(req) == 0 {
			_ = yield(model.Event{Type: model.EventToolStart, ToolCallID: "ask1", ToolName: "ask_user"}, nil) &&
				yield(model.Event{Type: model.EventToolDone, ToolCallID: "ask1", ToolName: "ask_user", Input: []byte(`{"question":"Which database?","choices":["Postgres","SQLite"]}`)}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
			return
		}
		_ = yield(model.Event{Type: model.EventText, Text: "ok."}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
	}))
	env.setModel(mainModel, rec)
	c := env.start(nil) // c.elicit is nil: a request would fail the test
	sid := c.newSession()
	c.mustMode(sid, modePlan)
	us := c.promptUpdates(sid, "plan it")
	question := "Which database?\n\n1. Postgres\n2. SQLite"
	if got := chunkText(us); got != question {
		t.Fatalf("agent message %q, want %q", got, question)
	}
	if st := finalStatus(us, "ask1"); st != acp.ToolCallStatusCompleted {
		t.Errorf("ask_user ended %q", st)
	}
	reqs := rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests in the asking turn, want 1 (the turn ends with the question)", len(reqs))
	}
	if !slices.ContainsFunc(reqs[0].Tools, func(d model.ToolDef) bool { return d.Name == "ask_user" }) || !strings.Contains(reqs[0].System, "ask_user") {
		t.Errorf("plan mode does not offer ask_user, or does not say to use it")
	}
	if res := toolResults(reqs[0]); len(res) != 0 {
		t.Fatalf("results before the call: %+v", res)
	}

	c.mustPrompt(sid, "Postgres", acp.StopReasonEndTurn)
	next := rec.last(t)
	n := len(next.Messages)
	if n < 3 || next.Messages[n-2].Role != model.RoleAssistant || next.Messages[n-2].Text() != question || lastUserText(&next) != "Postgres" {
		t.Fatalf("the answer does not follow the question: %+v", next.Messages)
	}
	res := toolResults(next)
	if len(res) != 1 || !strings.Contains(resultText(res[0]), "the turn ends here") {
		t.Fatalf("tool result = %+v", res)
	}
}
