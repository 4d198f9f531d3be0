package gemini

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
	"acpd/model/internal/sse"
	"acpd/model/internal/sse/ssetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newTestBackend(t *testing.T, h http.Handler, opts Options) *Backend {
	opts.HTTPOptions = ssetest.Serve(t, h, opts.HTTPOptions, "")
	b := New(opts)
	b.idPrefix = func() string { return "call_gen_" }
	return b
}

func simpleRequest() *model.Request {
	return ssetest.Prompt("gemini-2.5-flash", "hi")
}

func text(s string) model.Part { return model.Part{Type: model.PartText, Text: s} }

func richRequest() *model.Request {
	return &model.Request{
		Model:           "gemini-3-pro-preview",
		System:          "You are a coding agent.",
		MaxOutputTokens: 4096,
		Effort:          model.EffortMedium,
		CacheSystem:     true,
		Tools: []model.ToolDef{
			{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"path":{"type":"string","description":"File path.","format":"uri-reference"},"limit":{"type":["integer","null"],"minimum":1}},"required":["path","missing"],"additionalProperties":false}`)},
			{Name: "list_dir", Description: "List the working directory."},
			{Name: "noop", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)},
		},
		Messages: []model.Message{
			{Role: model.RoleUser, Parts: []model.Part{
				text("What is in this picture and in README.md?"),
				{Type: model.PartImage, MimeType: "image/png", Data: "iVBORw0KGgo="},
				{Type: model.PartImage, MimeType: "image/gif", Data: "R0lGOD"},
				{Type: model.PartAudio, MimeType: "audio/mpeg", Data: "SUQz"},
				text(""),
			}},
			{Role: model.RoleAssistant, Parts: []model.Part{
				{Type: model.PartReasoning, Text: "I should read the file.", Signature: "c2lnLXRob3VnaHQ=", Provider: Provider},
				{Type: model.PartReasoning, Text: "unsigned summary", Provider: Provider},
				{Type: model.PartReasoning, Text: "from another provider", Signature: "x", Provider: "anthropic"},
				text("Let me read it."),
				{Type: model.PartReasoning, Signature: "c2lnLXRleHQ=", Provider: Provider},
				{Type: model.PartToolUse, ToolCallID: "call_1", ToolName: "read_file", Input: json.RawMessage(`{"path":"README.md"}`), Signature: "c2lnLWNhbGw=", Provider: Provider},
				{Type: model.PartToolUse, ToolCallID: "call_2", ToolName: "list_dir"},
				{Type: model.PartToolUse, ToolCallID: "call_3", ToolName: "read_file", Input: json.RawMessage(`"{\"path\":\"trunc"`)},
			}},
			{Role: model.RoleUser, Parts: []model.Part{
				{Type: model.PartToolResult, ToolCallID: "call_1", Content: []model.Part{text("# Title"), text("body")}},
				{Type: model.PartToolResult, ToolCallID: "call_2", Content: []model.Part{text("shot.png"), {Type: model.PartImage, MimeType: "image/jpeg", Data: "/9j/4AAQ"}}},
				{Type: model.PartToolResult, ToolCallID: "call_3", IsError: true, Content: []model.Part{text("invalid input")}},
				text("Also summarise."),
			}},
			// A turn begun with another provider: Gemini 3 needs the placeholder.
			{Role: model.RoleAssistant, Parts: []model.Part{
				{Type: model.PartReasoning, Text: "thinking elsewhere", Signature: "sig", Provider: "anthropic"},
				{Type: model.PartToolUse, ToolCallID: "toolu_9", ToolName: "list_dir", Input: json.RawMessage(`{}`), Signature: "foreign", Provider: "other"},
			}},
			{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartToolResult, ToolCallID: "toolu_9", Content: []model.Part{text("a.go")}}}},
			{Role: model.RoleAssistant, Interrupted: true, Parts: []model.Part{{Type: model.PartReasoning, Text: "only thinking"}}},
			{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartReasoning, Signature: "c2lnLW9ubHk=", Provider: Provider}, text("Summary: a title.")}},
		},
	}
}

// TestRequest checks the endpoint, headers and, against a golden file, the
// body of a request exercising every mapping rule.
func TestRequest(t *testing.T) {
	o, got := ssetest.Capture(t, "testdata/text.sse", "/v1beta/")
	o.APIKey = "AIza-test"
	o.Headers = map[string]string{"X-Goog-User-Project": "acpd"}
	b := New(Options{HTTPOptions: o})
	res := ssetest.Collect(t, b.Stream(t.Context(), richRequest()))
	if res.Error != nil {
		t.Fatalf("stream error: %+v", res.Error)
	}
	c := <-got
	if c.Method != "POST" || c.Path != "/v1beta/models/gemini-3-pro-preview:streamGenerateContent" || c.Query != "alt=sse" {
		t.Errorf("request line = %s %s?%s", c.Method, c.Path, c.Query)
	}
	ssetest.CheckHeader(t, c.Header, map[string]string{
		"X-Goog-Api-Key":      "AIza-test",
		"X-Goog-User-Project": "acpd",
		"Content-Type":        "application/json",
		"Accept":              "text/event-stream",
	})
	if strings.Contains(c.Query, "AIza") {
		t.Error("API key in the URL")
	}
	ssetest.Golden(t, "testdata/request.golden.json", json.RawMessage(c.Body), *ssetest.Update)

	// Structural rules the API enforces.
	var body struct {
		Contents []content `json:"contents"`
	}
	if err := json.Unmarshal(c.Body, &body); err != nil {
		t.Fatal(err)
	}
	for i, ct := range body.Contents {
		if len(ct.Parts) == 0 {
			t.Errorf("content %d is empty", i)
		}
		if ct.Role != "user" && ct.Role != "model" {
			t.Errorf("content %d: role %q", i, ct.Role)
		}
		hasResponse, hasOther := false, false
		for _, p := range ct.Parts {
			if p.FunctionResponse != nil {
				hasResponse = true
			} else {
				hasOther = true
			}
		}
		if hasResponse && hasOther {
			t.Errorf("content %d mixes function responses with other parts", i)
		}
	}
	if strings.Contains(string(c.Body), "additionalProperties") || strings.Contains(string(c.Body), "$schema") {
		t.Error("unsupported schema keywords sent")
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct {
		base, model, want string
	}{
		{"", "gemini-2.5-pro", "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"},
		{"https://proxy.example/v1beta/", "models/gemini-2.5-flash", "https://proxy.example/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
		{"https://proxy.example", "tunedModels/my model", "https://proxy.example/v1beta/tunedModels/my%20model:streamGenerateContent?alt=sse"},
	}
	for _, tt := range tests {
		if got := New(Options{HTTPOptions: model.HTTPOptions{BaseURL: tt.base}}).c.URL(streamPath(tt.model)); got != tt.want {
			t.Errorf("%q %q: %q, want %q", tt.base, tt.model, got, tt.want)
		}
	}
	res := ssetest.Collect(t, New(Options{}).Stream(t.Context(), &model.Request{Model: " "}))
	if res.Error == nil || res.Error.Kind != model.ErrInvalidRequest {
		t.Errorf("empty model: %+v", res)
	}
}

func TestThinkingConfig(t *testing.T) {
	tests := []struct {
		model  string
		effort model.Effort
		want   string // generationConfig JSON, "" for none
	}{
		{"gemini-2.5-flash", "", ""},
		{"gemini-2.5-flash", model.EffortOff, `{"thinkingConfig":{"thinkingBudget":0}}`},
		{"gemini-2.5-flash", model.EffortLow, `{"thinkingConfig":{"thinkingBudget":1024,"includeThoughts":true}}`},
		{"gemini-2.5-flash", model.EffortMedium, `{"thinkingConfig":{"thinkingBudget":8192,"includeThoughts":true}}`},
		{"gemini-2.5-flash", model.EffortHigh, `{"thinkingConfig":{"thinkingBudget":24576,"includeThoughts":true}}`},
		{"gemini-2.5-pro", model.EffortOff, ""},
		{"gemini-3-pro-preview", model.EffortOff, ""},
		{"gemini-pro-latest", model.EffortOff, ""},
		{"gemini-2.0-flash", model.EffortOff, `{"thinkingConfig":{"thinkingBudget":0}}`},
		{"gemini-1.5-pro", model.EffortOff, `{"thinkingConfig":{"thinkingBudget":0}}`},
		{"gemini-2.5-flash", "extreme", ""},
	}
	for _, tt := range tests {
		req := simpleRequest()
		req.Model, req.Effort = tt.model, tt.effort
		if got := sentConfig(t, req); got != tt.want {
			t.Errorf("%s %q: generationConfig %s, want %s", tt.model, tt.effort, got, tt.want)
		}
	}
}

// sentConfig is the generationConfig JSON of req's body, "" for none.
func sentConfig(t *testing.T, req *model.Request) string {
	t.Helper()
	body, err := requestBody(req)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		GenerationConfig json.RawMessage `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return string(m.GenerationConfig)
}

func TestMaxOutputTokens(t *testing.T) {
	for _, tt := range []struct {
		max    int
		effort model.Effort
		want   string
	}{
		{0, model.EffortHigh, `{"thinkingConfig":{"thinkingBudget":24576,"includeThoughts":true}}`},
		{1000, model.EffortLow, `{"maxOutputTokens":2024,"thinkingConfig":{"thinkingBudget":1024,"includeThoughts":true}}`},
		{30000, model.EffortMedium, `{"maxOutputTokens":30000,"thinkingConfig":{"thinkingBudget":8192,"includeThoughts":true}}`},
		{500, "", `{"maxOutputTokens":500}`},
		{-1, "", ``},
	} {
		req := simpleRequest()
		req.MaxOutputTokens, req.Effort = tt.max, tt.effort
		if got := sentConfig(t, req); got != tt.want {
			t.Errorf("max %d effort %q: %s, want %s", tt.max, tt.effort, got, tt.want)
		}
	}
}

func TestSentinel(t *testing.T) {
	msgs := []model.Message{
		{Role: model.RoleUser, Parts: []model.Part{text("go")}},
		{Role: model.RoleAssistant, Parts: []model.Part{
			{Type: model.PartToolUse, ToolCallID: "a", ToolName: "x", Input: json.RawMessage(`{}`)},
			{Type: model.PartToolUse, ToolCallID: "b", ToolName: "y", Input: json.RawMessage(`{}`)},
		}},
	}
	for modelID, want := range map[string]int{
		"gemini-3-pro-preview": 1, "gemini-3.1-flash": 1, "gemini-flash-latest": 1,
		"gemini-2.5-pro": 0, "gemini-2.0-flash": 0, "gemma-3-27b-it": 0,
	} {
		body, err := requestBody(&model.Request{Model: modelID, Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(body), skipSignature); n != want {
			t.Errorf("%s: %d placeholders, want %d\n%s", modelID, n, want, body)
		}
	}
}

func TestConvertSchema(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"none", ``, `null`},
		{"null", `null`, `null`},
		{"true", `true`, `null`},
		{"empty object", `{"type":"object","properties":{},"additionalProperties":false}`, `null`},
		{"no properties", `{"type":"object"}`, `null`},
		{"simple", `{"type":"object","properties":{"a":{"type":"string","description":"d","default":"x","pattern":"^a"}},"required":["a"]}`,
			`{"type":"object","properties":{"a":{"type":"string","description":"d"}},"required":["a"]}`},
		{"type array", `{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":["string","integer"]}}}`,
			`{"type":"object","properties":{"a":{"type":"string","nullable":true},"b":{"anyOf":[{"type":"string"},{"type":"integer"}]}}}`},
		{"enum and const", `{"type":"object","properties":{"m":{"enum":["a","b"]},"n":{"type":"integer","enum":[1,2]},"c":{"const":"x"}}}`,
			`{"type":"object","properties":{"m":{"type":"string","enum":["a","b"]},"n":{"type":"integer"},"c":{"type":"string","enum":["x"]}}}`},
		{"formats", `{"type":"object","properties":{"t":{"type":"string","format":"date-time"},"u":{"type":"string","format":"uri"},"i":{"type":"integer","format":"int64","minimum":0,"maximum":9}}}`,
			`{"type":"object","properties":{"t":{"type":"string","format":"date-time"},"u":{"type":"string"},"i":{"type":"integer","format":"int64","minimum":0,"maximum":9}}}`},
		{"refs", `{"$defs":{"P":{"type":"object","properties":{"x":{"type":"number"}},"description":"point"}},"type":"object","properties":{"p":{"$ref":"#/$defs/P","description":"the point"},"q":{"$ref":"#/definitions/missing"}}}`,
			`{"type":"object","properties":{"p":{"type":"object","properties":{"x":{"type":"number"}},"description":"the point"},"q":{"type":"object"}}}`},
		{"recursive ref", `{"definitions":{"N":{"type":"object","properties":{"next":{"$ref":"#/definitions/N"}}}},"type":"object","properties":{"n":{"$ref":"#/definitions/N"}}}`,
			`{"type":"object","properties":{"n":{"type":"object","properties":{"next":{"type":"object"}}}}}`},
		{"anyOf null", `{"type":"object","properties":{"a":{"anyOf":[{"type":"string"},{"type":"null"}],"description":"d"},"b":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`,
			`{"type":"object","properties":{"a":{"type":"string","nullable":true,"description":"d"},"b":{"anyOf":[{"type":"string"},{"type":"number"}]}}}`},
		{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"boolean"}},"required":["b"]}]}`,
			`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"boolean"}},"required":["a","b"]}`},
		{"arrays", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"},"minItems":1},"t":{"type":"array","items":[{"type":"integer"}]},"u":{"type":"array"}}}`,
			`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string"},"minItems":1},"t":{"type":"array","items":{"type":"integer"}},"u":{"type":"array","items":{"type":"string"}}}}`},
		{"nested free object", `{"type":"object","properties":{"env":{"type":"object","additionalProperties":{"type":"string"},"description":"vars"}}}`,
			`{"type":"object","properties":{"env":{"type":"object","description":"vars"}}}`},
	}
	for _, tt := range tests {
		got, err := convertSchema(json.RawMessage(tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		gotJSON, _ := json.Marshal(got)
		if got == nil {
			gotJSON = []byte("null")
		}
		if !ssetest.JSONEqual(gotJSON, []byte(tt.want)) {
			t.Errorf("%s:\ngot  %s\nwant %s", tt.name, gotJSON, tt.want)
		}
	}
	for _, bad := range []string{`{`, `[1]`, `"x"`} {
		if _, err := convertSchema(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	deep := strings.Repeat(`{"type":"object","properties":{"a":`, 100) + `{"type":"string"}` + strings.Repeat(`}}`, 100)
	if _, err := convertSchema(json.RawMessage(deep)); err != nil {
		t.Errorf("deep schema: %v", err)
	}
	res := ssetest.Collect(t, New(Options{}).Stream(t.Context(), &model.Request{Model: "gemini-2.5-flash",
		Tools: []model.ToolDef{{Name: "bad", InputSchema: json.RawMessage(`[]`)}}}))
	if res.Error == nil || res.Error.Kind != model.ErrInvalidRequest {
		t.Errorf("invalid schema: %+v", res)
	}
}

// assemble builds the assistant message the agent would record from the
// events (text and reasoning in order, signatures attached to the block
// they end, tool calls last, Provider copied).
func assemble(events []model.Event) model.Message {
	var parts []model.Part
	var calls []model.Part
	for _, ev := range events {
		switch ev.Type {
		case model.EventText, model.EventReasoning:
			typ := model.PartText
			if ev.Type == model.EventReasoning {
				typ = model.PartReasoning
			}
			if n := len(parts); n > 0 && parts[n-1].Type == typ && parts[n-1].Signature == "" {
				parts[n-1].Text += ev.Text
				continue
			}
			parts = append(parts, model.Part{Type: typ, Text: ev.Text})
		case model.EventReasoningDone:
			if n := len(parts); n > 0 && parts[n-1].Type == model.PartReasoning && parts[n-1].Signature == "" {
				parts[n-1].Signature, parts[n-1].Provider = ev.Signature, ev.Provider
				continue
			}
			if ev.Signature != "" {
				parts = append(parts, model.Part{Type: model.PartReasoning, Signature: ev.Signature, Provider: ev.Provider})
			}
		case model.EventToolDone:
			calls = append(calls, model.Part{Type: model.PartToolUse, ToolCallID: ev.ToolCallID, ToolName: ev.ToolName,
				Input: ev.Input, Signature: ev.Signature, Provider: ev.Provider})
		}
	}
	return model.Message{Role: model.RoleAssistant, Parts: append(parts, calls...)}
}

// TestSignatureRoundTrip checks that every signature of a streamed
// response goes back on the part Gemini put it on.
func TestSignatureRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		fixture string
		want    []part
	}{
		{"thinking_signed", []part{
			{Text: ptr("Let me check the file first."), Thought: true, ThoughtSignature: "CrwBAVSoXO7"},
			{Text: ptr("I will read"), ThoughtSignature: "Ct0BAVSoXO8"},
			{Text: ptr(" it now.")},
			{FunctionCall: &functionCall{Name: "read_file", Args: json.RawMessage(`{"path":"go.mod"}`)}, ThoughtSignature: "CiQBVKhc7p"},
		}},
		{"thinking", []part{
			{Text: ptr("Goroutines hum,\nchannels carry the quiet,\nthe scheduler waits."), ThoughtSignature: "EqgDCqUDAdHtim9x"},
		}},
		{"parallel_tools", []part{
			{FunctionCall: &functionCall{Name: "read_file", Args: json.RawMessage(`{"path":"a.go"}`)}, ThoughtSignature: "CiIBVKhc7oGDyE4uN0hCqzq0c4qM8pMUy4yI7i0V0y5uXw8vEmIKYAFUqFzuT7hM3vZz0Y1Q9gWn0g=="},
			{FunctionCall: &functionCall{Name: "read_file", Args: json.RawMessage(`{"path":"b.go"}`)}},
			{FunctionCall: &functionCall{Name: "list_dir", Args: json.RawMessage(`{}`)}},
		}},
	} {
		data, err := os.ReadFile("testdata/" + tt.fixture + ".sse")
		if err != nil {
			t.Fatal(err)
		}
		res := decodeAll(bytes.NewReader(data))
		if res.Error != nil {
			t.Fatalf("%s: %+v", tt.fixture, res.Error)
		}
		msg := assemble(res.Events)
		c, ok := modelContent(msg, true, map[string]string{})
		if !ok {
			t.Fatalf("%s: nothing sent", tt.fixture)
		}
		got, _ := json.Marshal(c.Parts)
		want, _ := json.Marshal(tt.want)
		if !ssetest.JSONEqual(got, want) {
			t.Errorf("%s:\ngot  %s\nwant %s", tt.fixture, got, want)
		}
	}
}

func ptr(s string) *string { return &s }

// TestBackend runs the contract every backend keeps (package ssetest).
func TestBackend(t *testing.T) {
	quota := func(quotaID, value, delay string) string {
		return `{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: ` + value + `, model: gemini-2.5-pro\nPlease retry in 38.2s.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"` + quotaID + `","quotaDimensions":{"location":"global","model":"gemini-2.5-pro"},"quotaValue":"` + value + `"}]},{"@type":"type.googleapis.com/google.rpc.Help","links":[{"description":"Learn more about Gemini API quotas","url":"https://ai.google.dev/gemini-api/docs/rate-limits"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"` + delay + `"}]}}`
	}
	ssetest.TestBackend(t, ssetest.Factory{HTTP: &ssetest.HTTP{
		New: func(o model.HTTPOptions) model.Backend {
			b := New(Options{HTTPOptions: o})
			b.idPrefix = func() string { return "call_gen_" }
			return b
		},
		BasePath:         "",
		Path:             "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
		Request:          simpleRequest(),
		Head:             firstDelta,
		KeyHeader:        "X-Goog-Api-Key",
		KeyPrefix:        "",
		Fixtures:         "testdata/*.sse",
		Update:           *ssetest.Update,
		MaxMessage:       maxErrorMessage,
		ErrorContentType: "application/json; charset=UTF-8",
		Errors: []ssetest.HTTPError{
			{Name: "bad key", Status: 400, Body: `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`, Kind: model.ErrAuth, Message: "API key not valid. Please pass a valid API key."},
			{Name: "unauthenticated", Status: 401, Body: `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`, Kind: model.ErrAuth},
			{Name: "no key", Status: 403, Body: `{"error":{"code":403,"message":"Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.","status":"PERMISSION_DENIED"}}`, Kind: model.ErrAuth},
			{Name: "per-minute quota", Status: 429, Body: quota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "5", "38s"), Kind: model.ErrRateLimit, RetryAfter: 38 * time.Second},
			{Name: "per-day quota", Status: 429, Body: quota("GenerateRequestsPerDayPerProjectPerModel-FreeTier", "100", "21s"), Kind: model.ErrQuota, RetryAfter: 21 * time.Second},
			{Name: "zero quota", Status: 429, Body: quota("GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "0", "1.5s"), Kind: model.ErrQuota, RetryAfter: 1500 * time.Millisecond},
			{Name: "header wins", Status: 429, Header: map[string]string{"Retry-After": "3"}, Body: quota("GenerateRequestsPerMinutePerProjectPerModel", "60", "38s"), Kind: model.ErrRateLimit, RetryAfter: 3 * time.Second},
			{Name: "bare 429", Status: 429, Body: `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`, Kind: model.ErrRateLimit},
			{Name: "credits", Status: 429, Body: `{"error":{"code":429,"message":"Your prepayment credits are depleted. Please go to AI Studio to manage your project and billing.","status":"RESOURCE_EXHAUSTED"}}`, Kind: model.ErrQuota},
			{Name: "context overflow", Status: 400, Body: `{"error":{"code":400,"message":"The input token count (1201544) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`, Kind: model.ErrContextOverflow},
			{Name: "invalid", Status: 400, Body: `{"error":{"code":400,"message":"* GenerateContentRequest.tools[0].function_declarations[0].parameters.properties: should be non-empty for OBJECT type\n","status":"INVALID_ARGUMENT"}}`, Kind: model.ErrInvalidRequest},
			{Name: "location", Status: 400, Body: `{"error":{"code":400,"message":"User location is not supported for the API use.","status":"FAILED_PRECONDITION"}}`, Kind: model.ErrInvalidRequest},
			{Name: "not found", Status: 404, Body: `{"error":{"code":404,"message":"models/gemini-9 is not found for API version v1beta, or is not supported for generateContent.","status":"NOT_FOUND"}}`, Kind: model.ErrInvalidRequest},
			{Name: "array body", Status: 400, Body: `[{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT"}}]`, Kind: model.ErrInvalidRequest, Message: "Invalid JSON payload received."},
			{Name: "internal", Status: 500, Body: `{"error":{"code":500,"message":"An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting","status":"INTERNAL"}}`, Kind: model.ErrServer},
			{Name: "overloaded", Status: 503, Header: map[string]string{"Retry-After": "2"}, Body: `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`, Kind: model.ErrOverloaded, RetryAfter: 2 * time.Second},
			{Name: "deadline", Status: 504, Body: `{"error":{"code":504,"message":"Deadline expired before operation could complete.","status":"DEADLINE_EXCEEDED"}}`, Kind: model.ErrServer},
			{Name: "html", Status: 502, ContentType: "text/html", Body: "<html>" + strings.Repeat("x", 2000) + "</html>", Kind: model.ErrServer},
			{Name: "cross-host redirect", Status: 307, Header: map[string]string{"Location": "http://elsewhere.invalid/x"}, Kind: model.ErrInvalidRequest, Message: "Temporary Redirect"},
			{Name: "json instead of stream", Status: 200, ContentType: "application/json", Body: `{"candidates":[]}`, Kind: model.ErrInvalidRequest},
			{Name: "json error with 200", Status: 200, ContentType: "application/json", Body: `{"error":{"code":500,"message":"boom","status":"INTERNAL"}}`, Kind: model.ErrServer, InBand: true},
		},
	}})
}

func TestModels(t *testing.T) {
	page1 := `{"models":[
		{"name":"models/gemini-2.5-pro","version":"2.5","displayName":"Gemini 2.5 Pro","inputTokenLimit":1048576,"outputTokenLimit":65536,"supportedGenerationMethods":["generateContent","countTokens","createCachedContent","batchGenerateContent"],"temperature":1,"thinking":true},
		{"name":"models/embedding-001","displayName":"Embedding 001","inputTokenLimit":2048,"outputTokenLimit":1,"supportedGenerationMethods":["embedContent"]}
	],"nextPageToken":"tok2"}`
	page2 := `{"models":[
		{"name":"models/gemini-2.5-flash-preview-tts","displayName":"Gemini 2.5 Flash Preview TTS","inputTokenLimit":8192,"outputTokenLimit":16384,"supportedGenerationMethods":["countTokens","generateContent"]},
		{"name":"models/gemma-3-27b-it","displayName":"Gemma 3 27B","inputTokenLimit":131072,"outputTokenLimit":8192,"supportedGenerationMethods":["generateContent","countTokens"]}
	]}`
	var pages []string
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "GET" || r.URL.Path != "/v1beta/models" || r.Header.Get("X-Goog-Api-Key") != "k" || r.URL.Query().Get("pageSize") != "1000" {
			http.Error(w, `{"error":{"code":400,"message":"bad request line","status":"INVALID_ARGUMENT"}}`, 400)
			return
		}
		tok := r.URL.Query().Get("pageToken")
		pages = append(pages, tok)
		if tok == "tok2" {
			io.WriteString(w, page2)
			return
		}
		io.WriteString(w, page1)
	})
	b := newTestBackend(t, h, Options{HTTPOptions: model.HTTPOptions{APIKey: "k"}})
	got, err := b.Models(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []model.ModelInfo{
		{ID: "gemini-2.5-pro", Name: "Gemini 2.5 Pro", ContextWindow: 1048576, MaxOutputTokens: 65536, Tools: true, Images: true, Audio: true, Reasoning: true},
		{ID: "gemini-2.5-flash-preview-tts", Name: "Gemini 2.5 Flash Preview TTS", ContextWindow: 8192, MaxOutputTokens: 16384},
		{ID: "gemma-3-27b-it", Name: "Gemma 3 27B", ContextWindow: 131072, MaxOutputTokens: 8192},
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(pages, []string{"", "tok2"}) {
		t.Errorf("models = %+v (pages %q)\nwant %+v", got, pages, want)
	}

	for _, bad := range []string{`{"data":[]}`, `[]`, `{"models":[{"displayName":"x"}]}`, `{"models":[null]}`, `<html>`} {
		b := newTestBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, bad) }), Options{})
		if _, err := b.Models(t.Context()); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	b = newTestBackend(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`, 400)
	}), Options{})
	if _, err := b.Models(t.Context()); model.KindOf(err) != model.ErrAuth {
		t.Errorf("bad key: err = %v", err)
	}
}

const firstDelta = `data: {"candidates": [{"content": {"parts": [{"text": "Hel"}],"role": "model"},"index": 0}]}` + "\r\n\r\n"

// decode runs the decoder over r (see [ssetest.Decode]).
func decode(r io.Reader, emit func(model.Event) bool) error {
	return sse.Decode(sse.NewReader(r, maxEventBytes), &decoder{idPrefix: "call_gen_"}, emit)
}

// decodeAll runs the decoder over r and returns the outcome.
func decodeAll(r io.Reader) ssetest.Result { return ssetest.DecodeAll(decode, r) }

// FuzzDecode feeds arbitrary streams (seeded with every fixture) to the
// decoder, whole and re-chunked at random boundaries, and requires the
// same outcome and well-formed events.
func FuzzDecode(f *testing.F) {
	ssetest.FuzzDecode(f, ssetest.Fixtures(f), decode, func(t *testing.T, whole ssetest.Result) {
		for i, ev := range whole.Events {
			if (ev.Signature != "" || ev.Opaque != nil) && ev.Provider != Provider {
				t.Fatalf("signature without provider: %+v", ev)
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
	for range 100_000 {
		buf.WriteString(`data: {"candidates": [{"content": {"parts": [{"text": "token"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 9,"totalTokenCount": 9,"promptTokensDetails": [{"modality": "TEXT","tokenCount": 9}]},"modelVersion": "gemini-2.5-flash","responseId": "k0qFaL3bD8-wkdUP1vjQiQ8"}` + "\r\n\r\n")
	}
	buf.WriteString(`data: {"candidates": [{"content": {"parts": [{"text": ""}],"role": "model"},"finishReason": "STOP","index": 0}]}` + "\r\n\r\n")
	ssetest.BenchmarkDecode(b, decode, buf.Bytes(), 100_002)
}
