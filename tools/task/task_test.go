package task

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"acpd/tools"
)

// TestNeedsHost: the tool fails, without running anything, in a session
// that offers no sub-agent, and on a missing prompt.
func TestNeedsHost(t *testing.T) {
	tool := Tool()
	if !tool.ReadOnly || tool.Def.Name != "task" {
		t.Fatalf("tool %q read-only %v", tool.Def.Name, tool.ReadOnly)
	}
	env := struct{ tools.Env }{}
	r := tool.Run(context.Background(), env, &tools.Call{ID: "t1", Name: "task", Input: json.RawMessage(`{"prompt":"find x"}`)})
	if !r.IsError || !strings.Contains(r.Text, "not available") {
		t.Errorf("without a host: %+v", r)
	}
	r = tool.Run(context.Background(), env, &tools.Call{ID: "t1", Name: "task", Input: json.RawMessage(`{"prompt":" "}`)})
	if !r.IsError || !strings.Contains(r.Text, "prompt is empty") {
		t.Errorf("empty prompt: %+v", r)
	}
	if got := tool.Title(json.RawMessage(`{"description":"where is X","prompt":"p"}`)); got != "Explore: where is X" {
		t.Errorf("title %q", got)
	}
}
