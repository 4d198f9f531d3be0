package main

// End-to-end tests of the model path through the built binary: fake provider
// servers (httptest on 127.0.0.1) speak the exact streaming wire formats of
// OpenAI Chat Completions and Anthropic Messages, acpd talks to them as it
// talks to the real APIs (selected by the same environment variables), and a
// client drives acpd over stdio: the official TypeScript SDK client
// (testdata/interop/fix-bug.mjs) for the full tool scenario, the raw harness
// of main_test.go for the rest. Each fake server is a scripted state machine
// that picks its response from the request it receives (by counting the tool
// results in the conversation) and records every request, so the tests
// assert on what acpd sent as well as on what the client saw.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fakeStep is one response of a fake model: a tool call (tool set) or a
// final text answer.
type fakeStep struct {
	callID, tool, args string
	text               string
}

// fakeRequest is one HTTP request a fake provider received.
type fakeRequest struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// fakeProvider is an OpenAI- or Anthropic-compatible model server. Its
// handlers run on the server's goroutines; everything they share is
// guarded by mu. Close it (tb.Cleanup does) after the acpd processes using
// it exited.
type fakeProvider struct {
	dialect string     // "openai" or "anthropic"
	key     string     // required API key; "" accepts any
	script  []fakeStep // response i answers a request holding i tool results
	srv     *httptest.Server

	mu        sync.Mutex
	models    []string      // GET /v1/models answer (openai dialect)
	listDelay time.Duration // before answering GET /v1/models
	failures  []fakeFailure // answered, in order, before any script response
	reqs      []fakeRequest
}

// fakeFailure is an error response: status, headers and a JSON body.
type fakeFailure struct {
	status int
	header map[string]string
	body   string
}

// newFakeProvider starts a fake server of dialect on 127.0.0.1 (on l when
// not nil).
func newFakeProvider(tb testing.TB, dialect, key string, l net.Listener, script ...fakeStep) *fakeProvider {
	tb.Helper()
	f := &fakeProvider{dialect: dialect, key: key, script: script, models: []string{"fake-model"}}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	if l != nil {
		f.srv.Listener.Close()
		f.srv.Listener = l
	}
	f.srv.Start()
	tb.Cleanup(f.srv.Close)
	return f
}

// requests returns the model requests received so far (GET /v1/models
// excluded).
func (f *fakeProvider) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeRequest
	for _, r := range f.reqs {
		if r.Method == http.MethodPost {
			out = append(out, r)
		}
	}
	return out
}

// setModels sets the models GET /v1/models lists, answered after delay.
func (f *fakeProvider) setModels(delay time.Duration, ids ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.models, f.listDelay = ids, delay
}

// failNext queues error responses for the next model requests.
func (f *fakeProvider) failNext(ff ...fakeFailure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, ff...)
}

func (f *fakeProvider) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, fakeRequest{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	var fail *fakeFailure
	if r.Method == http.MethodPost && len(f.failures) > 0 {
		fail = &f.failures[0]
		f.failures = f.failures[1:]
	}
	models, listDelay := f.models, f.listDelay
	f.mu.Unlock()

	if f.key != "" {
		got := r.Header.Get("x-api-key")
		if f.dialect == "openai" {
			got = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		}
		if got != f.key {
			f.writeError(w, http.StatusUnauthorized, "authentication_error", "invalid x-api-key / Authorization")
			return
		}
	}
	switch {
	case f.dialect == "openai" && r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		select {
		case <-time.After(listDelay):
		case <-r.Context().Done():
			return
		}
		list := map[string]any{"object": "list", "data": []any{}}
		for _, id := range models {
			list["data"] = append(list["data"].([]any), map[string]any{"id": id, "object": "model", "created": 1754000000, "owned_by": "library"})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(list)
		return
	case f.dialect == "openai" && r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
	case f.dialect == "anthropic" && r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
	default:
		f.writeError(w, http.StatusNotFound, "not_found_error", r.Method+" "+r.URL.Path+" is not served here")
		return
	}
	if fail != nil {
		for k, v := range fail.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(fail.status)
		io.WriteString(w, fail.body)
		return
	}
	var results int
	if f.dialect == "openai" {
		results, err = openaiToolResults(body)
	} else {
		results, err = anthropicToolResults(body)
	}
	if err != nil {
		f.writeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	step := fakeStep{text: fmt.Sprintf("UNEXPECTED request with %d tool results", results)}
	if results < len(f.script) {
		step = f.script[results]
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	sse := &sseWriter{w: w}
	if f.dialect == "openai" {
		openaiStream(sse, step)
	} else {
		anthropicStream(sse, step)
	}
}

// writeError answers in the dialect's error shape.
func (f *fakeProvider) writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if f.dialect == "openai" {
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
}

// sseWriter writes server-sent events and flushes each.
type sseWriter struct{ w http.ResponseWriter }

func (s *sseWriter) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	if name != "" {
		fmt.Fprintf(s.w, "event: %s\n", name)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	s.w.(http.Flusher).Flush()
}

// halves splits s in two (for streaming deltas).
func halves(s string) [2]string { return [2]string{s[:len(s)/2], s[len(s)/2:]} }

// ---- OpenAI Chat Completions ------------------------------------------------

type oaMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

type oaRequest struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	ReasoningEffort string      `json:"reasoning_effort"`
	MaxTokens       *int        `json:"max_tokens"`
	Messages        []oaMessage `json:"messages"`
	Tools           []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// text returns a message's text content (a string or text parts).
func (m oaMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct{ Type, Text string }
	json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func openaiToolResults(body []byte) (int, error) {
	var req oaRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return 0, err
	}
	n := 0
	for _, m := range req.Messages {
		if m.Role == "tool" {
			n++
		}
	}
	return n, nil
}

// openaiStream streams step as Chat Completions chunks: deltas, the finish
// chunk, the usage chunk (stream_options.include_usage) and [DONE].
func openaiStream(s *sseWriter, step fakeStep) {
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1754000000, "model": "gpt-test",
			"system_fingerprint": "fp_e2e", "choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}, "usage": nil}
	}
	finish := "stop"
	if step.tool != "" {
		finish = "tool_calls"
		s.event("", chunk(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{
			"index": 0, "id": step.callID, "type": "function", "function": map[string]any{"name": step.tool, "arguments": ""}}}}, nil))
		for _, part := range halves(step.args) {
			s.event("", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": part}}}}, nil))
		}
	} else {
		s.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for _, part := range halves(step.text) {
			s.event("", chunk(map[string]any{"content": part}, nil))
		}
	}
	s.event("", chunk(map[string]any{}, finish))
	s.event("", map[string]any{"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1754000000, "model": "gpt-test", "choices": []any{},
		"usage": map[string]any{"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230,
			"prompt_tokens_details": map[string]any{"cached_tokens": 1024}, "completion_tokens_details": map[string]any{"reasoning_tokens": 0}}})
	fmt.Fprint(s.w, "data: [DONE]\n\n")
	s.w.(http.Flusher).Flush()
}

// ---- Anthropic Messages -------------------------------------------------------

type anCache struct {
	Type string `json:"type"`
}

type anBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Content      []anBlock       `json:"content"`
	IsError      bool            `json:"is_error"`
	Thinking     *string         `json:"thinking"`
	Signature    string          `json:"signature"`
	CacheControl *anCache        `json:"cache_control"`
}

type anRequest struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Stream    bool   `json:"stream"`
	Thinking  *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	System []anBlock `json:"system"`
	Tools  []struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"input_schema"`
		CacheControl *anCache        `json:"cache_control"`
	} `json:"tools"`
	Messages []struct {
		Role    string    `json:"role"`
		Content []anBlock `json:"content"`
	} `json:"messages"`
}

func anthropicToolResults(body []byte) (int, error) {
	var req anRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return 0, err
	}
	n := 0
	for _, m := range req.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				n++
			}
		}
	}
	return n, nil
}

// anthropicThinking is the thinking text the fake model streams before a
// tool call, and anthropicSignature its signature.
func anthropicThinking(step fakeStep) string  { return "I should call " + step.tool + " next." }
func anthropicSignature(step fakeStep) string { return "EqQBCgIYAhIM-sig-" + step.callID }

// anthropicStream streams step as Messages API events: a thinking block
// with its signature and a tool_use block for a tool call, a text block
// for an answer.
func anthropicStream(s *sseWriter, step fakeStep) {
	s.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_e2e", "type": "message", "role": "assistant", "content": []any{}, "model": "claude-test",
		"stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 900, "cache_creation_input_tokens": 100,
			"cache_read_input_tokens": 200, "output_tokens": 1, "service_tier": "standard"}}})
	s.event("ping", map[string]any{"type": "ping"})
	stop := "end_turn"
	if step.tool != "" {
		stop = "tool_use"
		th := halves(anthropicThinking(step))
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
		for _, part := range th {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "thinking_delta", "thinking": part}})
		}
		s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "signature_delta", "signature": anthropicSignature(step)}})
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "tool_use", "id": step.callID, "name": step.tool, "input": map[string]any{}}})
		for _, part := range halves(step.args) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 1})
	} else {
		s.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, part := range halves(step.text) {
			s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": part}})
		}
		s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	}
	s.event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 42}})
	s.event("message_stop", map[string]any{"type": "message_stop"})
}

// ---- the fix-bug scenario -------------------------------------------------------

const mainBefore, mainAfter = "line one\nthis line has a bug\nlast line\n", "line one\nthis line has a fix\nlast line\n"

// fixBugScript is the fake model's side of testdata/interop/fix-bug.mjs;
// p prefixes the call ids.
func fixBugScript(p string) []fakeStep {
	return []fakeStep{
		{callID: p + "plan", tool: "update_plan", args: `{"entries":[{"content":"Read main.txt","status":"completed","priority":"high"},` +
			`{"content":"Replace bug with fix","status":"in_progress","priority":"high"},{"content":"Check the result","status":"pending","priority":"medium"}]}`},
		{callID: p + "read", tool: "read_file", args: `{"path":"main.txt"}`},
		{callID: p + "edit", tool: "edit_file", args: `{"path":"main.txt","old_string":"bug","new_string":"fix"}`},
		{callID: p + "cmd", tool: "run_command", args: `{"command":"cat main.txt && env"}`},
		{text: "Done."},
	}
}

// toolNames are the tools every session offers the model.
var toolNames = []string{"edit_file", "glob", "grep", "list_dir", "read_file", "run_command", "update_plan", "write_file"}

// TestE2EFixBug runs the fix-bug scenario against each dialect's fake
// server, with the key and endpoint in the environment as a user sets them.
func TestE2EFixBug(t *testing.T) {
	t.Parallel()
	openaiEnv := func(url string) []string {
		return []string{"OPENAI_API_KEY=" + e2eSecret("openai"), "OPENAI_BASE_URL=" + url + "/v1"}
	}
	anthropicEnv := func(url string) []string {
		return []string{"ANTHROPIC_API_KEY=" + e2eSecret("anthropic"), "ANTHROPIC_BASE_URL=" + url}
	}
	for _, tc := range []struct {
		name, dialect, prefix, model string
		env                          func(url string) []string
		// priced: the catalog knows the model, so its reasoning (the
		// session's thought_level, medium) is on and usage has a cost.
		priced bool
	}{
		{"openai", "openai", "call_", "gpt-test", openaiEnv, false},
		{"openai-catalog", "openai", "call_", "gpt-5", openaiEnv, true},
		{"anthropic", "anthropic", "toolu_", "claude-test", anthropicEnv, false},
		{"anthropic-catalog", "anthropic", "toolu_", "claude-sonnet-4-5", anthropicEnv, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			script := fixBugScript(tc.prefix)
			srv := newFakeProvider(t, tc.dialect, e2eSecret(tc.dialect), nil, script...)
			r := newInteropRun(t)
			r.iso.env = append(r.iso.env, tc.env(srv.srv.URL)...)
			r.iso.env = append(r.iso.env, "ACPD_DISCOVER=0", "ACPD_LOG_LEVEL=debug")
			mainTxt := writeFile(t, filepath.Join(r.project, "main.txt"), mainBefore)
			ids := map[string]string{"plan": script[0].callID, "read": script[1].callID, "edit": script[2].callID, "cmd": script[3].callID}
			sum := r.run(t, "fix-bug", map[string]any{"args": []string{"--model", tc.dialect + "/" + tc.model}, "ids": ids})

			if got := readFileString(t, mainTxt); got != mainAfter {
				t.Errorf("main.txt = %q, want %q", got, mainAfter)
			}
			if perms, _ := sum["permissions"].([]any); len(perms) != 2 {
				t.Errorf("permission requests %v, want the edit's and the command's", sum["permissions"])
			}
			reqs := srv.requests()
			if len(reqs) != len(script) {
				t.Fatalf("the model server got %d requests, want %d", len(reqs), len(script))
			}
			if tc.dialect == "openai" {
				checkOpenAIRequests(t, reqs, script, r.project, e2eSecret(tc.dialect), tc.model, tc.priced)
			} else {
				checkAnthropicRequests(t, reqs, script, r.project, e2eSecret(tc.dialect), tc.model, tc.priced)
			}
			usage, _ := sum["usage"].(map[string]any)
			if cost, _ := usage["cost"].(map[string]any); tc.priced != (cost != nil) {
				t.Errorf("usage_update %v: want a cost only for a model with known prices", usage)
			} else if tc.priced && (cost["currency"] != "USD" || cost["amount"].(float64) <= 0) {
				t.Errorf("usage_update cost %v", cost)
			}
			checkSecretAbsent(t, e2eSecret(tc.dialect), r.recDir, r.iso.State)
		})
	}
}

// e2eSecret is the API key a test gives acpd: distinctive, so finding it
// anywhere is a leak.
func e2eSecret(name string) string { return "sk-e2e-" + name + "-SECRET-7c1f9b2d5e" }

// checkSecretAbsent fails when secret occurs in any file under dirs (acpd's
// logs and recorded output, the session store).
func checkSecretAbsent(t *testing.T, secret string, dirs ...string) {
	t.Helper()
	files := 0
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("the API key appears in %s", path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files == 0 {
		t.Errorf("no files to check for the API key under %v", dirs)
	}
}

// schemaTool is a tool definition as a dialect sent it.
type schemaTool struct {
	name   string
	schema json.RawMessage
}

// checkToolSchemas checks that the request offers every tool with a
// compilable JSON Schema of an object, and that the script's arguments
// are valid against it.
func checkToolSchemas(t *testing.T, tools []schemaTool, script []fakeStep) {
	t.Helper()
	var names []string
	compiled := map[string]*jsonschema.Schema{}
	for _, tl := range tools {
		names = append(names, tl.name)
		var obj struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(tl.schema, &obj); err != nil || obj.Type != "object" || obj.Properties == nil {
			t.Errorf("tool %s: schema %s is not an object schema with properties (%v)", tl.name, tl.schema, err)
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tl.schema))
		if err != nil {
			t.Errorf("tool %s: %v", tl.name, err)
			continue
		}
		c := jsonschema.NewCompiler()
		url := "file:///tools/" + tl.name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			t.Errorf("tool %s: %v", tl.name, err)
			continue
		}
		if compiled[tl.name], err = c.Compile(url); err != nil {
			t.Errorf("tool %s: schema does not compile: %v", tl.name, err)
		}
	}
	for _, want := range toolNames {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	for _, st := range script {
		if st.tool == "" || compiled[st.tool] == nil {
			continue
		}
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(st.args))
		if err != nil {
			t.Fatal(err)
		}
		if err := compiled[st.tool].Validate(inst); err != nil {
			t.Errorf("the arguments %s of %s are invalid against its schema: %v", st.args, st.tool, err)
		}
	}
}

// checkToolResult checks the result the model got for step (the step
// before the request).
func checkToolResult(t *testing.T, i int, step fakeStep, callID, text, secret string) {
	t.Helper()
	if callID != step.callID {
		t.Errorf("request %d: the last tool result answers %q, want %q", i, callID, step.callID)
	}
	want := map[string]string{"update_plan": "Plan updated", "read_file": "this line has a bug", "edit_file": "main.txt", "run_command": "this line has a fix"}[step.tool]
	if !strings.Contains(text, want) {
		t.Errorf("request %d: the %s result %q lacks %q", i, step.tool, text, want)
	}
	if step.tool == "run_command" {
		// The command ran `env`: its children see PAGER=cat, never the key.
		if !strings.Contains(text, "PAGER=cat") {
			t.Errorf("request %d: the run_command result lacks the env output:\n%s", i, text)
		}
		if strings.Contains(text, secret) {
			t.Errorf("request %d: the API key reached the command's environment", i)
		}
	}
}

func checkOpenAIRequests(t *testing.T, reqs []fakeRequest, script []fakeStep, cwd, key, modelID string, reasoning bool) {
	t.Helper()
	for i, fr := range reqs {
		if got := fr.Header.Get("Authorization"); got != "Bearer "+key {
			t.Errorf("request %d: Authorization %q", i, got)
		}
		var req oaRequest
		if err := json.Unmarshal(fr.Body, &req); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if req.Model != modelID || !req.Stream || req.StreamOptions == nil || !req.StreamOptions.IncludeUsage {
			t.Errorf("request %d: model %q, stream %v, stream_options %+v", i, req.Model, req.Stream, req.StreamOptions)
		}
		// The session's thought_level (medium) for a model known to
		// reason; OpenAI itself gets max_completion_tokens, never
		// max_tokens.
		if want := map[bool]string{true: "medium"}[reasoning]; req.ReasoningEffort != want {
			t.Errorf("request %d: reasoning_effort %q, want %q", i, req.ReasoningEffort, want)
		}
		if req.MaxTokens != nil {
			t.Errorf("request %d: max_tokens %d sent to OpenAI", i, *req.MaxTokens)
		}
		if len(req.Messages) < 2 || req.Messages[0].Role != "system" {
			t.Fatalf("request %d: messages %s", i, fr.Body)
		}
		if sys := req.Messages[0].text(); !strings.Contains(sys, "Working directory: "+cwd) || !strings.Contains(sys, "tools") {
			t.Errorf("request %d: the system prompt does not name the working directory %s and the tools:\n%s", i, cwd, sys)
		}
		if req.Messages[1].Role != "user" || !strings.Contains(req.Messages[1].text(), "fix the bug") {
			t.Errorf("request %d: first message %+v, want the user's prompt", i, req.Messages[1])
		}
		var tools []schemaTool
		for _, tl := range req.Tools {
			if tl.Type != "function" {
				t.Errorf("request %d: tool type %q", i, tl.Type)
			}
			tools = append(tools, schemaTool{tl.Function.Name, tl.Function.Parameters})
		}
		checkToolSchemas(t, tools, script)
		if i == 0 {
			continue
		}
		// The conversation so far: every earlier call, each answered by
		// a tool message with its id, right after the assistant message.
		msgs := req.Messages[2:]
		if len(msgs) != 2*i {
			t.Errorf("request %d: %d messages after the prompt, want %d (call, result) pairs", i, len(msgs), i)
			continue
		}
		for k := 0; k < i; k++ {
			call, res := msgs[2*k], msgs[2*k+1]
			if call.Role != "assistant" || len(call.ToolCalls) != 1 || call.ToolCalls[0].ID != script[k].callID ||
				call.ToolCalls[0].Function.Name != script[k].tool || call.ToolCalls[0].Function.Arguments != script[k].args {
				t.Errorf("request %d: message %d %+v, want the call %+v", i, 2+2*k, call, script[k])
			}
			if res.Role != "tool" {
				t.Errorf("request %d: message %d has role %q, want tool", i, 3+2*k, res.Role)
			}
		}
		last := msgs[len(msgs)-1]
		checkToolResult(t, i, script[i-1], last.ToolCallID, last.text(), key)
	}
}

func checkAnthropicRequests(t *testing.T, reqs []fakeRequest, script []fakeStep, cwd, key, modelID string, thinking bool) {
	t.Helper()
	for i, fr := range reqs {
		if got := fr.Header.Get("x-api-key"); got != key {
			t.Errorf("request %d: x-api-key %q", i, got)
		}
		if fr.Header.Get("anthropic-version") == "" {
			t.Errorf("request %d: no anthropic-version header", i)
		}
		var req anRequest
		if err := json.Unmarshal(fr.Body, &req); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if req.Model != modelID || !req.Stream || req.MaxTokens <= 0 {
			t.Errorf("request %d: model %q, stream %v, max_tokens %d", i, req.Model, req.Stream, req.MaxTokens)
		}
		// Extended thinking, for a model known to reason, with the
		// medium budget and room for an answer beyond it.
		if !thinking && req.Thinking != nil {
			t.Errorf("request %d: thinking %+v for a model not known to reason", i, req.Thinking)
		}
		if thinking && (req.Thinking == nil || req.Thinking.Type != "enabled" || req.Thinking.BudgetTokens != 8192 || req.MaxTokens <= 8192) {
			t.Errorf("request %d: thinking %+v, max_tokens %d; want enabled with budget 8192 below max_tokens", i, req.Thinking, req.MaxTokens)
		}
		if len(req.System) != 1 || !strings.Contains(req.System[0].Text, "Working directory: "+cwd) {
			t.Errorf("request %d: the system prompt does not name the working directory %s: %+v", i, cwd, req.System)
		} else if req.System[0].CacheControl == nil || req.System[0].CacheControl.Type != "ephemeral" {
			t.Errorf("request %d: the system prompt has no cache_control", i)
		}
		var tools []schemaTool
		for k, tl := range req.Tools {
			tools = append(tools, schemaTool{tl.Name, tl.InputSchema})
			if last := k == len(req.Tools)-1; last != (tl.CacheControl != nil) {
				t.Errorf("request %d: tool %s (last: %v) has cache_control %v", i, tl.Name, last, tl.CacheControl)
			}
		}
		checkToolSchemas(t, tools, script)
		if len(req.Messages) != 1+2*i {
			t.Errorf("request %d: %d messages, want the prompt and %d (call, result) pairs:\n%s", i, len(req.Messages), i, fr.Body)
			continue
		}
		first := req.Messages[0]
		if first.Role != "user" || len(first.Content) == 0 || !strings.Contains(first.Content[len(first.Content)-1].Text, "fix the bug") {
			t.Errorf("request %d: first message %+v, want the user's prompt", i, first)
		}
		// Cache breakpoints: the newest message, so the next request of
		// the turn reads this one's prefix from the cache, and the message
		// the previous request ended with, where that request wrote its
		// entry; with system and tools, the API's limit of 4.
		var marked []int
		for k, m := range req.Messages {
			for _, b := range m.Content {
				if b.CacheControl != nil {
					marked = append(marked, k)
				}
			}
		}
		want := []int{len(req.Messages) - 1}
		if i > 0 {
			want = []int{len(req.Messages) - 3, len(req.Messages) - 1}
		}
		if !slices.Equal(marked, want) {
			t.Errorf("request %d: cache_control on messages %v, want %v", i, marked, want)
		}
		for k := 0; k < i; k++ {
			call, res := req.Messages[1+2*k], req.Messages[2+2*k]
			// The thinking block, with its signature, precedes the tool_use
			// it led to, as the API requires.
			if call.Role != "assistant" || len(call.Content) != 2 {
				t.Errorf("request %d: message %d %+v, want thinking and tool_use", i, 1+2*k, call)
				continue
			}
			th, use := call.Content[0], call.Content[1]
			if th.Type != "thinking" || th.Thinking == nil || *th.Thinking != anthropicThinking(script[k]) || th.Signature != anthropicSignature(script[k]) {
				t.Errorf("request %d: message %d block 0 %+v, want the thinking block with its signature", i, 1+2*k, th)
			}
			var gotIn, wantIn any
			json.Unmarshal(use.Input, &gotIn)
			json.Unmarshal([]byte(script[k].args), &wantIn)
			if use.Type != "tool_use" || use.ID != script[k].callID || use.Name != script[k].tool || fmt.Sprint(gotIn) != fmt.Sprint(wantIn) {
				t.Errorf("request %d: message %d block 1 %+v, want the call %+v", i, 1+2*k, use, script[k])
			}
			if res.Role != "user" || len(res.Content) == 0 || res.Content[0].Type != "tool_result" {
				t.Errorf("request %d: message %d %+v, want the tool result first", i, 2+2*k, res)
				continue
			}
			var text strings.Builder
			for _, c := range res.Content[0].Content {
				text.WriteString(c.Text)
			}
			if res.Content[0].IsError {
				t.Errorf("request %d: tool result %d is an error: %s", i, k, text.String())
			}
			if k == i-1 {
				checkToolResult(t, i, script[k], res.Content[0].ToolUseID, text.String(), key)
			}
		}
	}
}

// ---- raw-harness scenarios --------------------------------------------------------

// promptResult is the outcome of one session/prompt.
type promptResult struct {
	stopReason string
	err        *rpcError
	updates    []map[string]any // session/update "update" objects of the session
}

// text is the concatenated agent_message_chunk text.
func (r promptResult) text() string {
	var b strings.Builder
	for _, u := range r.updates {
		if u["sessionUpdate"] == "agent_message_chunk" {
			if c, ok := u["content"].(map[string]any); ok && c["type"] == "text" {
				b.WriteString(fmt.Sprint(c["text"]))
			}
		}
	}
	return b.String()
}

// kinds lists the sessionUpdate tags, in order.
func (r promptResult) kinds() []string {
	var out []string
	for _, u := range r.updates {
		out = append(out, fmt.Sprint(u["sessionUpdate"]))
	}
	return out
}

// sessionModel is the model config option's value in the last
// config_option_update of updates, or "".
func sessionModel(updates []map[string]any) string {
	model := ""
	for _, u := range updates {
		if u["sessionUpdate"] != "config_option_update" {
			continue
		}
		opts, _ := u["configOptions"].([]any)
		for _, o := range opts {
			if o, _ := o.(map[string]any); o["id"] == "model" {
				model = fmt.Sprint(o["currentValue"])
			}
		}
	}
	return model
}

// prompt sends one text prompt and collects the session's updates up to the
// reply.
func (p *proc) prompt(sid, text string) promptResult {
	p.tb.Helper()
	from := len(p.got)
	res, rerr := p.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	out := promptResult{err: rerr}
	if rerr == nil {
		var r struct {
			StopReason string `json:"stopReason"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			p.tb.Fatalf("session/prompt result %s: %v", res, err)
		}
		out.stopReason = r.StopReason
	}
	for _, l := range p.got[from:] {
		var m struct {
			Method string `json:"method"`
			Params struct {
				SessionID string         `json:"sessionId"`
				Update    map[string]any `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(l, &m) == nil && m.Method == "session/update" && m.Params.SessionID == sid {
			out.updates = append(out.updates, m.Params.Update)
		}
	}
	return out
}

// e2eProject makes a project directory with one file.
func e2eProject(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "project")
	writeFile(t, filepath.Join(dir, "main.txt"), mainBefore)
	return dir
}

// withEnv returns iso's environment plus kv.
func withEnv(iso *isolation, kv ...string) []string { return append(iso.Env(), kv...) }

// runCLIInput runs an acpd subcommand with stdin and returns its stderr and
// exit code.
func runCLIInput(t *testing.T, env []string, stdin string, args ...string) (string, int) {
	t.Helper()
	_, stderr, code := runCLIStdin(t, env, strings.NewReader(stdin), args...)
	return stderr, code
}

// TestE2ENoModelCodeCompanion: a CodeCompanion-shaped client (fs, no
// terminal, no login path) authenticates before session/new with no key
// anywhere: authenticate succeeds, the session exists and its model
// selector says what to do, and the first prompt's answer says it too
// (acpd login, the variables), as the agent's message every editor shows.
func TestE2ENoModelCodeCompanion(t *testing.T) {
	t.Parallel()
	iso := newIsolation(t)
	project := e2eProject(t)
	p := startProc(t, withEnv(iso, "ACPD_DISCOVER=0"))
	p.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]any{"name": "CodeCompanion.nvim", "version": "19.22.0"},
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}}}, nil)
	if res, rerr := p.call("authenticate", map[string]any{"methodId": "acpd-env"}); rerr != nil {
		t.Fatalf("authenticate without a key: %v (%s); want success, the session says what to do", rerr, res)
	}
	var created struct {
		SessionID     string `json:"sessionId"`
		ConfigOptions []struct {
			ID           string          `json:"id"`
			CurrentValue string          `json:"currentValue"`
			Options      json.RawMessage `json:"options"`
		} `json:"configOptions"`
	}
	p.mustCall("session/new", map[string]any{"cwd": project, "mcpServers": []any{}}, &created)
	found := false
	for _, o := range created.ConfigOptions {
		if o.ID == "model" {
			found = true
			if o.CurrentValue != "none" || !strings.Contains(string(o.Options), "acpd login") {
				t.Errorf("model option without a model: %s %s", o.CurrentValue, o.Options)
			}
		}
	}
	if !found {
		t.Fatal("no model config option")
	}
	r := p.prompt(created.SessionID, "hello")
	for _, want := range []string{"acpd login", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
		if !strings.Contains(r.text(), want) {
			t.Errorf("the first answer %q does not say %q", r.text(), want)
		}
	}
	p.close()
}

// TestE2EZeroConfigLogin: with no key, no model and discovery off, a prompt
// fails with ACP's auth-required error naming the variables to set; `acpd
// login` then stores a key (0600), ACP authenticate picks it up in the
// running process, and a new process uses it too.
func TestE2EZeroConfigLogin(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t, true)
	const key = "sk-e2e-login-SECRET-0b7d41e3"
	srv := newFakeProvider(t, "openai", key, nil, fakeStep{text: "Hello from the stored key."})
	iso := newIsolation(t)
	project := e2eProject(t)
	env := withEnv(iso, "ACPD_DISCOVER=0", "OPENAI_BASE_URL="+srv.srv.URL+"/v1")

	p := startProc(t, env)
	// A client that can run acpd login (Zed's terminal auth): the auth
	// errors are for it.
	p.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"_meta": map[string]any{"terminal-auth": true}}}, nil)
	sid := p.newSession(project)
	r := p.prompt(sid, "hi")
	if r.err == nil {
		t.Fatalf("a prompt without any model succeeded (stop reason %q)", r.stopReason)
	}
	if r.err.Code != -32000 {
		t.Errorf("error code %d, want -32000 (auth required): %s", r.err.Code, r.err.Message)
	}
	for _, v := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY"} {
		if !strings.Contains(r.err.Message, v) {
			t.Errorf("the error %q does not name %s", r.err.Message, v)
		}
	}
	if res, rerr := p.call("authenticate", map[string]any{"methodId": "acpd-env"}); rerr == nil || rerr.Code != -32000 {
		t.Errorf("authenticate without any key: %s, %v; want the auth-required error", res, rerr)
	}
	if n := len(srv.requests()); n != 0 {
		t.Errorf("the model server got %d requests without a key", n)
	}

	// acpd login, answering its two questions on stdin.
	errOut, code := runCLIInput(t, iso.Env(), "openai\n"+key+"\n", "login")
	if code != 0 {
		t.Fatalf("acpd login: exit %d: %s", code, errOut)
	}
	if strings.Contains(errOut, key) {
		t.Errorf("acpd login echoed the key: %s", errOut)
	}
	credPath := filepath.Join(iso.Config, "acpd", "credentials.json")
	st, err := os.Stat(credPath)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", credPath, st.Mode().Perm())
	}

	// The running process picks the stored key up on authenticate; the
	// session created before has the default model from then on.
	p.mustCall("authenticate", map[string]any{"methodId": "acpd-env"}, nil)
	r = p.prompt(sid, "hi again")
	if r.err != nil || r.stopReason != "end_turn" || r.text() != "Hello from the stored key." {
		t.Errorf("prompt after login and authenticate: %v, stop %q, text %q", r.err, r.stopReason, r.text())
	}
	// The client learns the session's model.
	if m := sessionModel(r.updates); !strings.HasPrefix(m, "openai/") {
		t.Errorf("the session's model after authenticate is %q (updates %v), want openai's default", m, r.kinds())
	}
	p.close()
	p.validate(schema, true)

	// A new process with only OPENAI_BASE_URL set uses the stored key.
	p2 := startProc(t, env)
	p2.initialize()
	r = p2.prompt(p2.newSession(project), "hello")
	if r.err != nil || r.stopReason != "end_turn" || r.text() != "Hello from the stored key." {
		t.Errorf("prompt in a new process: %v, stop %q, text %q", r.err, r.stopReason, r.text())
	}
	p2.close()
	p2.validate(schema, true)
	if n := len(srv.requests()); n < 2 {
		t.Errorf("the model server got %d requests, want one per successful prompt", n)
	}
	for _, fr := range srv.requests() {
		if got := fr.Header.Get("Authorization"); got != "Bearer "+key {
			t.Errorf("Authorization %q, want the stored key", got)
		}
	}
	if strings.Contains(p.stderr.String()+p2.stderr.String(), key) {
		t.Errorf("the stored key appears in acpd's log")
	}
	checkSecretAbsent(t, key, iso.State)
}

// TestE2EDiscoverOllamaHost: no key, no model, discovery on, OLLAMA_HOST
// names a fake OpenAI-compatible server: acpd lists its models and a prompt
// works with no --model.
func TestE2EDiscoverOllamaHost(t *testing.T) {
	t.Parallel()
	srv := newFakeProvider(t, "openai", "", nil, fakeStep{text: "Hello from the local model."})
	srv.setModels(0, "qwen-e2e:8b")
	iso := newIsolation(t)
	host := strings.TrimPrefix(srv.srv.URL, "http://")
	r, p := discoverTurn(t, withEnv(iso, "OLLAMA_HOST="+host))
	if r.err != nil || r.stopReason != "end_turn" || r.text() != "Hello from the local model." {
		t.Errorf("prompt: %v, stop %q, text %q\nstderr:\n%s", r.err, r.stopReason, r.text(), p.stderr.String())
	}
	checkDiscoveredModel(t, srv, "qwen-e2e:8b")
}

// TestE2EDiscoverProbe: with nothing configured, acpd probes Ollama's port
// on the loopback interface. It runs only when 127.0.0.1:11434 is free.
func TestE2EDiscoverProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:11434")
	if err != nil {
		t.Skipf("127.0.0.1:11434 is taken: %v", err)
	}
	srv := newFakeProvider(t, "openai", "", l, fakeStep{text: "Hello from the probed model."})
	srv.setModels(0, "llama-e2e")
	r, p := discoverTurn(t, newIsolation(t).Env())
	if r.err != nil || r.stopReason != "end_turn" || r.text() != "Hello from the probed model." {
		t.Errorf("prompt: %v, stop %q, text %q\nstderr:\n%s", r.err, r.stopReason, r.text(), p.stderr.String())
	}
	checkDiscoveredModel(t, srv, "llama-e2e")
}

// discoverTurn runs one prompt in an acpd process started with env and no
// model.
func discoverTurn(t *testing.T, env []string) (promptResult, *proc) {
	t.Helper()
	p := startProc(t, env)
	p.initialize()
	r := p.prompt(p.newSession(e2eProject(t)), "hi")
	p.close()
	p.validate(loadSchema(t, true), true)
	return r, p
}

// checkDiscoveredModel checks that acpd listed the server's models and
// asked for the first one.
func checkDiscoveredModel(t *testing.T, srv *fakeProvider, id string) {
	t.Helper()
	srv.mu.Lock()
	listed := slices.ContainsFunc(srv.reqs, func(r fakeRequest) bool { return r.Method == http.MethodGet && r.Path == "/v1/models" })
	srv.mu.Unlock()
	if !listed {
		t.Errorf("acpd did not list the server's models")
	}
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("the server got %d model requests, want 1", len(reqs))
	}
	var req oaRequest
	if err := json.Unmarshal(reqs[0].Body, &req); err != nil {
		t.Fatal(err)
	}
	if req.Model != id {
		t.Errorf("model %q, want the discovered %q", req.Model, id)
	}
}

// TestE2EExecPlugin drives a whole turn through the example plug-in
// (testdata/plugins/echo_plugin.py) configured as a provider: the plug-in
// calls list_dir, acpd runs it, the plug-in answers with the result.
func TestE2EExecPlugin(t *testing.T) {
	t.Parallel()
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is missing (CI=true)")
		}
		t.Skip("python3 is missing")
	}
	plugin, err := filepath.Abs(filepath.Join("..", "..", "testdata", "plugins", "echo_plugin.py"))
	if err != nil {
		t.Fatal(err)
	}
	iso := newIsolation(t)
	cmd, _ := json.Marshal([]string{python, plugin})
	iso.writeUserConfig(t, fmt.Sprintf("model = \"echo/echo\"\n\n[providers.echo]\ndialect = \"exec\"\ncommand = %s\n", cmd))
	project := e2eProject(t)
	writeFile(t, filepath.Join(project, "src", "lib.go"), "package src\n")

	p := startProc(t, withEnv(iso, "ACPD_DISCOVER=0", "ACPD_LOG_LEVEL=debug"))
	p.initialize()
	sid := p.newSession(project)
	r := p.prompt(sid, `use tool list_dir {"path":"."}`)
	if r.err != nil || r.stopReason != "end_turn" {
		t.Fatalf("prompt: %v, stop %q\nstderr:\n%s", r.err, r.stopReason, p.stderr.String())
	}
	text := r.text()
	if !strings.HasPrefix(text, "Tool said: ") || !strings.Contains(text, "main.txt") || !strings.Contains(text, "src") {
		t.Errorf("answer %q, want the plug-in's report of the list_dir result naming main.txt and src", text)
	}
	var call, status string
	for _, u := range r.updates {
		if u["sessionUpdate"] == "tool_call" {
			call = fmt.Sprint(u["toolCallId"])
			if u["kind"] != "read" {
				t.Errorf("list_dir tool_call kind %v, want read", u["kind"])
			}
		}
		if id, _ := u["toolCallId"].(string); id == call && call != "" && u["status"] != nil {
			status = fmt.Sprint(u["status"])
		}
	}
	if !strings.HasPrefix(call, "call_") || status != "completed" {
		t.Errorf("list_dir call %q ended %q, want completed; updates %v", call, status, r.kinds())
	}
	// A plain prompt gets the echo.
	if r := p.prompt(sid, "hello plug-in"); r.err != nil || r.text() != "You said: hello plug-in" {
		t.Errorf("second prompt: %v, text %q", r.err, r.text())
	}
	p.close()
	p.validate(loadSchema(t, true), true)
	if !strings.Contains(p.stderr.String(), "echo plug-in serving acpd") {
		t.Errorf("the plug-in's stderr did not reach acpd's debug log:\n%s", p.stderr.String())
	}
}

// TestE2ERetry: the first request is answered 429 with retry-after-ms; acpd
// retries silently and the turn succeeds with a single answer.
func TestE2ERetry(t *testing.T) {
	t.Parallel()
	const key = "sk-e2e-retry-SECRET-91ac3f0e"
	srv := newFakeProvider(t, "openai", key, nil, fakeStep{text: "Answer after the retry."})
	srv.failNext(fakeFailure{status: http.StatusTooManyRequests, header: map[string]string{"retry-after-ms": "10", "x-ratelimit-remaining-requests": "0"},
		body: `{"error":{"message":"Rate limit reached for gpt-test in organization org-e2e on requests per min (RPM): Limit 3, Used 3, Requested 1.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`})
	iso := newIsolation(t)
	p := startProc(t, withEnv(iso, "ACPD_DISCOVER=0", "OPENAI_API_KEY="+key, "OPENAI_BASE_URL="+srv.srv.URL+"/v1"), "--model", "openai/gpt-test")
	p.initialize()
	r := p.prompt(p.newSession(e2eProject(t)), "hi")
	p.close()
	p.validate(loadSchema(t, true), true)
	if r.err != nil || r.stopReason != "end_turn" {
		t.Fatalf("prompt: %v, stop %q\nstderr:\n%s", r.err, r.stopReason, p.stderr.String())
	}
	if got := r.text(); got != "Answer after the retry." {
		t.Errorf("answer %q, want it once", got)
	}
	msgIDs := map[any]bool{}
	for _, u := range r.updates {
		if u["sessionUpdate"] == "agent_message_chunk" {
			msgIDs[u["messageId"]] = true
		}
	}
	if len(msgIDs) != 1 {
		t.Errorf("%d agent messages, want 1", len(msgIDs))
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("the server got %d requests, want the failed one and its retry", len(reqs))
	}
	if !bytes.Equal(reqs[0].Body, reqs[1].Body) {
		t.Errorf("the retry sent another body:\n%s\n%s", reqs[0].Body, reqs[1].Body)
	}
	if strings.Contains(p.stderr.String(), key) {
		t.Errorf("the key appears in acpd's log")
	}
}

// TestE2EConcurrentAuthenticate: authenticate re-reads the keys and looks
// for the default model again, which may take a while (here the model list
// of OLLAMA_HOST answers slowly); concurrent authenticate requests, and
// session/new requests racing them, must all get a consistent answer and
// acpd must survive.
func TestE2EConcurrentAuthenticate(t *testing.T) {
	t.Parallel()
	srv := newFakeProvider(t, "openai", "", nil, fakeStep{text: "Hello."})
	srv.setModels(200*time.Millisecond, "slow-e2e")
	iso := newIsolation(t)
	p := startProc(t, withEnv(iso, "OLLAMA_HOST="+strings.TrimPrefix(srv.srv.URL, "http://")))
	p.initialize()
	project := e2eProject(t)
	var ids []string
	for range 3 {
		ids = append(ids, p.request("authenticate", map[string]any{"methodId": "acpd-env"}))
		ids = append(ids, p.request("session/new", map[string]any{"cwd": project, "mcpServers": []any{}}))
	}
	for _, id := range ids {
		if m := p.reply(id); m.Error != nil {
			t.Errorf("request %s: %v", id, m.Error)
		}
	}
	r := p.prompt(p.newSession(project), "hi")
	if r.err != nil || r.text() != "Hello." {
		t.Errorf("prompt: %v, text %q", r.err, r.text())
	}
	p.close()
	p.validate(loadSchema(t, true), true)
}

// loginAdviceRE finds the command an error message tells the user to run.
var loginAdviceRE = regexp.MustCompile("`(acpd login [^`]*)`")

// TestE2ELoginAdvice: a model whose provider has no key fails with advice
// to run `acpd login PROVIDER`; running exactly that (for a built-in and
// for a provider of the configuration file) stores the key, and after ACP
// authenticate the same session works.
func TestE2ELoginAdvice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, model string }{
		{"builtin", "openai/gpt-test"},
		{"configured", "corp/gpt-corp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			key := "sk-e2e-advice-SECRET-" + tc.name
			srv := newFakeProvider(t, "openai", key, nil, fakeStep{text: "Logged in."})
			iso := newIsolation(t)
			iso.writeUserConfig(t, fmt.Sprintf("[providers.corp]\ndialect = \"openai\"\nbase_url = %q\napi_key_env = \"CORP_TOKEN\"\n", srv.srv.URL+"/v1"))
			p := startProc(t, withEnv(iso, "ACPD_DISCOVER=0", "OPENAI_BASE_URL="+srv.srv.URL+"/v1"), "--model", tc.model)
			p.initialize()
			sid := p.newSession(e2eProject(t))
			r := p.prompt(sid, "hi")
			if r.err == nil || r.err.Code != -32000 {
				t.Fatalf("prompt without a key: %v, stop %q; want the auth-required error", r.err, r.stopReason)
			}
			m := loginAdviceRE.FindStringSubmatch(r.err.Message)
			if m == nil {
				t.Fatalf("the error %q gives no `acpd login` advice", r.err.Message)
			}
			args := strings.Fields(m[1])[1:]
			// Before the login the built-in provider, pointed at a
			// compatible server by OPENAI_BASE_URL, asked it without a key
			// (no Authorization at all); the server refused.
			for _, fr := range srv.requests() {
				if got := fr.Header.Get("Authorization"); got != "" {
					t.Errorf("Authorization %q before the login, want none", got)
				}
			}
			before := len(srv.requests())
			if errOut, code := runCLIInput(t, iso.Env(), key+"\n", args...); code != 0 {
				t.Fatalf("the advised %q: exit %d: %s", m[1], code, errOut)
			}
			p.mustCall("authenticate", map[string]any{"methodId": "acpd-env"}, nil)
			r = p.prompt(sid, "hi again")
			if r.err != nil || r.text() != "Logged in." {
				t.Errorf("prompt after %q: %v, text %q", m[1], r.err, r.text())
			}
			p.close()
			p.validate(loadSchema(t, true), true)
			for _, fr := range srv.requests()[before:] {
				if got := fr.Header.Get("Authorization"); got != "Bearer "+key {
					t.Errorf("Authorization %q, want the stored key", got)
				}
			}
		})
	}
}

// TestE2ELoginWithoutAuthenticate: Zed's terminal auth runs `acpd login`
// as a process of its own and goes on with the same connection without
// calling authenticate. The running acpd sees the stored key on the next
// session/new and on a prompt of a session that has no model (it tells
// the client the session's model with a config_option_update), and a
// client advertising _meta["terminal-auth"] is told the command to run.
func TestE2ELoginWithoutAuthenticate(t *testing.T) {
	t.Parallel()
	const key = "sk-e2e-termauth-SECRET-5c1e"
	srv := newFakeProvider(t, "openai", key, nil, fakeStep{text: "Hello after login."})
	iso := newIsolation(t)
	project := e2eProject(t)
	env := withEnv(iso, "ACPD_DISCOVER=0", "OPENAI_BASE_URL="+srv.srv.URL+"/v1")

	p := startProc(t, env)
	var init struct {
		AuthMethods []map[string]any `json:"authMethods"`
	}
	// Zed: it offers terminal login and renders grouped selectors.
	p.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientInfo": map[string]any{"name": "zed", "version": "0.220.0"},
		"clientCapabilities": map[string]any{"_meta": map[string]any{"terminal-auth": true}}}, &init)
	var ta map[string]any
	for _, m := range init.AuthMethods {
		if meta, ok := m["_meta"].(map[string]any); ok {
			ta, _ = meta["terminal-auth"].(map[string]any)
		}
	}
	if ta == nil || ta["command"] != acpdBinary(t) || fmt.Sprint(ta["args"]) != "[login]" || ta["label"] == "" {
		t.Errorf("auth methods %v: want _meta.terminal-auth running %s login", init.AuthMethods, acpdBinary(t))
	}
	type selectOpts struct {
		ID           string          `json:"id"`
		CurrentValue string          `json:"currentValue"`
		Options      json.RawMessage `json:"options"`
	}
	newSession := func() (string, map[string]selectOpts) {
		var r struct {
			SessionID     string       `json:"sessionId"`
			ConfigOptions []selectOpts `json:"configOptions"`
		}
		p.mustCall("session/new", map[string]any{"cwd": project, "mcpServers": []any{}}, &r)
		opts := map[string]selectOpts{}
		for _, o := range r.ConfigOptions {
			opts[o.ID] = o
		}
		return r.SessionID, opts
	}
	before, opts := newSession()
	// Without a model the selector says what to do.
	if m := opts["model"]; m.CurrentValue != "none" || !strings.Contains(string(m.Options), "acpd login") {
		t.Errorf("model selector without a model: %+v", m)
	}

	// acpd login without a terminal: provider and key on stdin.
	if errOut, code := runCLIInput(t, iso.Env(), key+"\n", "login", "openai"); code != 0 {
		t.Fatalf("acpd login: exit %d: %s", code, errOut)
	}

	// The session created before has no model: its next prompt finds the
	// stored key, and the client learns the model.
	r := p.prompt(before, "hi")
	if r.err != nil || r.stopReason != "end_turn" || r.text() != "Hello after login." {
		t.Fatalf("prompt after login: %v, stop %q, text %q", r.err, r.stopReason, r.text())
	}
	if m := sessionModel(r.updates); !strings.HasPrefix(m, "openai/") {
		t.Errorf("the session's model after login is %q (updates %v), want openai's default", m, r.kinds())
	}
	// A new session has the model from the start, in a selector grouped
	// by provider whose values stay provider/model.
	after, opts := newSession()
	var groups []struct {
		Group   string `json:"group"`
		Name    string `json:"name"`
		Options []struct {
			Value string `json:"value"`
			Name  string `json:"name"`
		} `json:"options"`
	}
	if m := opts["model"]; json.Unmarshal(m.Options, &groups) != nil || len(groups) == 0 || len(groups[0].Options) == 0 ||
		groups[0].Group != "openai" || groups[0].Name != "OpenAI" || !strings.HasPrefix(m.CurrentValue, "openai/") ||
		!strings.HasPrefix(groups[0].Options[0].Value, "openai/") {
		t.Errorf("model selector after login: %s %s", m.CurrentValue, m.Options)
	}
	r = p.prompt(after, "hello")
	if r.err != nil || r.stopReason != "end_turn" || r.text() != "Hello after login." {
		t.Errorf("prompt in a session created after login: %v, stop %q, text %q", r.err, r.stopReason, r.text())
	}
	p.close()
}
