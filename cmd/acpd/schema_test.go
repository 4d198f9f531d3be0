package main

import (
	"fmt"
	"strings"
	"testing"
)

// errRecorder is a testing.TB that records Errorf calls instead of failing.
type errRecorder struct {
	testing.TB
	errs []string
}

func (r *errRecorder) Helper() {}

func (r *errRecorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestSchemaValidatorCatchesBadMessages proves the harness's validation can
// fail: each message below breaks the ACP schema or the JSON-RPC pairing.
func TestSchemaValidatorCatchesBadMessages(t *testing.T) {
	t.Parallel()
	s := loadSchema(t, false)
	in := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`),
		[]byte(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}`),
		[]byte(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`),
	}
	good := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}}`),
		[]byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`),
		[]byte(`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[{"optionId":"a","name":"Allow","kind":"allow_once"}]}}`),
		[]byte(`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`),
		[]byte(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"cwd must be absolute"}}`),
		[]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`),
	}
	rec := &errRecorder{TB: t}
	s.validateConversation(rec, "good", in, good, true)
	if len(rec.errs) != 0 {
		t.Fatalf("valid conversation rejected:\n%s", strings.Join(rec.errs, "\n"))
	}

	bad := map[string]string{
		"unknown update kind":    `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_mumble","content":{"type":"text","text":"hi"}}}}`,
		"update without id":      `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
		"bad stop reason":        `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"bored"}}`,
		"bad tool status":        `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"exploded"}}}`,
		"new session without id": `{"jsonrpc":"2.0","id":3,"result":{}}`,
		"wrong jsonrpc":          `{"jsonrpc":"1.0","id":2,"result":{"stopReason":"end_turn"}}`,
		"result and error":       `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"},"error":{"code":1,"message":"x"}}`,
		"unknown response id":    `{"jsonrpc":"2.0","id":77,"result":{}}`,
		"agent-side method":      `{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}`,
		"error without message":  `{"jsonrpc":"2.0","id":2,"error":{"code":-32603}}`,
		"not JSON":               `{"jsonrpc":`,
	}
	for name, line := range bad {
		rec := &errRecorder{TB: t}
		s.validateConversation(rec, name, in, [][]byte{[]byte(line)}, false)
		if len(rec.errs) == 0 {
			t.Errorf("%s: %s passed validation", name, line)
		}
	}
	rec = &errRecorder{TB: t}
	s.validateConversation(rec, "twice", in, [][]byte{good[3], good[3]}, false)
	if len(rec.errs) == 0 {
		t.Error("a request answered twice passed validation")
	}
	rec = &errRecorder{TB: t}
	s.validateConversation(rec, "unanswered", in, good[:1], true)
	if len(rec.errs) == 0 {
		t.Error("unanswered requests passed validation")
	}
}
