package replay

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"acpd/model"
	"acpd/model/internal/sse/ssetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func writeScript(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.jsonl")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustNew(t *testing.T, path string) *Backend {
	t.Helper()
	b, err := New(path)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return b
}

// request returns a request with n assistant messages, each preceded by a
// user message, and a final user message; texts are added as user text.
func request(n int, texts ...string) *model.Request {
	req := &model.Request{Model: "script.jsonl"}
	for i := range n {
		req.Messages = append(req.Messages,
			model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "q"}}},
			model.Message{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartText, Text: "a" + string(rune('0'+i))}}})
	}
	for _, s := range texts {
		req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: s}}})
	}
	if len(texts) == 0 {
		req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "q"}}})
	}
	return req
}

// collect drains a stream; err is the error it ended with, if any.
func collect(ctx context.Context, b model.Backend, req *model.Request) (events []model.Event, err error) {
	for ev, err := range b.Stream(ctx, req) {
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	return events, nil
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func wantEvents(t *testing.T, got, want []model.Event) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("events:\n got %s\nwant %s", g, w)
	}
}

func wantKind(t *testing.T, err error, kind model.ErrorKind, msgRE string) *model.Error {
	t.Helper()
	var me *model.Error
	if !errors.As(err, &me) || me.Kind != kind {
		t.Fatalf("error %v (%T), want a *model.Error of kind %s", err, err, kind)
	}
	if !regexp.MustCompile(msgRE).MatchString(me.Message) {
		t.Errorf("message %q does not match %q", me.Message, msgRE)
	}
	return me
}

func TestExampleScript(t *testing.T) {
	path := filepath.Join("testdata", "example.jsonl")
	b := mustNew(t, path)
	ctx := context.Background()

	got, err := collect(ctx, b, request(0))
	if err != nil {
		t.Fatal(err)
	}
	wantEvents(t, got, []model.Event{
		{Type: model.EventReasoning, Text: "The user wants the file list. "},
		{Type: model.EventReasoning, Text: "I will run ls."},
		{Type: model.EventReasoningDone, Signature: "sig-1"},
		{Type: model.EventText, Text: "Let me look at the files."},
		{Type: model.EventToolStart, ToolCallID: "call_1", ToolName: "run_command"},
		{Type: model.EventToolDelta, ToolCallID: "call_1", Text: `{"command":"ls"}`},
		{Type: model.EventToolDone, ToolCallID: "call_1", ToolName: "run_command", Input: raw(`{"command":"ls"}`)},
		{Type: model.EventUsage, Usage: &model.Usage{InputTokens: 1200, OutputTokens: 40}},
		{Type: model.EventFinish, Finish: model.FinishToolUse},
	})

	// Response #2 expects the tool result of call_1 in the transcript.
	req := request(1)
	req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Parts: []model.Part{
		{Type: model.PartToolResult, ToolCallID: "call_1", Content: []model.Part{{Type: model.PartText, Text: "go.mod"}}},
	}})
	got, err = collect(ctx, b, req)
	if err != nil {
		t.Fatal(err)
	}
	wantEvents(t, got, []model.Event{
		{Type: model.EventToolStart, ToolCallID: "call_2", ToolName: "read_file"},
		{Type: model.EventToolDelta, ToolCallID: "call_2", Text: `{"path":`},
		{Type: model.EventToolDelta, ToolCallID: "call_2", Text: `"go.mod"}`},
		{Type: model.EventToolDone, ToolCallID: "call_2", ToolName: "read_file", Input: raw(`{"path":"go.mod"}`)},
		{Type: model.EventFinish, Finish: model.FinishToolUse},
	})
	_, err = collect(ctx, b, request(1))
	wantKind(t, err, model.ErrReplay, `example\.jsonl:\d+: response #2 expects the request's messages to contain "\\"toolCallId\\":\\"call_1\\""`)

	got, err = collect(ctx, b, request(2))
	if err != nil {
		t.Fatal(err)
	}
	wantEvents(t, got, []model.Event{
		{Type: model.EventText, Text: "The module is named acpd."},
		{Type: model.EventUsage, Usage: &model.Usage{InputTokens: 1500, OutputTokens: 12, CacheReadTokens: 1200}},
		{Type: model.EventFinish, Finish: model.FinishEndTurn},
	})

	_, err = collect(ctx, b, request(3))
	wantKind(t, err, model.ErrReplay, "^"+regexp.QuoteMeta("replay script "+path+" has 3 responses; request needs response #4")+"$")
}

func TestFinishReasons(t *testing.T) {
	b := mustNew(t, writeScript(t, `
{"type":"text","text":"a"}
{"type":"finish"}
{"type":"tool_start","toolCallId":"c","toolName":"t"}
{"type":"tool_done","toolCallId":"c","input":{}}
{"type":"finish"}
{"type":"text","text":"long"}
{"type":"finish","finish":"max_tokens"}
{"type":"finish","finish":"refusal"}
{"type":"tool_done","toolCallId":"c","toolName":"t"}
{"type":"finish","finish":"end_turn"}
`))
	for i, want := range []model.FinishReason{model.FinishEndTurn, model.FinishToolUse, model.FinishMaxTokens, model.FinishRefusal, model.FinishEndTurn} {
		got, err := collect(context.Background(), b, request(i))
		if err != nil {
			t.Fatalf("response #%d: %v", i+1, err)
		}
		if last := got[len(got)-1]; last.Type != model.EventFinish || last.Finish != want {
			t.Errorf("response #%d ended with %+v, want finish %s", i+1, last, want)
		}
	}
	// The synthesised tool call of the last response has start, delta, done.
	got, _ := collect(context.Background(), b, request(4))
	wantEvents(t, got, []model.Event{
		{Type: model.EventToolStart, ToolCallID: "c", ToolName: "t"},
		{Type: model.EventToolDelta, ToolCallID: "c", Text: "{}"},
		{Type: model.EventToolDone, ToolCallID: "c", ToolName: "t", Input: raw("{}")},
		{Type: model.EventFinish, Finish: model.FinishEndTurn},
	})
}

func TestResponseIndexIsAssistantCount(t *testing.T) {
	path := writeScript(t, `{"type":"text","text":"zero"}
{"type":"finish"}
{"type":"text","text":"one"}
{"type":"finish"}
{"type":"text","text":"two"}
{"type":"finish"}
`)
	text := func(b *Backend, req *model.Request) string {
		t.Helper()
		got, err := collect(context.Background(), b, req)
		if err != nil {
			t.Fatal(err)
		}
		return got[0].Text
	}
	b := mustNew(t, path)
	// Out of order, repeated, and with user-only tool-result messages.
	for _, tc := range []struct {
		req  *model.Request
		want string
	}{
		{request(2), "two"},
		{request(0), "zero"},
		{request(0, "tool result", "more"), "zero"},
		{request(1), "one"},
		{request(2), "two"},
		{&model.Request{}, "zero"},
		{nil, "zero"},
	} {
		if got := text(b, tc.req); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	// A fresh backend (a restarted process) continues at the same place.
	if got := text(mustNew(t, path), request(1)); got != "one" {
		t.Errorf("fresh backend: got %q, want one", got)
	}
}

func TestErrorLine(t *testing.T) {
	b := mustNew(t, writeScript(t, `
{"type":"text","text":"partial"}
{"type":"error","kind":"overloaded","message":"busy","status":529,"retryAfterMs":1500}
{"type":"error","kind":"auth"}
`))
	got, err := collect(context.Background(), b, request(0))
	wantEvents(t, got, []model.Event{{Type: model.EventText, Text: "partial"}})
	me := wantKind(t, err, model.ErrOverloaded, "^busy$")
	if me.Status != 529 || me.RetryAfter != 1500*time.Millisecond || !me.Retryable() {
		t.Errorf("error = %+v", me)
	}
	_, err = collect(context.Background(), b, request(1))
	if me := wantKind(t, err, model.ErrAuth, "auth"); me.Retryable() || me.Status != 0 {
		t.Errorf("error = %+v", me)
	}
	// Each stream gets its own error value.
	_, err1 := collect(context.Background(), b, request(1))
	_, err2 := collect(context.Background(), b, request(1))
	if err1 == err2 {
		t.Error("streams share one *model.Error")
	}
}

// TestDelay runs in a synctest bubble: the delays and the cancellation
// during the hour-long one happen in fake time, in a fixed order.
func TestDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustNew(t, writeScript(t, `
{"type":"delay","ms":1}
{"type":"text","text":"after a short delay"}
{"type":"finish"}
{"type":"text","text":"before"}
{"type":"delay","ms":3600000}
{"type":"text","text":"never"}
{"type":"finish"}
`))
		got, err := collect(context.Background(), b, request(0))
		if err != nil || len(got) != 2 {
			t.Fatalf("got %v, %v", got, err)
		}

		// Cancel while the stream waits in the hour-long delay.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var events []model.Event
		for ev, err := range b.Stream(ctx, request(1)) {
			if err != nil {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", err)
				}
				break
			}
			events = append(events, ev)
			time.AfterFunc(time.Millisecond, cancel) // fires during the delay (fake time)
		}
		wantEvents(t, events, []model.Event{{Type: model.EventText, Text: "before"}})
	})
}

// TestBackend runs the contract every backend keeps (package ssetest) on
// a script that stalls in an hour-long delay.
func TestBackend(t *testing.T) {
	ssetest.TestBackend(t, ssetest.Factory{Stalled: func(t *testing.T) ssetest.Stalled {
		b := mustNew(t, writeScript(t, "{\"type\":\"text\",\"text\":\"before\"}\n{\"type\":\"delay\",\"ms\":3600000}\n{\"type\":\"finish\"}\n"))
		return ssetest.Stalled{Backend: b, Request: request(0), Text: "before"}
	}})
}

func TestCancelledContext(t *testing.T) {
	b := mustNew(t, writeScript(t, "{\"type\":\"text\",\"text\":\"x\"}\n{\"type\":\"finish\"}\n"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got, err := collect(ctx, b, request(0))
	if len(got) != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, %v; want no events and context.Canceled", got, err)
	}
}

func TestExpect(t *testing.T) {
	b := mustNew(t, writeScript(t, `
{"type":"expect","contains":"the secret word is <xyzzy> & more"}
{"type":"expect","contains":"a0"}
{"type":"text","text":"seen"}
{"type":"finish"}
`))
	// Passes: both texts appear in the JSON of the messages (with HTML
	// characters unescaped).
	req := request(0, "the secret word is <xyzzy> & more", "a0")
	if got, err := collect(context.Background(), b, req); err != nil || len(got) != 2 {
		t.Fatalf("got %v, %v", got, err)
	}
	// Fails: the first expect is not met.
	got, err := collect(context.Background(), b, request(0, "nothing here"))
	if len(got) != 0 {
		t.Errorf("events before the failed expect: %v", got)
	}
	wantKind(t, err, model.ErrReplay, `script\.jsonl:2: response #1 expects the request's messages to contain .*xyzzy`)
	// Fails at the second expect: the messages lack "a0".
	_, err = collect(context.Background(), b, request(0, "the secret word is <xyzzy> & more"))
	wantKind(t, err, model.ErrReplay, `script\.jsonl:3: .*"a0"`)
}

func TestEarlyBreak(t *testing.T) {
	b := mustNew(t, filepath.Join("testdata", "example.jsonl"))
	n := 0
	for _, err := range b.Stream(context.Background(), request(0)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 2 {
			break
		}
	}
	// The backend is stateless: the next stream plays the whole response.
	got, err := collect(context.Background(), b, request(0))
	if err != nil || len(got) != 9 {
		t.Errorf("after an early break: %d events, %v", len(got), err)
	}
}

func TestEventsAreCopies(t *testing.T) {
	b := mustNew(t, writeScript(t, `{"type":"tool_done","toolCallId":"c","toolName":"t","input":{"a":1}}
{"type":"usage","usage":{"inputTokens":5}}
{"type":"finish"}
`))
	got, _ := collect(context.Background(), b, request(0))
	for _, ev := range got {
		for i := range ev.Input {
			ev.Input[i] = 'X'
		}
		if ev.Usage != nil {
			ev.Usage.InputTokens = 99
		}
	}
	again, _ := collect(context.Background(), b, request(0))
	if string(again[2].Input) != `{"a":1}` || again[3].Usage.InputTokens != 5 {
		t.Errorf("a consumer's changes leaked into the script: %+v", again)
	}
}

func TestMalformedScripts(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{"{\"type\":\"text\",\"text\":\"a\"}\nnot json\n", `:2: invalid JSON line`},
		{"[1]\n", `:1: invalid JSON line`},
		{"\n\n{\"type\":\"bogus\"}\n", `:3: unknown type "bogus"`},
		{"{\"text\":\"a\"}\n", `:1: missing "type"`},
		{"{\"type\":\"text\",\"txt\":\"a\"}\n", `:1: invalid line: json: unknown field "txt"`},
		{"{\"type\":\"finish\"} {}\n", `:1: invalid JSON line`},
		{"{\"type\":\"text\",\"text\":\"a\",\"toolCallId\":\"x\"}\n", `:1: a text event may only set text`},
		{"{\"type\":\"finish\",\"usage\":{}}\n", `:1: a finish event may only set finish`},
		{"{\"type\":\"text\",\"text\":\"a\"}\n{\"type\":\"finish\"}\n# c\n{\"type\":\"text\",\"text\":\"b\"}\n", `:4: response #2 has no finish or error line`},
		{"# only comments\n\n", `: no responses$`},
		{"{\"type\":\"request\",\"model\":\"m\",\"messages\":1}\n", `: no responses$`},
		{"{\"type\":\"text\",\"text\":\"a\"}\n{\"type\":\"request\",\"model\":\"m\",\"messages\":1}\n", `:2: request line inside response #1`},
		{"{\"type\":\"request\",\"content\":\"x\"}\n", `:1: invalid line: json: unknown field "content"`},
		{"{\"type\":\"tool_delta\",\"toolCallId\":\"c\",\"text\":\"{\"}\n", `:1: tool_delta for tool call "c" before its tool_start`},
		{"{\"type\":\"tool_delta\",\"text\":\"{\"}\n", `:1: tool_delta needs toolCallId`},
		{"{\"type\":\"tool_start\",\"toolCallId\":\"c\"}\n", `:1: tool_start needs toolCallId and toolName`},
		{"{\"type\":\"tool_start\",\"toolCallId\":\"c\",\"toolName\":\"t\"}\n{\"type\":\"tool_start\",\"toolCallId\":\"c\",\"toolName\":\"t\"}\n", `:2: tool call "c" was already started on line 1`},
		{"{\"type\":\"tool_done\",\"toolCallId\":\"c\",\"toolName\":\"t\"}\n{\"type\":\"tool_done\",\"toolCallId\":\"c\",\"toolName\":\"t\"}\n", `:2: tool call "c" is already done`},
		{"{\"type\":\"tool_done\",\"toolCallId\":\"c\",\"toolName\":\"t\"}\n{\"type\":\"tool_delta\",\"toolCallId\":\"c\"}\n", `:2: tool_delta for tool call "c" after its tool_done`},
		{"{\"type\":\"tool_done\",\"toolCallId\":\"c\"}\n", `:1: tool_done without tool_start needs toolName`},
		{"{\"type\":\"tool_done\",\"toolName\":\"t\"}\n", `:1: tool_done needs toolCallId`},
		{"{\"type\":\"tool_start\",\"toolCallId\":\"c\",\"toolName\":\"t\"}\n{\"type\":\"tool_done\",\"toolCallId\":\"c\",\"toolName\":\"u\"}\n", `:2: tool_done names tool "u" but its tool_start on line 1 names "t"`},
		{"{\"type\":\"tool_start\",\"toolCallId\":\"c\",\"toolName\":\"t\"}\n{\"type\":\"tool_delta\",\"toolCallId\":\"c\",\"text\":\"{\"}\n{\"type\":\"tool_done\",\"toolCallId\":\"c\"}\n", `:3: tool call "c": its deltas are not valid JSON`},
		{"{\"type\":\"tool_start\",\"toolCallId\":\"c\",\"toolName\":\"t\"}\n{\"type\":\"finish\"}\n", `:2: tool call "c" started on line 1 has no tool_done`},
		{"{\"type\":\"tool_done\",\"toolCallId\":\"c\",\"toolName\":\"t\",\"input\":{\"a\":}}\n", `:1: invalid`},
		{"{\"type\":\"usage\"}\n", `:1: usage event needs usage`},
		{"{\"type\":\"finish\",\"finish\":\"stop\"}\n", `:1: unknown finish reason "stop"`},
		{"{\"type\":\"error\",\"kind\":\"teapot\"}\n", `:1: unknown error kind "teapot"`},
		{"{\"type\":\"error\",\"kind\":\"server\",\"status\":1000}\n", `:1: invalid HTTP status 1000`},
		{"{\"type\":\"error\",\"kind\":\"server\",\"retryAfterMs\":-1}\n", `:1: retryAfterMs must be between`},
		{"{\"type\":\"delay\",\"ms\":-5}\n", `:1: delay ms must be between 0 and 3600000`},
		{"{\"type\":\"delay\",\"ms\":1.5}\n", `:1: invalid line`},
		{"{\"type\":\"expect\",\"contains\":\"\"}\n", `:1: expect needs a non-empty "contains"`},
	} {
		path := writeScript(t, tc.script)
		_, err := New(path)
		if err == nil {
			t.Errorf("%q: no error, want %q", tc.script, tc.want)
			continue
		}
		if !regexp.MustCompile("^replay script " + regexp.QuoteMeta(path) + tc.want).MatchString(err.Error()) {
			t.Errorf("%q: error %q, want %q", tc.script, err, tc.want)
		}
	}
}

func TestNewFileErrors(t *testing.T) {
	if _, err := New(filepath.Join(t.TempDir(), "missing.jsonl")); err == nil {
		t.Error("New(missing) succeeded")
	}
	if _, err := New(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("New(dir) = %v", err)
	}
}

func TestCommentsBlankLinesAndCRLF(t *testing.T) {
	b := mustNew(t, writeScript(t, "\xef\xbb\xbf# comment\r\n\r\n   # indented comment\r\n  {\"type\":\"text\",\"text\":\"a\"}  \r\n{\"type\":\"finish\"}\r\n"))
	got, err := collect(context.Background(), b, request(0))
	if err != nil {
		t.Fatal(err)
	}
	wantEvents(t, got, []model.Event{{Type: model.EventText, Text: "a"}, {Type: model.EventFinish, Finish: model.FinishEndTurn}})
}
