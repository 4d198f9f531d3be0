package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestAppsContext: the latest context of each view is given once.
func TestAppsContext(t *testing.T) {
	a := NewApps(nil)
	a.bind("c1", "basic", "get-time")
	ctx := context.Background()
	for _, text := range []string{"first", "second"} {
		p, _ := json.Marshal(map[string]any{"sessionId": "s", "toolCallId": "c1", "content": []any{map[string]any{"type": "text", "text": text}}})
		if _, err := a.Handle(ctx, MethodAppModelContext, p); err != nil {
			t.Fatal(err)
		}
	}
	got := a.TakeContext()
	if !strings.Contains(got, "second") || strings.Contains(got, "first") || !strings.Contains(got, "get-time") {
		t.Errorf("context = %q, want the latest only", got)
	}
	if again := a.TakeContext(); again != "" {
		t.Errorf("context given twice: %q", again)
	}
	if _, err := a.Handle(ctx, MethodAppModelContext, json.RawMessage(`{"toolCallId":"other","content":[{"type":"text","text":"x"}]}`)); !errors.Is(err, ErrAppRefused) {
		t.Errorf("context of an unknown view: %v", err)
	}
}

// FuzzAppsHandle: requests naming no view are refused, whatever they hold.
func FuzzAppsHandle(f *testing.F) {
	for _, s := range []string{`{}`, `{"toolCallId":"c1","name":"x"}`, `{"toolCallId":"zz","uri":"ui://a"}`, `[]`, `null`} {
		f.Add(MethodAppCallTool, s)
		f.Add(MethodAppModelContext, s)
	}
	f.Fuzz(func(t *testing.T, method, params string) {
		a := NewApps(nil)
		a.bind("c1", "basic", "get-time")
		var p struct {
			ToolCallID string `json:"toolCallId"`
		}
		if json.Unmarshal([]byte(params), &p) != nil || p.ToolCallID == "c1" {
			return // bound calls reach the (absent) manager
		}
		if _, err := a.Handle(context.Background(), method, json.RawMessage(params)); err == nil {
			t.Fatalf("%s %s served without a view", method, params)
		}
	})
}
