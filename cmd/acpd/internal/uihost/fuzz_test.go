package uihost

import (
	"encoding/json"
	"slices"
	"testing"

	"acpd/acp"
)

// FuzzRelayParams: whatever a page posts, a relayed request carries only
// its method's own params, never a session or tool call of the page's.
func FuzzRelayParams(f *testing.F) {
	f.Add("tools/call", `{"name":"get-time","arguments":{},"sessionId":"s_x","toolCallId":"c_x"}`)
	f.Add("ui/message", `{"role":"user","content":[{"type":"text","text":"hi"}]}`)
	f.Add("resources/read", `null`)
	f.Add("ping", `{}`)
	f.Fuzz(func(t *testing.T, method, raw string) {
		to, params, err := relayParams(method, json.RawMessage(raw))
		if err != nil {
			return
		}
		allowed := map[string][]string{
			MethodCallTool: {"name", "arguments"}, MethodReadResource: {"uri"}, MethodMessage: {"role", "content"},
			MethodModelContext: {"content", "structuredContent"}, MethodLog: {"level", "data", "logger"},
		}[to]
		if allowed == nil {
			t.Fatalf("%q relayed as %q", method, to)
		}
		for k := range params {
			if !slices.Contains(allowed, k) {
				t.Fatalf("%s relayed param %q", to, k)
			}
		}
	})
}

// FuzzCarrier: whatever _meta a tool call update carries, the host does
// not fail, and a view it opens has html.
func FuzzCarrier(f *testing.F) {
	f.Add(`{"html":"<html></html>","server":"s","tool":"t","ui":{"csp":{"connectDomains":["https://a.test"]}}}`)
	f.Add(`{"toolResult":{"content":[]}}`)
	f.Add(`{"toolCancelled":{"reason":1}}`)
	f.Add(`"x"`)
	f.Fuzz(func(t *testing.T, meta string) {
		var m any
		if json.Unmarshal([]byte(meta), &m) != nil {
			return
		}
		h := New(Options{})
		defer h.stop()
		h.Update(acp.SessionNotification{SessionID: "s", Update: acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "c", Meta: map[string]any{Extension: m}}}})
		for _, v := range h.views {
			if v.html == "" {
				t.Fatal("a view without html")
			}
			_ = v.csp.policy(h.log)
		}
	})
}
