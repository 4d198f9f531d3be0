package responses

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"acpd/model"
	"acpd/model/internal/openaierr"
	"acpd/model/internal/sse"
	"acpd/model/internal/sse/ssetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newTestBackend(t *testing.T, h http.Handler, opts Options) *Backend {
	opts.HTTPOptions = ssetest.Serve(t, h, opts.HTTPOptions, "/v1")
	return New(opts)
}

func simpleRequest() *model.Request {
	return ssetest.Prompt("gpt-5", "hi")
}

func text(s string) model.Part { return model.Part{Type: model.PartText, Text: s} }

const rsItem = `{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Read the file."}],"encrypted_content":"gAAAAABenc1","status":"completed"}`

func richRequest() *model.Request {
	return &model.Request{
		Model:           "gpt-5",
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
				text("What is in this picture and in README.md?"),
				{Type: model.PartImage, MimeType: "image/png", Data: "iVBORw0KGgo="},
				{Type: model.PartAudio, MimeType: "audio/wav", Data: "UklGRg=="},
				text(""),
			}},
			{Role: model.RoleAssistant, Parts: []model.Part{
				{Type: model.PartReasoning, Text: "Read the file.", Opaque: json.RawMessage(rsItem), Provider: Provider},
				{Type: model.PartReasoning, Text: "from another provider", Signature: "sig", Provider: "anthropic"},
				{Type: model.PartReasoning, Redacted: true, Opaque: json.RawMessage(`{"id":"rs_x","type":"reasoning","summary":[],"encrypted_content":"e"}`), Provider: "other"},
				{Type: model.PartReasoning, Text: "no encrypted content", Opaque: json.RawMessage(`{"id":"rs_2","type":"reasoning","summary":[]}`), Provider: Provider},
				text("Let me "),
				text("read it."),
				{Type: model.PartToolUse, ToolCallID: "call_1", ToolName: "read_file", Input: json.RawMessage(`{"path":"README.md"}`)},
				{Type: model.PartToolUse, ToolCallID: "call_2", ToolName: "list_dir"},
				{Type: model.PartToolUse, ToolCallID: "call_3", ToolName: "read_file", Input: json.RawMessage(`"{\"path\":\"trunc"`)},
			}},
			{Role: model.RoleUser, Parts: []model.Part{
				{Type: model.PartToolResult, ToolCallID: "call_1", Content: []model.Part{text("# Title"), text("body")}},
				{Type: model.PartToolResult, ToolCallID: "call_2", Content: []model.Part{text("shot.png"), {Type: model.PartImage, MimeType: "image/jpeg", Data: "/9j/4AAQ"}}},
				{Type: model.PartToolResult, ToolCallID: "call_3", IsError: true, Content: []model.Part{text("invalid input")}},
				text("Also summarise."),
			}},
			// Cut short after its reasoning: the reasoning item is dropped.
			{Role: model.RoleAssistant, Interrupted: true, Parts: []model.Part{
				{Type: model.PartReasoning, Redacted: true, Opaque: json.RawMessage(`{"id":"rs_3","type":"reasoning","summary":[],"encrypted_content":"gAAAAABcut"}`), Provider: Provider},
			}},
			{Role: model.RoleAssistant, Parts: []model.Part{
				{Type: model.PartReasoning, Redacted: true, Opaque: json.RawMessage(`{"id":"rs_4","type":"reasoning","summary":null,"encrypted_content":"gAAAAABsum"}`), Provider: Provider},
				text("Summary: a title."),
			}},
			{Role: model.RoleUser, Parts: []model.Part{text("Thanks!")}},
		},
	}
}

// TestRequest checks the endpoint, headers and, against a golden file, the
// body of a request exercising every mapping rule.
func TestRequest(t *testing.T) {
	o, got := ssetest.Capture(t, "testdata/text.sse", "/openai/v1/")
	o.APIKey = "sk-test"
	o.Headers = map[string]string{"OpenAI-Organization": "org-1"}
	o.Query = map[string]string{"api-version": "preview"}
	b := New(Options{HTTPOptions: o})
	res := ssetest.Collect(t, b.Stream(t.Context(), richRequest()))
	if res.Error != nil {
		t.Fatalf("stream error: %+v", res.Error)
	}
	c := <-got
	if c.Method != "POST" || c.Path != "/openai/v1/responses" || c.Query != "api-version=preview" {
		t.Errorf("request line = %s %s?%s", c.Method, c.Path, c.Query)
	}
	ssetest.CheckHeader(t, c.Header, map[string]string{
		"Authorization":       "Bearer sk-test",
		"Openai-Organization": "org-1",
		"Content-Type":        "application/json",
		"Accept":              "text/event-stream",
	})
	ssetest.Golden(t, "testdata/request.golden.json", json.RawMessage(c.Body), *ssetest.Update)

	// Every reasoning item must be followed by an output item.
	var body struct {
		Input []struct {
			Type string `json:"type"`
		} `json:"input"`
	}
	if err := json.Unmarshal(c.Body, &body); err != nil {
		t.Fatal(err)
	}
	for i, it := range body.Input {
		if it.Type == "reasoning" && (i+1 == len(body.Input) || (body.Input[i+1].Type != "message" && body.Input[i+1].Type != "function_call" && body.Input[i+1].Type != "reasoning")) {
			t.Errorf("reasoning item %d is followed by %+v", i, body.Input[min(i+1, len(body.Input)-1)])
		}
	}
}

func TestRequestEffort(t *testing.T) {
	for effort, want := range map[model.Effort]string{
		"":                 ``,
		model.EffortOff:    ``,
		model.EffortLow:    `{"effort":"low","summary":"auto"}`,
		model.EffortMedium: `{"effort":"medium","summary":"auto"}`,
		model.EffortHigh:   `{"effort":"high","summary":"auto"}`,
	} {
		req := simpleRequest()
		req.Effort = effort
		body, err := requestBody(req)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Reasoning json.RawMessage `json:"reasoning"`
			Store     *bool           `json:"store"`
			Stream    bool            `json:"stream"`
			Include   []string        `json:"include"`
			MaxOut    *int            `json:"max_output_tokens"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		if string(m.Reasoning) != want {
			t.Errorf("effort %q: reasoning %s, want %s", effort, m.Reasoning, want)
		}
		if m.Store == nil || *m.Store || !m.Stream || !reflect.DeepEqual(m.Include, []string{"reasoning.encrypted_content"}) || m.MaxOut != nil {
			t.Errorf("body = %s", body)
		}
	}
}

// assemble builds the assistant message the agent would record from the
// events (text and reasoning in order, opaque data attached to the block
// it ends, tool calls last, Provider copied).
func assemble(events []model.Event) model.Message {
	var parts, calls []model.Part
	for _, ev := range events {
		switch ev.Type {
		case model.EventText, model.EventReasoning:
			typ := model.PartText
			if ev.Type == model.EventReasoning {
				typ = model.PartReasoning
			}
			if n := len(parts); n > 0 && parts[n-1].Type == typ && parts[n-1].Opaque == nil && !parts[n-1].Redacted {
				parts[n-1].Text += ev.Text
				continue
			}
			parts = append(parts, model.Part{Type: typ, Text: ev.Text})
		case model.EventReasoningDone:
			if n := len(parts); n > 0 && parts[n-1].Type == model.PartReasoning && parts[n-1].Opaque == nil && !ev.Redacted {
				parts[n-1].Opaque, parts[n-1].Provider = ev.Opaque, ev.Provider
				continue
			}
			parts = append(parts, model.Part{Type: model.PartReasoning, Redacted: ev.Redacted, Opaque: ev.Opaque, Provider: ev.Provider})
		case model.EventToolDone:
			calls = append(calls, model.Part{Type: model.PartToolUse, ToolCallID: ev.ToolCallID, ToolName: ev.ToolName, Input: ev.Input})
		}
	}
	return model.Message{Role: model.RoleAssistant, Parts: append(parts, calls...)}
}

// TestReasoningRoundTrip checks that reasoning streamed by the API goes
// back as the same reasoning item, before the output that followed it.
func TestReasoningRoundTrip(t *testing.T) {
	for fixture, want := range map[string]string{
		"reasoning": `[{"type":"reasoning","id":"rs_68af4c1bd4a08197a4c2b7d6e8f9a0b10a1b2c3d4e5f6a7b","summary":[{"type":"summary_text","text":"**Planning the answer**\n\nThe user wants a haiku."},{"type":"summary_text","text":"**Drafting**\n\nKeep it short."}],"encrypted_content":"gAAAAABor0wd3Kx9QmV0dGVyIHRoYW4gcmVhbCBlbmNyeXB0ZWQgcmVhc29uaW5nLCBmb3IgdGVzdHMgb25seQ=="},
			{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Goroutines hum."}]}]`,
		"reasoning_encrypted": `[{"type":"reasoning","id":"rs_nosummary","summary":[],"encrypted_content":"gAAAAABor0wd3Kx9QmV0dGVyIHRoYW4gcmVhbCBlbmNyeXB0ZWQgcmVhc29uaW5nLCBmb3IgdGVzdHMgb25seQ=="},
			{"type":"function_call","call_id":"call_C3","name":"grep","arguments":"{\"pattern\":\"TODO\"}"}]`,
		"summary_not_streamed": `[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"All good."}]}]`,
	} {
		data, err := os.ReadFile("testdata/" + fixture + ".sse")
		if err != nil {
			t.Fatal(err)
		}
		res := decodeAll(bytes.NewReader(data))
		if res.Error != nil {
			t.Fatalf("%s: %+v", fixture, res.Error)
		}
		got, _ := json.Marshal(assistantItems(assemble(res.Events)))
		if !ssetest.JSONEqual(got, []byte(want)) {
			t.Errorf("%s:\ngot  %s\nwant %s", fixture, got, want)
		}
	}
}

func TestStreamErrorCodes(t *testing.T) {
	for code, want := range map[string]model.ErrorKind{
		"server_error":                 model.ErrServer,
		"vector_store_timeout":         model.ErrServer,
		"rate_limit_exceeded":          model.ErrRateLimit,
		"insufficient_quota":           model.ErrQuota,
		"context_length_exceeded":      model.ErrContextOverflow,
		"invalid_prompt":               model.ErrInvalidRequest,
		"image_too_large":              model.ErrInvalidRequest,
		"unsupported_image_media_type": model.ErrInvalidRequest,
		"":                             model.ErrServer,
	} {
		if got := model.KindOf(classify(&openaierr.APIError{Code: code, Message: "m"})); got != want {
			t.Errorf("%q: %s, want %s", code, got, want)
		}
	}
}

// TestBackend runs the contract every backend keeps (package ssetest).
func TestBackend(t *testing.T) {
	ssetest.TestBackend(t, ssetest.Factory{HTTP: &ssetest.HTTP{
		New:        func(o model.HTTPOptions) model.Backend { return New(Options{HTTPOptions: o}) },
		BasePath:   "/v1",
		Path:       "/v1/responses",
		Request:    simpleRequest(),
		Head:       firstDelta,
		KeyHeader:  "Authorization",
		KeyPrefix:  "Bearer ",
		Fixtures:   "testdata/*.sse",
		Update:     *ssetest.Update,
		MaxMessage: openaierr.MaxMessage,
		Last:       "response.completed",
		Errors: []ssetest.HTTPError{
			{Name: "unauthorized", Status: 401, Body: `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, Kind: model.ErrAuth, Message: "Incorrect API key provided."},
			{Name: "quota", Status: 429, Header: map[string]string{"retry-after": "20"}, Body: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, Kind: model.ErrQuota, RetryAfter: 20 * time.Second},
			{Name: "rate limit", Status: 429, Header: map[string]string{"retry-after-ms": "1500"}, Body: `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, Kind: model.ErrRateLimit, RetryAfter: 1500 * time.Millisecond},
			{Name: "server", Status: 500, Body: `{"error":{"message":"The server had an error","type":"server_error"}}`, Kind: model.ErrServer},
			{Name: "unavailable", Status: 503, Body: `{"error":{"message":"overloaded"}}`, Kind: model.ErrOverloaded},
			{Name: "context length", Status: 400, Body: `{"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`, Kind: model.ErrContextOverflow},
			{Name: "invalid", Status: 400, Body: `{"error":{"message":"Unsupported parameter: 'reasoning.effort' is not supported with this model.","type":"invalid_request_error","param":"reasoning.effort","code":"unsupported_parameter"}}`, Kind: model.ErrInvalidRequest},
			{Name: "not found", Status: 404, Body: `{"error":{"message":"Item with id 'rs_1' not found. Items are not persisted when ` + "`store`" + ` is set to false.","type":"invalid_request_error","param":"input","code":null}}`, Kind: model.ErrInvalidRequest},
			{Name: "html", Status: 502, ContentType: "text/html", Body: "<html>" + strings.Repeat("x", 2000) + "</html>", Kind: model.ErrServer},
			{Name: "json instead of stream", Status: 200, ContentType: "application/json", Body: `{"id":"resp_1","object":"response"}`, Kind: model.ErrInvalidRequest},
		},
	}})
}

func TestModels(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "GET" || r.URL.Path != "/v1/models" || r.URL.RawQuery != "api-version=x" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, `{"error":{"message":"bad request line"}}`, 400)
			return
		}
		io.WriteString(w, `{"object":"list","data":[{"id":"gpt-5","object":"model","created":1,"owned_by":"system"}]}`)
	})
	b := newTestBackend(t, h, Options{HTTPOptions: model.HTTPOptions{APIKey: "k", Query: map[string]string{"api-version": "x"}}})
	got, err := b.Models(t.Context())
	if err != nil || !reflect.DeepEqual(got, []model.ModelInfo{{ID: "gpt-5"}}) {
		t.Errorf("models = %+v, %v", got, err)
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct {
		opts Options
		want string
	}{
		{Options{}, "https://api.openai.com/v1/responses"},
		{Options{HTTPOptions: model.HTTPOptions{BaseURL: "https://r.openai.azure.com/openai/v1/?api-version=preview", Query: map[string]string{"x": "y z"}}},
			"https://r.openai.azure.com/openai/v1/responses?api-version=preview&x=y+z"},
	}
	for _, tt := range tests {
		if got := New(tt.opts).c.URL("/responses"); got != tt.want {
			t.Errorf("%+v: endpoint %q, want %q", tt.opts, got, tt.want)
		}
	}
}

const firstDelta = "event: response.output_text.delta\n" +
	`data: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hel","logprobs":[]}` + "\n\n"

// decode runs the decoder over r (see [ssetest.Decode]).
func decode(r io.Reader, emit func(model.Event) bool) error {
	return sse.Decode(sse.NewReader(r, maxEventBytes), &decoder{}, emit)
}

// decodeAll runs the decoder over r and returns the outcome.
func decodeAll(r io.Reader) ssetest.Result { return ssetest.DecodeAll(decode, r) }

// FuzzDecode feeds arbitrary streams (seeded with every fixture) to the
// decoder, whole and re-chunked at random boundaries, and requires the
// same outcome and well-formed events.
func FuzzDecode(f *testing.F) {
	ssetest.FuzzDecode(f, ssetest.Fixtures(f), decode, func(t *testing.T, whole ssetest.Result) {
		for i, ev := range whole.Events {
			if ev.Opaque != nil && (!json.Valid(ev.Opaque) || ev.Provider != Provider) {
				t.Fatalf("bad opaque event %+v", ev)
			}
			if ev.Type == model.EventFinish && (i != len(whole.Events)-1 || whole.Error != nil) {
				t.Fatalf("finish is not last: %+v", whole)
			}
		}
	})
}

// BenchmarkDecode measures parsing of a 100,000-delta text stream.
func BenchmarkDecode(b *testing.B) {
	var buf bytes.Buffer
	for i := range 100_000 {
		buf.WriteString("event: response.output_text.delta\n")
		buf.WriteString(`data: {"type":"response.output_text.delta","sequence_number":`)
		buf.WriteString(strings.Repeat("9", 1+i%6))
		buf.WriteString(`,"item_id":"msg_68af4c1c5e9481979f7b6a2d3c4e5f600a1b2c3d4e5f6a7b","output_index":0,"content_index":0,"delta":"token","logprobs":[],"obfuscation":"Zx9a"}` + "\n\n")
	}
	buf.WriteString("event: response.completed\n" + `data: {"type":"response.completed","sequence_number":100001,"response":{"id":"resp_1","status":"completed","output":[],"usage":{"input_tokens":10,"output_tokens":100000}}}` + "\n\n")
	ssetest.BenchmarkDecode(b, decode, buf.Bytes(), 100_002)
}
