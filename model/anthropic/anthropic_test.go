package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"acpd/model"
	"acpd/model/internal/sse"
	"acpd/model/internal/sse/ssetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func simpleRequest() *model.Request {
	return ssetest.Prompt("claude-test", "hi")
}

func richRequest() *model.Request {
	text := func(s string) model.Part { return model.Part{Type: model.PartText, Text: s} }
	return &model.Request{
		Model:           "claude-sonnet-4-5",
		System:          "You are a coding agent.",
		MaxOutputTokens: 4096,
		Effort:          model.EffortMedium,
		CacheSystem:     true,
		CacheTools:      true,
		Tools: []model.ToolDef{
			{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "list_dir", Description: "List the working directory."},
		},
		Messages: []model.Message{
			{Role: model.RoleUser, Cache: true, Parts: []model.Part{
				text("Fix the bug in main.go. Here is a screenshot."),
				{Type: model.PartImage, MimeType: "image/png", Data: "iVBORw0KGgo="},
				{Type: model.PartImage, MimeType: "image/bmp", Data: "Qk0="},
			}},
			{Role: model.RoleAssistant, Parts: []model.Part{
				text("Let me look."),
				{Type: model.PartReasoning, Text: "The user wants a fix.", Signature: "sig-1", Provider: Provider},
				{Type: model.PartReasoning, Redacted: true, Opaque: json.RawMessage(`"EmwKAhgBEgy3va3p"`), Provider: Provider},
				{Type: model.PartReasoning, Text: "from another provider", Signature: "x", Provider: "openai"},
				{Type: model.PartReasoning, Text: "cut short, no signature", Provider: Provider},
				{Type: model.PartToolUse, ToolCallID: "toolu_1", ToolName: "read_file", Input: json.RawMessage(`{"path":"main.go"}`)},
				{Type: model.PartToolUse, ToolCallID: "toolu_2", ToolName: "list_dir"},
				{Type: model.PartToolUse, ToolCallID: "toolu_3", ToolName: "read_file", Input: json.RawMessage(`"{\"path\":\"trunc"`)},
			}},
			{Role: model.RoleUser, Cache: true, Parts: []model.Part{
				text("Also check the tests."),
				{Type: model.PartToolResult, ToolCallID: "toolu_1", Content: []model.Part{text("package main"), text("")}},
				{Type: model.PartToolResult, ToolCallID: "toolu_2", Content: []model.Part{text("main.go"), {Type: model.PartImage, MimeType: "image/jpeg", Data: "/9j/4AAQ"}}},
				{Type: model.PartToolResult, ToolCallID: "toolu_3", IsError: true, Content: []model.Part{text("invalid input")}},
			}},
			{Role: model.RoleAssistant, Interrupted: true, Parts: []model.Part{{Type: model.PartReasoning, Text: "interrupted", Provider: Provider}}},
			{Role: model.RoleAssistant, Parts: []model.Part{
				{Type: model.PartReasoning, Text: "Done.", Signature: "sig-2", Provider: Provider},
				text("Fixed."),
			}},
			{Role: model.RoleUser, Cache: true, Parts: []model.Part{text("Thanks!"), {Type: model.PartAudio, MimeType: "audio/wav", Data: "UklGRg=="}}},
		},
	}
}

// TestRequest checks the endpoint, headers and, against a golden file, the
// body of a request exercising every mapping rule.
func TestRequest(t *testing.T) {
	o, got := ssetest.Capture(t, "testdata/text.sse", "/v1/")
	o.APIKey = "sk-ant-test"
	o.Headers = map[string]string{"anthropic-beta": "interleaved-thinking-2025-05-14"}
	b := New(Options{HTTPOptions: o})
	res := ssetest.Collect(t, b.Stream(t.Context(), richRequest()))
	if res.Error != nil {
		t.Fatalf("stream error: %+v", res.Error)
	}
	c := <-got
	if c.Method != "POST" || c.Path != "/v1/messages" {
		t.Errorf("request line = %s %s", c.Method, c.Path)
	}
	ssetest.CheckHeader(t, c.Header, map[string]string{
		"X-Api-Key":         "sk-ant-test",
		"Anthropic-Version": "2023-06-01",
		"Anthropic-Beta":    "interleaved-thinking-2025-05-14",
		"Content-Type":      "application/json",
		"Accept":            "text/event-stream",
	})
	if c.Header.Get("Authorization") != "" {
		t.Error("Authorization header sent")
	}
	ssetest.Golden(t, "testdata/request.golden.json", json.RawMessage(c.Body), *ssetest.Update)

	// The golden body must respect the API's structural rules.
	var body struct {
		MaxTokens int `json:"max_tokens"`
		Thinking  struct {
			BudgetTokens int `json:"budget_tokens"`
		} `json:"thinking"`
		System   []map[string]any `json:"system"`
		Tools    []map[string]any `json:"tools"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(c.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Thinking.BudgetTokens >= body.MaxTokens {
		t.Errorf("budget %d >= max_tokens %d", body.Thinking.BudgetTokens, body.MaxTokens)
	}
	breakpoints := strings.Count(string(c.Body), `"cache_control"`)
	if breakpoints > maxBreakpoints {
		t.Errorf("%d cache breakpoints", breakpoints)
	}
	for i, m := range body.Messages {
		if len(m.Content) == 0 {
			t.Errorf("message %d is empty", i)
		}
		seenOther, seenText := false, false
		for _, b := range m.Content {
			switch b["type"] {
			case "thinking", "redacted_thinking":
				if seenOther {
					t.Errorf("message %d: thinking after other blocks", i)
				}
				if b["cache_control"] != nil {
					t.Errorf("message %d: cache_control on thinking", i)
				}
			case "tool_result":
				if seenText {
					t.Errorf("message %d: tool_result after text", i)
				}
			default:
				seenOther, seenText = true, true
			}
		}
	}
}

func TestMaxTokens(t *testing.T) {
	tests := []struct {
		effort    model.Effort
		max       int
		wantMax   int
		wantThink int
	}{
		{"", 0, 8192, 0},
		{model.EffortOff, 1000, 1000, 0},
		{model.EffortLow, 0, 8192, 1024},
		{model.EffortLow, 1024, 2048, 1024},
		{model.EffortMedium, 0, 16384, 8192},
		{model.EffortHigh, 32000, 32000, 24576},
		{model.EffortHigh, 0, 32768, 24576},
	}
	for _, tt := range tests {
		req := simpleRequest()
		req.Effort, req.MaxOutputTokens = tt.effort, tt.max
		raw, err := requestBody(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			MaxTokens int `json:"max_tokens"`
			Thinking  *struct {
				Type         string `json:"type"`
				BudgetTokens int    `json:"budget_tokens"`
			} `json:"thinking"`
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatal(err)
		}
		think := 0
		if body.Thinking != nil {
			think = body.Thinking.BudgetTokens
			if body.Thinking.Type != "enabled" {
				t.Errorf("thinking type %q", body.Thinking.Type)
			}
		}
		if body.MaxTokens != tt.wantMax || think != tt.wantThink {
			t.Errorf("effort %q max %d: max_tokens %d budget %d, want %d %d", tt.effort, tt.max, body.MaxTokens, think, tt.wantMax, tt.wantThink)
		}
	}
}

func TestCacheBreakpointLimit(t *testing.T) {
	req := simpleRequest()
	req.CacheSystem, req.CacheTools, req.System = true, true, "sys"
	req.Tools = []model.ToolDef{{Name: "a"}, {Name: "b"}}
	req.Messages = nil
	for i := range 5 {
		req.Messages = append(req.Messages, model.Message{Role: model.RoleUser, Cache: true,
			Parts: []model.Part{{Type: model.PartText, Text: fmt.Sprint("m", i)}}})
	}
	raw, err := requestBody(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			Content []struct {
				CacheControl any `json:"cache_control"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	var marked []int
	for i, m := range body.Messages {
		if m.Content[0].CacheControl != nil {
			marked = append(marked, i)
		}
	}
	if !reflect.DeepEqual(marked, []int{3, 4}) || strings.Count(string(raw), "cache_control") != 4 {
		t.Errorf("marked messages %v in %s", marked, raw)
	}
}

// TestBackend runs the contract every backend keeps (package ssetest).
func TestBackend(t *testing.T) {
	errBody := func(typ, msg string) string {
		return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`, typ, msg)
	}
	ssetest.TestBackend(t, ssetest.Factory{HTTP: &ssetest.HTTP{
		New:        func(o model.HTTPOptions) model.Backend { return New(Options{o}) },
		Path:       "/v1/messages",
		Request:    simpleRequest(),
		Head:       head,
		KeyHeader:  "X-Api-Key",
		Fixtures:   "testdata/*.sse",
		Update:     *ssetest.Update,
		MaxMessage: maxErrorMessage,
		Last:       "message_stop",
		Errors: []ssetest.HTTPError{
			{Name: "auth", Status: 401, Body: errBody("authentication_error", "invalid x-api-key"), Kind: model.ErrAuth},
			{Name: "permission", Status: 403, Body: errBody("permission_error", "no access"), Kind: model.ErrAuth},
			{Name: "rate limit", Status: 429, Header: map[string]string{"retry-after": "12"}, Body: errBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"), Kind: model.ErrRateLimit, RetryAfter: 12 * time.Second},
			{Name: "overloaded", Status: 529, Body: errBody("overloaded_error", "Overloaded"), Kind: model.ErrOverloaded},
			{Name: "unavailable", Status: 503, Body: "upstream connect error", ContentType: "text/plain", Kind: model.ErrOverloaded},
			{Name: "api error", Status: 500, Body: errBody("api_error", "Internal server error"), Kind: model.ErrServer},
			{Name: "bad gateway html", Status: 502, ContentType: "text/html", Body: "<html>" + strings.Repeat("x", 5000), Kind: model.ErrServer},
			{Name: "timeout", Status: 408, Body: errBody("timeout_error", "Request timed out"), Kind: model.ErrServer},
			{Name: "prompt too long", Status: 400, Body: errBody("invalid_request_error", "prompt is too long: 208310 tokens > 200000 maximum"), Kind: model.ErrContextOverflow},
			{Name: "context limit", Status: 400, Body: errBody("invalid_request_error", "input length and `max_tokens` exceed context limit: 197626 + 8192 > 200000, decrease input length or `max_tokens` and try again"), Kind: model.ErrContextOverflow},
			{Name: "credit", Status: 400, Body: errBody("invalid_request_error", "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."), Kind: model.ErrQuota},
			{Name: "billing", Status: 402, Body: errBody("billing_error", "billing"), Kind: model.ErrQuota},
			{Name: "invalid", Status: 400, Body: errBody("invalid_request_error", "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`"), Kind: model.ErrInvalidRequest},
			{Name: "too large", Status: 413, Body: errBody("request_too_large", "Request exceeds the maximum allowed number of bytes."), Kind: model.ErrInvalidRequest},
			{Name: "not found", Status: 404, Body: errBody("not_found_error", "model: claude-9"), Kind: model.ErrInvalidRequest},
			{Name: "cross-host redirect", Status: 308, Header: map[string]string{"Location": "http://elsewhere.invalid/v1/messages"}, Kind: model.ErrInvalidRequest},
			{Name: "json with 200", Status: 200, Body: `{"id":"msg_1","type":"message","content":[]}`, Kind: model.ErrInvalidRequest},
		},
	}})
}

const head = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":1}}}\n\n" +
	"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n"

// decode runs the decoder over r (see [ssetest.Decode]).
func decode(r io.Reader, emit func(model.Event) bool) error {
	return sse.Decode(sse.NewReader(r, maxEventBytes), &decoder{}, emit)
}

// FuzzDecode feeds arbitrary streams (seeded with every fixture) to the
// decoder, whole and re-chunked at random boundaries, and requires the
// same outcome.
func FuzzDecode(f *testing.F) {
	ssetest.FuzzDecode(f, ssetest.Fixtures(f), decode, nil)
}

// BenchmarkDecode measures parsing of a 100,000-delta text stream.
func BenchmarkDecode(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(head)
	for range 100_000 - 1 {
		buf.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"token\"}}\n\n")
	}
	buf.WriteString("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":100000}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	ssetest.BenchmarkDecode(b, decode, buf.Bytes(), 100_002)
}

// A tool-use turn that started without thinking cannot enable it midway.
func TestThinkingOffMidToolTurn(t *testing.T) {
	turn := func(reasoning model.Part) *model.Request {
		req := simpleRequest()
		req.Effort = model.EffortHigh
		req.Messages = append(req.Messages,
			model.Message{Role: model.RoleAssistant, Parts: []model.Part{reasoning,
				{Type: model.PartToolUse, ToolCallID: "call_1", ToolName: "ls", Input: json.RawMessage(`{}`)}}},
			model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartToolResult, ToolCallID: "call_1",
				Content: []model.Part{{Type: model.PartText, Text: "a.go"}}}}})
		return req
	}
	for _, tt := range []struct {
		reasoning model.Part
		thinking  bool
	}{
		{model.Part{Type: model.PartReasoning, Text: "t", Signature: "s", Provider: Provider}, true},
		{model.Part{Type: model.PartReasoning, Text: "t", Signature: "s", Provider: "openai"}, false},
		{model.Part{Type: model.PartReasoning, Text: "cut short", Provider: Provider}, false},
	} {
		raw, err := requestBody(turn(tt.reasoning))
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			MaxTokens int             `json:"max_tokens"`
			Thinking  json.RawMessage `json:"thinking"`
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Fatal(err)
		}
		if (body.Thinking != nil) != tt.thinking || (!tt.thinking && body.MaxTokens != defaultMaxTokens) {
			t.Errorf("reasoning %+v: thinking %s max_tokens %d, want thinking %v", tt.reasoning, body.Thinking, body.MaxTokens, tt.thinking)
		}
	}
}
