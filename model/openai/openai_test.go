package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"acpd/model"
	"acpd/model/internal/sse"
	"acpd/model/internal/sse/ssetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newTestBackend(t *testing.T, h http.Handler, opts Options) *Backend {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if opts.BaseURL == "" {
		opts.BaseURL = srv.URL + "/v1"
	}
	opts.HTTPClient = srv.Client()
	b := New(opts)
	b.idPrefix = func() string { return "call_gen_" }
	return b
}

func simpleRequest() *model.Request {
	return &model.Request{Model: "gpt-test", Messages: []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "hi"}}}}}
}

func fixtures(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	return files
}

// TestFixtures replays every recorded stream through an HTTP server that
// writes it in random flushed pieces and compares the events with the
// golden file next to it.
func TestFixtures(t *testing.T) {
	for i, file := range fixtures(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".sse")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			b := newTestBackend(t, ssetest.Handler(data, uint64(i)), Options{})
			got := ssetest.Collect(t, b.Stream(t.Context(), simpleRequest()))
			ssetest.Golden(t, strings.TrimSuffix(file, ".sse")+".golden.json", got, *update)
		})
	}
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
	type captured struct {
		method, path, query string
		header              http.Header
		body                []byte
	}
	got := make(chan captured, 1)
	text, err := os.ReadFile("testdata/text.sse")
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- captured{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body}
		ssetest.Handler(text, 1).ServeHTTP(w, r)
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	b := New(Options{
		BaseURL:    srv.URL + "/openai/deployments/gpt/",
		APIKey:     "sk-test",
		Headers:    map[string]string{"api-key": "azure-key", "X-Title": "acpd"},
		Query:      map[string]string{"api-version": "2024-10-21"},
		HTTPClient: srv.Client(),
	})
	res := ssetest.Collect(t, b.Stream(t.Context(), richRequest()))
	if res.Error != nil {
		t.Fatalf("stream error: %+v", res.Error)
	}
	c := <-got
	if c.method != "POST" || c.path != "/openai/deployments/gpt/chat/completions" || c.query != "api-version=2024-10-21" {
		t.Errorf("request line = %s %s?%s", c.method, c.path, c.query)
	}
	for k, want := range map[string]string{
		"Authorization": "Bearer sk-test",
		"Api-Key":       "azure-key",
		"X-Title":       "acpd",
		"Content-Type":  "application/json",
		"Accept":        "text/event-stream",
	} {
		if v := c.header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
	ssetest.Golden(t, "testdata/request.golden.json", json.RawMessage(c.body), *update)
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

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name        string
		status      int
		header      map[string]string
		contentType string
		body        string
		kind        model.ErrorKind
		retryAfter  time.Duration
		msg         string
	}{
		{name: "unauthorized", status: 401, body: `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, kind: model.ErrAuth, msg: "Incorrect API key provided."},
		{name: "forbidden", status: 403, body: `{"error":{"message":"Project does not have access","type":"invalid_request_error","code":null}}`, kind: model.ErrAuth},
		{name: "quota", status: 429, header: map[string]string{"retry-after": "20"}, body: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, kind: model.ErrQuota, retryAfter: 20 * time.Second},
		{name: "rate limit ms", status: 429, header: map[string]string{"retry-after-ms": "1500", "retry-after": "2"}, body: `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, kind: model.ErrRateLimit, retryAfter: 1500 * time.Millisecond},
		{name: "rate limit seconds", status: 429, header: map[string]string{"retry-after": "3"}, body: `{"error":{"message":"slow down"}}`, kind: model.ErrRateLimit, retryAfter: 3 * time.Second},
		{name: "openrouter credits", status: 402, body: `{"error":{"message":"Insufficient credits","code":402}}`, kind: model.ErrQuota},
		{name: "request timeout", status: 408, body: `{"error":{"message":"timeout"}}`, kind: model.ErrServer},
		{name: "conflict", status: 409, body: `{"error":{"message":"conflict"}}`, kind: model.ErrServer},
		{name: "server", status: 500, body: `{"error":{"message":"The server had an error","type":"server_error"}}`, kind: model.ErrServer},
		{name: "bad gateway html", status: 502, contentType: "text/html", body: "<html>" + strings.Repeat("x", 2000) + "</html>", kind: model.ErrServer},
		{name: "unavailable", status: 503, header: map[string]string{"retry-after": "1"}, body: `{"error":{"message":"overloaded"}}`, kind: model.ErrOverloaded, retryAfter: time.Second},
		{name: "529", status: 529, body: `{"error":{"message":"overloaded"}}`, kind: model.ErrOverloaded},
		{name: "context length", status: 400, body: `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, kind: model.ErrContextOverflow},
		{name: "vllm context", status: 400, body: `{"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.","type":"BadRequestError","param":null,"code":400}`, kind: model.ErrContextOverflow},
		{name: "llama.cpp context", status: 400, body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}`, kind: model.ErrContextOverflow},
		{name: "invalid", status: 400, body: `{"error":{"message":"Invalid value for 'tools'","type":"invalid_request_error","param":"tools","code":"invalid_value"}}`, kind: model.ErrInvalidRequest, msg: "Invalid value for 'tools'"},
		{name: "ollama not found", status: 404, body: `{"error":"model \"qwen9\" not found, try pulling it first"}`, kind: model.ErrInvalidRequest, msg: `model "qwen9" not found, try pulling it first`},
		{name: "cross-host redirect", status: 307, header: map[string]string{"Location": "http://elsewhere.invalid/v1/chat/completions"}, kind: model.ErrInvalidRequest, msg: "Temporary Redirect"},
		{name: "json instead of stream", status: 200, contentType: "application/json", body: `{"id":"x","choices":[]}`, kind: model.ErrInvalidRequest},
		{name: "json error with 200", status: 200, contentType: "application/json", body: `{"error":{"message":"upstream failed","type":"server_error"}}`, kind: model.ErrServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requests := 0
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests++
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				ct := tt.contentType
				if ct == "" {
					ct = "application/json"
				}
				w.Header().Set("Content-Type", ct)
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			})
			b := newTestBackend(t, h, Options{APIKey: "sk-secret-key"})
			res := ssetest.Collect(t, b.Stream(t.Context(), simpleRequest()))
			if len(res.Events) != 0 || res.Error == nil {
				t.Fatalf("result = %+v", res)
			}
			e := res.Error
			if e.Kind != tt.kind || time.Duration(e.RetryAfterMS)*time.Millisecond != tt.retryAfter {
				t.Errorf("error = %+v, want kind %s retryAfter %v", e, tt.kind, tt.retryAfter)
			}
			if tt.status != 200 && e.Status != tt.status {
				t.Errorf("status = %d, want %d", e.Status, tt.status)
			}
			if tt.msg != "" && e.Message != tt.msg {
				t.Errorf("message = %q, want %q", e.Message, tt.msg)
			}
			if len(e.Message) > maxErrorMessage+3 || strings.Contains(e.Message, "sk-secret-key") {
				t.Errorf("message too long or leaks the key: %q", e.Message)
			}
			if requests != 1 {
				t.Errorf("requests = %d", requests)
			}
		})
	}
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
			b := newTestBackend(t, h, Options{APIKey: "k"})
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
		http.Error(w, `{"error":{"message":"bad key","code":"invalid_api_key"}}`, 401)
	}), Options{})
	if _, err := b.Models(t.Context()); model.KindOf(err) != model.ErrAuth {
		t.Errorf("401: err = %v", err)
	}
}

// stallHandler sends head, then waits until the client goes away and
// reports it on gone.
func stallHandler(head string, gone chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, head)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	})
}

const firstDelta = `data: {"choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}` + "\n\n"

func TestCancel(t *testing.T) {
	gone := make(chan struct{})
	b := newTestBackend(t, stallHandler(firstDelta, gone), Options{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var events []model.Event
	var last error
	for ev, err := range b.Stream(ctx, simpleRequest()) {
		if err != nil {
			last = err
			break
		}
		events = append(events, ev)
		cancel()
	}
	if last != context.Canceled || len(events) != 1 || events[0].Text != "Hel" {
		t.Fatalf("events %+v, err %v", events, last)
	}
	<-gone
}

func TestConsumerStopsEarly(t *testing.T) {
	gone := make(chan struct{})
	b := newTestBackend(t, stallHandler(firstDelta, gone), Options{})
	for ev, err := range b.Stream(t.Context(), simpleRequest()) {
		if err != nil || ev.Text != "Hel" {
			t.Fatalf("got %+v, %v", ev, err)
		}
		break
	}
	<-gone // the connection was released
}

func TestIdleTimeout(t *testing.T) {
	gone := make(chan struct{})
	b := newTestBackend(t, stallHandler(firstDelta, gone), Options{IdleTimeout: 30 * time.Millisecond})
	res := ssetest.Collect(t, b.Stream(t.Context(), simpleRequest()))
	if len(res.Events) != 1 || res.Error == nil || res.Error.Kind != model.ErrNetwork || !strings.Contains(res.Error.Message, "no data from server") {
		t.Fatalf("result = %+v", res)
	}
	<-gone
}

// decodeAll runs the decoder over r and returns the outcome.
func decodeAll(r io.Reader) ssetest.Result {
	var res ssetest.Result
	d := decoder{idPrefix: "call_gen_"}
	err := d.run(sse.NewReader(r, maxEventBytes), func(ev model.Event) bool {
		res.Events = append(res.Events, ev)
		return true
	})
	res.Error = ssetest.ErrorOf(err)
	return res
}

// FuzzDecode feeds arbitrary streams (seeded with every fixture) to the
// decoder, whole and re-chunked at random boundaries, and requires the
// same outcome.
func FuzzDecode(f *testing.F) {
	for i, file := range fixtures(f) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint64(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		whole := decodeAll(bytes.NewReader(data))
		chunked := decodeAll(ssetest.ChunkReader(data, seed))
		if !reflect.DeepEqual(whole, chunked) {
			t.Fatalf("whole:   %+v\nchunked: %+v", whole, chunked)
		}
		for _, ev := range whole.Events {
			if ev.Input != nil && !json.Valid(ev.Input) {
				t.Fatalf("invalid tool input %q", ev.Input)
			}
		}
		if _, err := json.Marshal(whole); err != nil {
			t.Fatalf("events do not marshal: %v", err)
		}
	})
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
	stream := buf.Bytes()
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		d := decoder{}
		err := d.run(sse.NewReader(bytes.NewReader(stream), maxEventBytes), func(model.Event) bool { n++; return true })
		if err != nil || n != 100_001 {
			b.Fatalf("events %d, err %v", n, err)
		}
	}
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
		{Options{BaseURL: "http://localhost:11434/v1/"}, "http://localhost:11434/v1/chat/completions"},
		{Options{BaseURL: "https://r.openai.azure.com/openai/deployments/d?api-version=1", Query: map[string]string{"x": "y z"}},
			"https://r.openai.azure.com/openai/deployments/d/chat/completions?api-version=1&x=y+z"},
		{Options{BaseURL: "https://h/v1/?a=1", Query: map[string]string{"a": "2"}}, "https://h/v1/chat/completions?a=2"},
	}
	for _, tt := range tests {
		if got := New(tt.opts).endpoint("/chat/completions"); got != tt.want {
			t.Errorf("%+v: endpoint %q, want %q", tt.opts, got, tt.want)
		}
	}
}
