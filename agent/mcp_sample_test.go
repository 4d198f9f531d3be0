package agent

import (
	"context"
	"strings"
	"sync"
	"testing"

	"acpd/acp"
	"acpd/model"
)

// An MCP server's sampling request is answered by the session's model once
// the user allows it: "always for this server" stops the asking, and a
// rejection fails the server's request.
func TestMCPSampling(t *testing.T) {
	env := newEnv(t, "")
	var mu sync.Mutex
	var sampled []*model.Request
	main := toolSeq(
		toolCallReq{"mcp__everything__trigger-sampling-request", map[string]any{"prompt": "name a colour", "maxTokens": 20}},
		toolCallReq{"mcp__everything__trigger-sampling-request", map[string]any{"prompt": "and another", "maxTokens": 20}},
	)
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		if len(req.Tools) == 0 && req.MaxOutputTokens > 0 { // the server's sampling request
			mu.Lock()
			sampled = append(sampled, req)
			mu.Unlock()
			_ = yield(model.Event{Type: model.EventText, Text: "teal"}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
			return
		}
		main(ctx, req, yield)
	}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	var asked []acp.RequestPermissionRequest
	c.setPerm(func(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
		mu.Lock()
		asked = append(asked, req)
		mu.Unlock()
		for _, o := range req.Options {
			if o.OptionID == "allow_server" || (o.Kind == acp.PermissionOptionKindAllowOnce && !strings.HasPrefix(string(req.ToolCall.ToolCallID), "sample_")) {
				return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.SelectedPermissionOutcome{OptionID: o.OptionID}}}, nil
			}
		}
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
	})
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{everythingServer(t)}}, &resp); err != nil {
		t.Fatal(err)
	}
	c.mustPrompt(resp.SessionID, "sample twice", acp.StopReasonEndTurn)

	res := toolResults(rec.last(t))
	if len(res) != 2 {
		t.Fatalf("tool results = %+v", res)
	}
	for _, r := range res {
		if r.IsError || !strings.Contains(resultText(r), "teal") {
			t.Errorf("tool result = %+v", r)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sampled) != 2 || sampled[0].MaxOutputTokens != 20 || !strings.Contains(sampled[0].Messages[0].Text(), "name a colour") {
		t.Errorf("sampling requests = %+v", sampled)
	}
	var sampleAsks int
	for _, a := range asked {
		if strings.HasPrefix(string(a.ToolCall.ToolCallID), "sample_") {
			sampleAsks++
			if len(a.Options) != 3 {
				t.Errorf("sampling options = %+v", a.Options)
			}
		}
	}
	if sampleAsks != 1 {
		t.Errorf("asked %d times about sampling, want once (then always for this server)", sampleAsks)
	}
}

// A rejected sampling request never reaches the model, and the server's
// request fails.
func TestMCPSamplingRejected(t *testing.T) {
	env := newEnv(t, "")
	var mu sync.Mutex
	sampled := 0
	main := toolSeq(toolCallReq{"mcp__everything__trigger-sampling-request", map[string]any{"prompt": "secret stuff", "maxTokens": 20}})
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		if len(req.Tools) == 0 && req.MaxOutputTokens > 0 {
			mu.Lock()
			sampled++
			mu.Unlock()
		}
		main(ctx, req, yield)
	}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	c.setPerm(func(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
		want := acp.PermissionOptionKindAllowOnce
		if strings.HasPrefix(string(req.ToolCall.ToolCallID), "sample_") {
			want = acp.PermissionOptionKindRejectOnce
		}
		return choose(want)(ctx, req)
	})
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{everythingServer(t)}}, &resp); err != nil {
		t.Fatal(err)
	}
	c.mustPrompt(resp.SessionID, "sample", acp.StopReasonEndTurn)
	res := toolResults(rec.last(t))
	if len(res) != 1 || !strings.Contains(resultText(res[0]), "did not allow sampling") {
		t.Errorf("tool result = %+v, want the server to report the refusal", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if sampled != 0 {
		t.Errorf("the model was sampled %d times after a rejection", sampled)
	}
}
