package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
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

func newTestBackend(t *testing.T, h http.Handler, opts Options) *Backend {
	opts.HTTPOptions = ssetest.Serve(t, h, opts.HTTPOptions, "/v1")
	b := New(opts)
	b.idPrefix = func() string { return "call_gen_" }
	return b
}

func simpleRequest() *model.Request {
	return ssetest.Prompt("gpt-test", "hi")
}

func richRequest() *model.Request {
	return &model.Request{
		Model:           "gpt-4.1",
		System:          "You are a coding agent.",
		MaxOutputTokens: 4096,
		Effort:          model.EffortHigh,
		CacheSystem:     true,
		CacheTools:      true,
		Tools: []model.ToolDef{
			{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "list_dir", Description: "List the working directory."},
		},
		Messages: []model.Message{
			{Role: model.RoleUser, Parts: []model.Part{
				{Type: model.PartText, Text: "What is in this picture and in README.md?"},
				{Type: model.PartImage, MimeType: "image/png", Data: "iVBORw0KGgo="},
			}},
			{Role: model.RoleAssistant, Parts: []model.Part{
				{Type: model.PartReasoning, Text: "I should read the file.", Signature: "sig", Provider: "anthropic"},
				{Type: model.PartText, Text: "Let me read it."},
				{Type: model.PartToolUse, ToolCallID: "call_1", ToolName: "read_file", Input: json.RawMessage(`{"path":"README.md"}`)},
				{Type: model.PartToolUse, ToolCallID: "call_2", ToolName: "list_dir"},
				{Type: model.PartToolUse, ToolCallID: "call_3", ToolName: "read_file", Input: json.RawMessage(`"{\"path\":\"trunc"`)},
			}},
			{Role: model.RoleUser, Cache: true, Parts: []model.Part{
				{Type: model.PartToolResult, ToolCallID: "call_1", Content: []model.Part{{Type: model.PartText, Text: "# Title"}, {Type: model.PartText, Text: "body"}}},
				{Type: model.PartToolResult, ToolCallID: "call_2", Content: []model.Part{{Type: model.PartText, Text: "shot.png"}, {Type: model.PartImage, MimeType: "image/jpeg", Data: "/9j/4AAQ"}}},
				{Type: model.PartToolResult, ToolCallID: "call_3", IsError: true, Content: []model.Part{{Type: model.PartText, Text: "invalid input"}}},
				{Type: model.PartText, Text: "Also summarise."},
			}},
			{Role: model.RoleAssistant, Interrupted: true, Parts: []model.Part{{Type: model.PartReasoning, Text: "only thinking"}}},
			{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartText, Text: "Summary: a title."}}},
			{Role: model.RoleUser, Parts: []model.Part{
				{Type: model.PartAudio, MimeType: "audio/wav", Data: "UklGRg=="},
				{Type: model.PartAudio, MimeType: "audio/ogg", Data: "T2dnUw=="},
			}},
		},
	}
}

// TestRequest checks the endpoint, headers and, against a golden file, the
// body of a request exercising every mapping rule.
func TestRequest(t *testing.T) {
	o, got := ssetest.Capture(t, "testdata/text.sse", "/openai/deployments/gpt/")
	o.APIKey = "sk-test"
	o.Headers = map[string]string{"api-key": "azure-key", "X-Title": "acpd"}
	o.Query = map[string]string{"api-version": "2024-10-21"}
	b := New(Options{HTTPOptions: o})
	res := ssetest.Collect(t, b.Stream(t.Context(), richRequest()))
	if res.Error != nil {
		t.Fatalf("stream error: %+v", res.Error)
	}
	c := <-got
	if c.Method != "POST" || c.Path != "/openai/deployments/gpt/chat/completions" || c.Query != "api-version=2024-10-21" {
		t.Errorf("request line = %s %s?%s", c.Method, c.Path, c.Query)
	}
	ssetest.CheckHeader(t, c.Header, map[string]string{
		"Authorization": "Bearer sk-test",
		"Api-Key":       "azure-key",
		"X-Title":       "acpd",
		"Content-Type":  "application/json",
		"Accept":        "text/event-stream",
	})
	ssetest.Golden(t, "testdata/request.golden.json", json.RawMessage(c.Body), *ssetest.Update)
}

func TestRequestMaxTokensField(t *testing.T) {
	b := New(Options{MaxTokensField: "max_tokens"})
	req := simpleRequest()
	req.MaxOutputTokens = 100
	req.Effort = model.EffortOff
	body, err := b.requestBody(req)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if m["max_tokens"] != 100.0 || m["max_completion_tokens"] != nil || m["reasoning_effort"] != nil {
		t.Errorf("body = %s", body)
	}
	if m["stream"] != true || !reflect.DeepEqual(m["stream_options"], map[string]any{"include_usage": true}) {
		t.Errorf("body = %s", body)
	}

	b = New(Options{MaxTokensField: "max_output"})
	res := ssetest.Collect(t, b.Stream(t.Context(), req))
	if res.Error == nil || res.Error.Kind != model.ErrInvalidRequest || len(res.Events) != 0 {
		t.Errorf("bad MaxTokensField: %+v", res)
	}
}

// TestBackend runs the contract every backend keeps (package ssetest).
func TestBackend(t *testing.T) {
	ssetest.TestBackend(t, ssetest.Factory{HTTP: &ssetest.HTTP{
		New: func(o model.HTTPOptions) model.Backend {
			b := New(Options{HTTPOptions: o})
			b.idPrefix = func() string { return "call_gen_" }
			return b
		},
		BasePath:   "/v1",
		Path:       "/v1/chat/completions",
		Request:    simpleRequest(),
		Head:       firstDelta,
		KeyHeader:  "Authorization",
		KeyPrefix:  "Bearer ",
		Fixtures:   "testdata/*.sse",
		Update:     *ssetest.Update,
		MaxMessage: maxErrorMessage,
		Last:       "[DONE]",
		Errors: []ssetest.HTTPError{
			{Name: "unauthorized", Status: 401, Body: `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, Kind: model.ErrAuth, Message: "Incorrect API key provided."},
			{Name: "forbidden", Status: 403, Body: `{"error":{"message":"Project does not have access","type":"invalid_request_error","code":null}}`, Kind: model.ErrAuth},
			{Name: "quota", Status: 429, Header: map[string]string{"retry-after": "20"}, Body: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, Kind: model.ErrQuota, RetryAfter: 20 * time.Second},
			{Name: "rate limit ms", Status: 429, Header: map[string]string{"retry-after-ms": "1500", "retry-after": "2"}, Body: `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, Kind: model.ErrRateLimit, RetryAfter: 1500 * time.Millisecond},
			{Name: "rate limit seconds", Status: 429, Header: map[string]string{"retry-after": "3"}, Body: `{"error":{"message":"slow down"}}`, Kind: model.ErrRateLimit, RetryAfter: 3 * time.Second},
			{Name: "openrouter credits", Status: 402, Body: `{"error":{"message":"Insufficient credits","code":402}}`, Kind: model.ErrQuota},
			{Name: "request timeout", Status: 408, Body: `{"error":{"message":"timeout"}}`, Kind: model.ErrServer},
			{Name: "conflict", Status: 409, Body: `{"error":{"message":"conflict"}}`, Kind: model.ErrServer},
			{Name: "server", Status: 500, Body: `{"error":{"message":"The server had an error","type":"server_error"}}`, Kind: model.ErrServer},
			{Name: "bad gateway html", Status: 502, ContentType: "text/html", Body: "<html>" + strings.Repeat("x", 2000) + "</html>", Kind: model.ErrServer},
			{Name: "unavailable", Status: 503, Header: map[string]string{"retry-after": "1"}, Body: `{"error":{"message":"overloaded"}}`, Kind: model.ErrOverloaded, RetryAfter: time.Second},
			{Name: "529", Status: 529, Body: `{"error":{"message":"overloaded"}}`, Kind: model.ErrOverloaded},
			{Name: "context length", Status: 400, Body: `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, Kind: model.ErrContextOverflow},
			{Name: "vllm context", Status: 400, Body: `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}`, Kind: model.ErrContextOverflow},
			{Name: "llama.cpp context", Status: 400, Body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`, Kind: model.ErrContextOverflow},
			{Name: "invalid", Status: 400, Body: `{"error":{"message":"Invalid value for 'tools'","type":"invalid_request_error","param":"tools","code":"invalid_value"}}`, Kind: model.ErrInvalidRequest, Message: "Invalid value for 'tools'"},
			{Name: "ollama not found", Status: 404, Body: `{"error":"model \"qwen9\" not found, try pulling it first"}`, Kind: model.ErrInvalidRequest, Message: `model "qwen9" not found, try pulling it first`},
			{Name: "cross-host redirect", Status: 307, Header: map[string]string{"Location": "http://elsewhere.invalid/v1/chat/completions"}, Kind: model.ErrInvalidRequest, Message: "Temporary Redirect"},
			{Name: "json instead of stream", Status: 200, ContentType: "application/json", Body: `{"id":"x","choices":[]}`, Kind: model.ErrInvalidRequest},
			{Name: "json error with 200", Status: 200, ContentType: "application/json", Body: `{"error":{"message":"upstream failed","type":"server_error"}}`, Kind: model.ErrServer, InBand: true},
		},
	}})
}

func TestModels(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    []model.ModelInfo
		wantErr bool
	}{
		{
			name: "openai",
			body: `{"object":"list","data":[{"id":"gpt-4.1","object":"model","created":1,"owned_by":"system"},{"id":"o3","object":"model","created":2,"owned_by":"system"}]}`,
			want: []model.ModelInfo{{ID: "gpt-4.1"}, {ID: "o3"}},
		},
		{
			name: "openrouter",
			body: `{"data":[{"id":"anthropic/claude-sonnet-4","name":"Anthropic: Claude Sonnet 4","context_length":200000,"architecture":{"input_modalities":["image","text","file"]},"pricing":{"prompt":"0.000003","completion":"0.000015"},"top_provider":{"max_completion_tokens":64000},"supported_parameters":["tools","reasoning","max_tokens"]},{"id":"openrouter/auto","pricing":{"prompt":"-1","completion":""}}]}`,
			want: []model.ModelInfo{
				{ID: "anthropic/claude-sonnet-4", Name: "Anthropic: Claude Sonnet 4", ContextWindow: 200000, MaxOutputTokens: 64000, Tools: true, Images: true, Reasoning: true, InputPrice: 3, OutputPrice: 15},
				{ID: "openrouter/auto"},
			},
		},
		{
			name: "vllm",
			body: `{"object":"list","data":[{"id":"Qwen/Qwen3-8B","object":"model","max_model_len":32768}]}`,
			want: []model.ModelInfo{{ID: "Qwen/Qwen3-8B", ContextWindow: 32768}},
		},
		{name: "ollama native", body: `{"models":[{"name":"llama3"}]}`, wantErr: true},
		{name: "wrong object", body: `{"object":"model","data":[]}`, wantErr: true},
		{name: "array", body: `[{"id":"x"}]`, wantErr: true},
		{name: "missing id", body: `{"object":"list","data":[{"name":"x"}]}`, wantErr: true},
		{name: "null entry", body: `{"object":"list","data":[null]}`, wantErr: true},
		{name: "html", body: `<html></html>`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != "GET" || r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer k" {
					http.Error(w, `{"error":{"message":"bad request line"}}`, 400)
					return
				}
				io.WriteString(w, tt.body)
			})
			b := newTestBackend(t, h, Options{HTTPOptions: model.HTTPOptions{APIKey: "k"}})
			got, err := b.Models(t.Context())
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("models = %+v\nwant %+v", got, tt.want)
			}
		})
	}
	b := newTestBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"bad key","code":"invalid_api_key"}}`, http.StatusUnauthorized)
	}), Options{})
	if _, err := b.Models(t.Context()); model.KindOf(err) != model.ErrAuth {
		t.Errorf("401: err = %v", err)
	}
}

const firstDelta = `data: {"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}` + "\n\n"

// decode runs the decoder over r (see [ssetest.Decode]).
func decode(r io.Reader, emit func(model.Event) bool) error {
	return sse.Decode(sse.NewReader(r, maxEventBytes), &decoder{idPrefix: "call_gen_"}, emit)
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
	head := `data: {"id":"chatcmpl-C1a2b3c4d5","object":"chat.completion.chunk","created":1754000000,"model":"gpt-4.1-2025-04-14","system_fingerprint":"fp_51e1070cf2","choices":[{"index":0,"delta":{"content":"`
	for range 100_000 {
		buf.WriteString(head)
		buf.WriteString(`token`)
		buf.WriteString(`"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"q1Zr"}` + "\n\n")
	}
	buf.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	ssetest.BenchmarkDecode(b, decode, buf.Bytes(), 100_001)
}

func TestRequestReasoningContent(t *testing.T) {
	req := richRequest()
	for _, send := range []bool{false, true} {
		body, err := New(Options{ReasoningContent: send}).requestBody(req)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Messages []struct {
				Role             string `json:"role"`
				ReasoningContent string `json:"reasoning_content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, msg := range m.Messages {
			if msg.ReasoningContent != "" {
				got = append(got, msg.ReasoningContent)
			}
		}
		want := []string(nil)
		if send {
			want = []string{"I should read the file."}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ReasoningContent %v: sent %q, want %q", send, got, want)
		}
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct {
		opts Options
		want string
	}{
		{Options{}, "https://api.openai.com/v1/chat/completions"},
		{Options{HTTPOptions: model.HTTPOptions{BaseURL: "http://localhost:11434/v1/"}}, "http://localhost:11434/v1/chat/completions"},
		{Options{HTTPOptions: model.HTTPOptions{BaseURL: "https://r.openai.azure.com/openai/deployments/d?api-version=1", Query: map[string]string{"x": "y z"}}},
			"https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=1&x=y+z"},
		{Options{HTTPOptions: model.HTTPOptions{BaseURL: "https://h/v1/?a=1", Query: map[string]string{"a": "2"}}}, "https://h/v1/chat/completions?a=2"},
	}
	for _, tt := range tests {
		if got := New(tt.opts).c.URL("/chat/completions"); got != tt.want {
			t.Errorf("%+v: endpoint %q, want %q", tt.opts, got, tt.want)
		}
	}
}
