package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/model"
	"acpd/tools"
)

// TestCancelAbandonsStuckCall: a tool call stuck where cancellation cannot
// reach it (here: it ignores its context) does not keep a cancelled turn
// from ending; the call is abandoned with a result saying so, and the
// session waits for it when it closes.
func TestCancelAbandonsStuckCall(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(nil)
	started, release := make(chan struct{}), make(chan struct{})
	finished := make(chan struct{})
	c.agent.builtin["stuck"] = &tools.Tool{
		Def:  model.ToolDef{Name: "stuck", Description: "blocks", InputSchema: json.RawMessage(`{"type":"object"}`)},
		Kind: acp.ToolKindThink,
		Run: func(ctx context.Context, env tools.Env, call *tools.Call) tools.Result {
			close(started)
			<-release // deaf to ctx, like a blocking system call
			close(finished)
			return tools.Result{Text: "late"}
		},
	}
	sid := c.newSession()
	env.setModel(mainModel, toolSeq(toolCallReq{"stuck", map[string]any{}}))
	res := c.promptAsync(sid, "go")
	<-started
	c.notify(acp.AgentMethodSessionCancel, acp.CancelNotification{SessionID: sid})
	r := await(t, "the cancelled prompt", res)
	if r.err != nil || r.stop != acp.StopReasonCancelled {
		t.Fatalf("prompt: %v %q, want cancelled", r.err, r.stop)
	}
	rec := record(okBackend)
	env.setModel(mainModel, rec)
	c.mustPrompt(sid, "next", acp.StopReasonEndTurn)
	req := rec.last(t)
	ids := toolUseIDs(req)
	if p, ok := resultFor(req, ids[0]); len(ids) != 1 || !ok || !p.IsError || !strings.Contains(resultText(p), "abandoned") {
		t.Fatalf("the stuck call's result in the transcript: %v %+v", ids, p)
	}
	close(release)
	c.close()
	select {
	case <-finished:
	default:
		t.Fatal("the session closed before its abandoned call finished")
	}
}
