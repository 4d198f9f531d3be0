//lint:file-ignore SA1019 MCP sampling is deprecated by SEP-2577 but acpd serves it through the deprecation window

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"acpd/acp"
	"acpd/model"
	"acpd/model/anthropic"
)

// An MCP server's sampling request is answered by the session's model once
// the user allows it: "always for this server" stops the asking, and a
// rejection fails the server's request.
func TestMCPSampling(t *testing.T) {
	env := newEnv(t, "")
	var mu sync.Mutex
	var sampled []*model.Request
	main := toolSeq(
		toolCallReq{"mcp__everything__trigger-sampling-request", map[string]any{"prompt": "name a colour", "maxTokens": 20}},
		toolCallReq{"mcp__everything__trigger-sampling-request", map[string]any{"prompt": "and another", "maxTokens": 20}},
	)
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		if len(req.Tools) == 0 && req.MaxOutputTokens > 0 { // the server's sampling request
			mu.Lock()
			sampled = append(sampled, req)
			mu.Unlock()
			_ = yield(model.Event{Type: model.EventText, Text: "teal"}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
			return
		}
		main(ctx, req, yield)
	}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	var asked []acp.RequestPermissionRequest
	c.setPerm(func(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
		mu.Lock()
		asked = append(asked, req)
		mu.Unlock()
		for _, o := range req.Options {
			if o.OptionID == "allow_server" || (o.Kind == acp.PermissionOptionKindAllowOnce && !strings.HasPrefix(string(req.ToolCall.ToolCallID), "sample_")) {
				return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.SelectedPermissionOutcome{OptionID: o.OptionID}}}, nil
			}
		}
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
	})
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{everythingServer(t)}}, &resp); err != nil {
		t.Fatal(err)
	}
	c.mustPrompt(resp.SessionID, "sample twice", acp.StopReasonEndTurn)

	res := toolResults(rec.last(t))
	if len(res) != 2 {
		t.Fatalf("tool results = %+v", res)
	}
	for _, r := range res {
		if r.IsError || !strings.Contains(resultText(r), "teal") {
			t.Errorf("tool result = %+v", r)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sampled) != 2 || sampled[0].MaxOutputTokens != 20 || !strings.Contains(sampled[0].Messages[0].Text(), "name a colour") {
		t.Errorf("sampling requests = %+v", sampled)
	}
	var sampleAsks int
	for _, a := range asked {
		if strings.HasPrefix(string(a.ToolCall.ToolCallID), "sample_") {
			sampleAsks++
			if len(a.Options) != 3 {
				t.Errorf("sampling options = %+v", a.Options)
			}
		}
	}
	if sampleAsks != 1 {
		t.Errorf("asked %d times about sampling, want once (then always for this server)", sampleAsks)
	}
}

// A rejected sampling request never reaches the model, and the server's
// request fails.
func TestMCPSamplingRejected(t *testing.T) {
	env := newEnv(t, "")
	var mu sync.Mutex
	sampled := 0
	main := toolSeq(toolCallReq{"mcp__everything__trigger-sampling-request", map[string]any{"prompt": "secret stuff", "maxTokens": 20}})
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		if len(req.Tools) == 0 && req.MaxOutputTokens > 0 {
			mu.Lock()
			sampled++
			mu.Unlock()
		}
		main(ctx, req, yield)
	}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	c.setPerm(func(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
		want := acp.PermissionOptionKindAllowOnce
		if strings.HasPrefix(string(req.ToolCall.ToolCallID), "sample_") {
			want = acp.PermissionOptionKindRejectOnce
		}
		return choose(want)(ctx, req)
	})
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{everythingServer(t)}}, &resp); err != nil {
		t.Fatal(err)
	}
	c.mustPrompt(resp.SessionID, "sample", acp.StopReasonEndTurn)
	res := toolResults(rec.last(t))
	if len(res) != 1 || !strings.Contains(resultText(res[0]), "did not allow sampling") {
		t.Errorf("tool result = %+v, want the server to report the refusal", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if sampled != 0 {
		t.Errorf("the model was sampled %d times after a rejection", sampled)
	}
}

// sseBlock is one content block of a fake Anthropic Messages stream: text,
// or a tool use when name is set.
type sseBlock struct{ text, id, name, input string }

// writeAnthropic answers with a Messages API event stream of blocks.
func writeAnthropic(w http.ResponseWriter, blocks ...sseBlock) {
	w.Header().Set("Content-Type", "text/event-stream")
	ev := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "content": []any{}, "model": "claude-test", "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
	stop := "end_turn"
	for i, bl := range blocks {
		if bl.name != "" {
			stop = "tool_use"
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": bl.id, "name": bl.name, "input": map[string]any{}}})
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": bl.input}})
		} else {
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": bl.text}})
		}
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": 5}})
	ev("message_stop", map[string]any{"type": "message_stop"})
}

// TestMCPSamplingWithTools: a go-sdk server's tool runs an agent loop on
// the session's model through sampling with its own tool get_weather. The
// model (an Anthropic Messages API fake over HTTP) gets exactly the
// server's tool, not acpd's; its tool_use goes back to the server, which
// runs it and samples again with the tool_result; the user consented once
// for the server.
func TestMCPSamplingWithTools(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "forecast", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			msgs := []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "Weather in Oslo?"}}}}
			tools := []*mcp.Tool{{Name: "get_weather", Description: "weather of a city", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}}
			for range 3 {
				r, err := req.Session.CreateMessageWithTools(ctx, &mcp.CreateMessageWithToolsParams{MaxTokens: 64, Messages: msgs, Tools: tools})
				if err != nil {
					return nil, err
				}
				var use *mcp.ToolUseContent
				for _, c := range r.Content {
					if u, ok := c.(*mcp.ToolUseContent); ok {
						use = u
					}
				}
				if r.StopReason != "toolUse" || use == nil {
					text := ""
					for _, c := range r.Content {
						if tc, ok := c.(*mcp.TextContent); ok {
							text += tc.Text
						}
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "forecast: " + text}}}, nil
				}
				msgs = append(msgs, &mcp.SamplingMessageV2{Role: "assistant", Content: []mcp.Content{use}},
					&mcp.SamplingMessageV2{Role: "user", Content: []mcp.Content{&mcp.ToolResultContent{ToolUseID: use.ID,
						Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("snow in %v", use.Input["city"])}}}}})
			}
			return nil, errors.New("no answer after three rounds")
		})
	// Closed after the session (cleanups run last first), whose client
	// holds a stream open.
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)

	type wireReq struct {
		System   any `json:"system"`
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		MaxTokens int `json:"max_tokens"`
	}
	var mu sync.Mutex
	var sampled []wireReq
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req wireReq
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		last := req.Messages[len(req.Messages)-1]
		answered := strings.Contains(string(last.Content[len(last.Content)-1]), `"tool_result"`)
		if len(req.Tools) == 1 && req.Tools[0].Name == "get_weather" { // the server's sampling
			mu.Lock()
			sampled = append(sampled, req)
			mu.Unlock()
			if answered {
				writeAnthropic(w, sseBlock{text: "Snowing in Oslo."})
			} else {
				writeAnthropic(w, sseBlock{id: "toolu_w1", name: "get_weather", input: `{"city":"Oslo"}`})
			}
			return
		}
		if answered {
			writeAnthropic(w, sseBlock{text: "done"})
		} else {
			writeAnthropic(w, sseBlock{id: "toolu_m1", name: "mcp__weather__forecast", input: `{}`})
		}
	}))
	t.Cleanup(api.Close)

	env := newEnv(t, "")
	backend := anthropic.New(anthropic.Options{HTTPOptions: model.HTTPOptions{BaseURL: api.URL, APIKey: "k", HTTPClient: api.Client()}})
	rec := record(backend)
	env.setModel(mainModel, rec)
	c := env.start(nil)
	var asks int
	c.setPerm(func(ctx context.Context, req acp.RequestPermissionRequest) (any, error) {
		if strings.HasPrefix(string(req.ToolCall.ToolCallID), "sample_") {
			mu.Lock()
			asks++
			mu.Unlock()
			return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.SelectedPermissionOutcome{OptionID: "allow_server"}}}, nil
		}
		return choose(acp.PermissionOptionKindAllowOnce)(ctx, req)
	})
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{{HTTP: &acp.McpServerHTTP{Name: "weather", URL: hs.URL, Headers: []acp.HTTPHeader{}}}}}, &resp); err != nil {
		t.Fatal(err)
	}
	c.mustPrompt(resp.SessionID, "forecast please", acp.StopReasonEndTurn)

	res := toolResults(rec.last(t))
	if len(res) != 1 || res[0].IsError || resultText(res[0]) != "forecast: Snowing in Oslo." {
		t.Fatalf("tool results = %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sampled) != 2 || asks != 1 {
		t.Fatalf("sampled %d times, asked %d times; want 2 and 1", len(sampled), asks)
	}
	if s := sampled[0]; !strings.Contains(string(s.Tools[0].InputSchema), `"city"`) || s.MaxTokens != 64 || len(s.Messages) != 1 {
		t.Errorf("first sampling request = %+v", s)
	}
	second := sampled[1]
	if len(second.Messages) != 3 {
		t.Fatalf("second sampling request's messages = %+v", second.Messages)
	}
	use, result := string(second.Messages[1].Content[0]), string(second.Messages[2].Content[0])
	if !strings.Contains(use, `"type":"tool_use"`) || !strings.Contains(use, `"id":"toolu_w1"`) || !strings.Contains(use, `"city":"Oslo"`) {
		t.Errorf("tool use sent back = %s", use)
	}
	if !strings.Contains(result, `"type":"tool_result"`) || !strings.Contains(result, `"tool_use_id":"toolu_w1"`) || !strings.Contains(result, "snow in Oslo") {
		t.Errorf("tool result sent = %s", result)
	}
}
