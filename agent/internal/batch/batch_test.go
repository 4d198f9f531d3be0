package batch

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"acpd/acp"
	"acpd/model"
	"acpd/tools"
)

// Refused and unknown calls fail without running, a panicking tool fails
// its call, and results keep the calls' order with images dropped for a
// model that cannot read them.
func TestRun(t *testing.T) {
	img := &tools.Tool{Def: model.ToolDef{Name: "img"}, ReadOnly: true, Run: func(ctx context.Context, env tools.Env, c *tools.Call) tools.Result {
		return tools.Result{Text: "ok", Images: []model.Part{{Type: model.PartImage, MimeType: "image/png", Data: "AA=="}}}
	}}
	boom := &tools.Tool{Def: model.ToolDef{Name: "boom"}, Run: func(ctx context.Context, env tools.Env, c *tools.Call) tools.Result {
		panic("boom")
	}}
	var mu sync.Mutex
	status := map[string]acp.ToolCallStatus{}
	o := Options{
		Tools: func() map[string]*tools.Tool { return map[string]*tools.Tool{"img": img, "boom": boom} },
		Update: func(u acp.ToolCallUpdate) {
			mu.Lock()
			defer mu.Unlock()
			if u.Status != nil {
				status[string(u.ToolCallID)] = *u.Status
			}
		},
		Abandon: func(wait func()) { t.Error("nothing should be abandoned") },
	}
	in := json.RawMessage(`{}`)
	res, ends := Run(context.Background(), o, []Call{
		{ID: "a", Name: "img", Input: in},
		{ID: "b", Name: "img", Input: in, Refused: true},
		{ID: "c", Name: "nope", Input: in},
		{ID: "d", Name: "boom", Input: in},
	})
	if len(res) != 4 || len(ends) != 0 {
		t.Fatalf("%d results", len(res))
	}
	for i, id := range []string{"a", "b", "c", "d"} {
		if res[i].ToolCallID != id {
			t.Errorf("result %d is of call %s", i, res[i].ToolCallID)
		}
	}
	for _, c := range res[0].Content {
		if c.Type == model.PartImage {
			t.Error("an image reached a model that cannot read images")
		}
	}
	want := map[string]acp.ToolCallStatus{"a": acp.ToolCallStatusCompleted, "b": acp.ToolCallStatusFailed, "c": acp.ToolCallStatusFailed, "d": acp.ToolCallStatusFailed}
	mu.Lock()
	defer mu.Unlock()
	for id, st := range want {
		if status[id] != st {
			t.Errorf("call %s ended %q, want %q", id, status[id], st)
		}
	}
	if !res[1].IsError || !res[2].IsError || !res[3].IsError {
		t.Errorf("refused, unknown and panicking calls must fail: %+v", res[1:])
	}
}

// The texts of results that end the turn come back in the calls' order.
func TestRunEndTurn(t *testing.T) {
	ask := &tools.Tool{Def: model.ToolDef{Name: "ask"}, ReadOnly: true, Run: func(ctx context.Context, env tools.Env, c *tools.Call) tools.Result {
		return tools.Result{Text: "shown", EndTurn: "Q" + c.ID}
	}}
	plain := &tools.Tool{Def: model.ToolDef{Name: "plain"}, ReadOnly: true, Run: func(ctx context.Context, env tools.Env, c *tools.Call) tools.Result {
		return tools.Result{Text: "ok"}
	}}
	o := Options{
		Tools:   func() map[string]*tools.Tool { return map[string]*tools.Tool{"ask": ask, "plain": plain} },
		Update:  func(acp.ToolCallUpdate) {},
		Abandon: func(wait func()) { t.Error("nothing should be abandoned") },
	}
	in := json.RawMessage(`{}`)
	res, ends := Run(context.Background(), o, []Call{{ID: "1", Name: "ask", Input: in}, {ID: "2", Name: "plain", Input: in}, {ID: "3", Name: "ask", Input: in}})
	if len(res) != 3 || len(ends) != 2 || ends[0] != "Q1" || ends[1] != "Q3" {
		t.Fatalf("results %+v, ends %q", res, ends)
	}
}
