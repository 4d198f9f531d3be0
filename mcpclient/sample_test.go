// This file is only about MCP sampling, which SEP-2577 deprecates; acpd
// serves it through the deprecation window.
//
//lint:file-ignore SA1019 MCP sampling is deprecated by SEP-2577 but acpd serves it through the deprecation window

package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// weatherTools are the server's own tools a sampling request offers.
var weatherTools = []*mcp.Tool{{Name: "get_weather", Description: "the weather in a city",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}}

// weatherRound is the sampling request of one round of the weather agent:
// the question, then the model's tool use and the server's result, if any.
func weatherRound(use *mcp.ToolUseContent) *mcp.CreateMessageWithToolsParams {
	p := &mcp.CreateMessageWithToolsParams{MaxTokens: 100, Tools: weatherTools, ToolChoice: &mcp.ToolChoice{Mode: "auto"},
		Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "Weather in Paris?"}}}}}
	if use != nil {
		city, _ := use.Input["city"].(string)
		p.Messages = append(p.Messages,
			&mcp.SamplingMessageV2{Role: "assistant", Content: []mcp.Content{use}},
			&mcp.SamplingMessageV2{Role: "user", Content: []mcp.Content{&mcp.ToolResultContent{ToolUseID: use.ID,
				Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + city}}}}})
	}
	return p
}

// toolUse is the single tool use of a sampling result, or nil.
func toolUse(r *mcp.CreateMessageWithToolsResult) *mcp.ToolUseContent {
	for _, c := range r.Content {
		if u, ok := c.(*mcp.ToolUseContent); ok {
			return u
		}
	}
	return nil
}

func resultText(r *mcp.CreateMessageWithToolsResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// weatherServer is a Go SDK server whose tool "agent" runs an agent loop
// on the client's model through sampling with tools: it asks, executes the
// model's get_weather call itself and asks again with the result. In the
// 2025-11-25 era it sends sampling/createMessage requests; in 2026-07-28 it
// returns input_required rounds.
func weatherServer(t *testing.T, stateless bool) string {
	versions := []string{ProtocolLegacy}
	if stateless {
		versions = []string{ProtocolStateless}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: versions})
	srv.AddTool(&mcp.Tool{Name: "agent", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			text := func(s string) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, nil
			}
			if stateless {
				in := req.Params.InputResponses
				switch req.Params.RequestState {
				case "":
					return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s1": weatherRound(nil)}, RequestState: "1"}, nil
				case "1":
					r, ok := in["s1"].(*mcp.CreateMessageWithToolsResult)
					if !ok || r.StopReason != "toolUse" || toolUse(r) == nil {
						return text(fmt.Sprintf("round 1: %T %+v", in["s1"], in["s1"]))
					}
					return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s2": weatherRound(toolUse(r))}, RequestState: "2"}, nil
				default:
					r, ok := in["s2"].(*mcp.CreateMessageWithToolsResult)
					if !ok {
						return text(fmt.Sprintf("round 2: %T", in["s2"]))
					}
					return text("final: " + resultText(r))
				}
			}
			caps := req.Session.InitializeParams().Capabilities
			if caps == nil || caps.Sampling == nil || caps.Sampling.Tools == nil {
				return text("the client offers no sampling with tools")
			}
			r, err := req.Session.CreateMessageWithTools(ctx, weatherRound(nil))
			if err != nil {
				return text("round 1 failed: " + err.Error())
			}
			if r.StopReason != "toolUse" || toolUse(r) == nil {
				return text(fmt.Sprintf("round 1: no tool use: %+v", r))
			}
			r, err = req.Session.CreateMessageWithTools(ctx, weatherRound(toolUse(r)))
			if err != nil {
				return text("round 2 failed: " + err.Error())
			}
			return text("final: " + resultText(r))
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// weatherModel plays the model: it calls get_weather until it sees the
// result, then answers with it. It hands each request over on got.
func weatherModel(got chan<- SampleRequest) func(context.Context, string, SampleRequest) (SampleResult, error) {
	return func(_ context.Context, _ string, req SampleRequest) (SampleResult, error) {
		select {
		case got <- req:
		default: // more requests than the test expects: it fails on the count
		}
		last := req.Messages[len(req.Messages)-1].Content[0]
		if last.Type == ContentToolResult {
			return SampleResult{Text: "It is " + last.Result[0].Text + ".", Model: "m", StopReason: "endTurn"}, nil
		}
		return SampleResult{ToolUses: []SampleToolUse{{ID: "call_1", Name: "get_weather", Input: json.RawMessage(`{"city":"Paris"}`)}}, Model: "m"}, nil
	}
}

// TestSamplingWithTools: a server's sampling requests with its own tools
// reach Options.Sample with the tools, tool choice, tool use and tool
// result; the model's tool call goes back as the answer (stopReason
// toolUse) for the server to run, in both protocol eras.
func TestSamplingWithTools(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			url := weatherServer(t, stateless)
			got := make(chan SampleRequest, 3)
			m := newTestManager(t, Options{Sample: weatherModel(got), SampleTools: true})
			startOK(t, m, Server{Name: "w", URL: url, Transport: TransportHTTP})
			res := call(t, m, "mcp__w__agent", `{}`)
			if res.IsError || res.Text != "final: It is sunny in Paris." {
				t.Fatalf("result = %+v", res)
			}
			m.Close() // before the server closes
			close(got)
			var reqs []SampleRequest
			for r := range got {
				reqs = append(reqs, r)
			}
			if len(reqs) != 2 {
				t.Fatalf("sampled %d times, want 2", len(reqs))
			}
			first, second := reqs[0], reqs[1]
			if len(first.Tools) != 1 || slices.IndexFunc(first.Tools, func(st SampleTool) bool { return st.Name == "get_weather" }) != 0 || !strings.Contains(string(first.Tools[0].InputSchema), `"city"`) || first.ToolChoice != ToolChoiceAuto {
				t.Errorf("first request's tools = %+v, choice %q", first.Tools, first.ToolChoice)
			}
			if len(second.Messages) != 3 {
				t.Fatalf("second request = %+v", second.Messages)
			}
			use, result := second.Messages[1].Content[0], second.Messages[2].Content[0]
			if use.Type != ContentToolUse || use.ToolUseID != "call_1" || use.ToolName != "get_weather" || string(use.Input) != `{"city":"Paris"}` {
				t.Errorf("tool use = %+v", use)
			}
			if result.Type != ContentToolResult || result.ToolUseID != "call_1" || len(result.Result) != 1 || result.Result[0].Text != "sunny in Paris" {
				t.Errorf("tool result = %+v", result)
			}
		})
	}
}

// TestSamplingWithoutTools: without Options.SampleTools the client
// advertises sampling but not sampling.tools, and a request that offers
// tools anyway fails without reaching Options.Sample.
func TestSamplingWithoutTools(t *testing.T) {
	url := weatherServer(t, false)
	called := make(chan struct{}, 1)
	m := newTestManager(t, Options{Sample: func(context.Context, string, SampleRequest) (SampleResult, error) {
		called <- struct{}{}
		return SampleResult{}, fmt.Errorf("unexpected")
	}})
	startOK(t, m, Server{Name: "w", URL: url, Transport: TransportHTTP})
	if res := call(t, m, "mcp__w__agent", `{}`); res.Text != "the client offers no sampling with tools" {
		t.Errorf("result = %+v", res)
	}
	p := weatherRound(nil)
	if _, err := m.sampleRequest(p); err == nil || !strings.Contains(err.Error(), "sampling.tools") {
		t.Errorf("a request with tools was accepted: %v", err)
	}
	if len(called) > 0 {
		t.Error("Sample was called")
	}
	if _, err := sampleResult(SampleResult{ToolUses: []SampleToolUse{{ID: "x", Name: "y"}}}, false); err == nil {
		t.Error("a tool use was accepted for a request without tools")
	}
	m.Close()
}

// FuzzSampleRequest: whatever a server sends as sampling/createMessage
// params (with tools), converting it never panics, and what it accepts
// keeps within the limits.
func FuzzSampleRequest(f *testing.F) {
	f.Add(`{"maxTokens":10,"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`)
	f.Add(`{"maxTokens":10,"tools":[{"name":"t","inputSchema":{"type":"object"}}],"toolChoice":{"mode":"required"},"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"1","name":"t","input":{}}]},{"role":"user","content":[{"type":"tool_result","toolUseId":"1","content":[{"type":"text","text":"r"}],"structuredContent":{"a":1}}]}]}`)
	f.Add(`{"tools":[{"name":"t"},{"name":"t"}],"toolChoice":{"mode":"sometimes"}}`)
	m := &Manager{opts: Options{SampleTools: true}}
	f.Fuzz(func(t *testing.T, in string) {
		var p mcp.CreateMessageWithToolsParams
		if json.Unmarshal([]byte(in), &p) != nil {
			return
		}
		sr, err := m.sampleRequest(&p)
		if err != nil {
			return
		}
		if len(sr.Tools) > maxSampleTools {
			t.Errorf("%d tools accepted", len(sr.Tools))
		}
		for _, tl := range sr.Tools {
			if !json.Valid(tl.InputSchema) {
				t.Errorf("tool %q: invalid schema %s", tl.Name, tl.InputSchema)
			}
		}
		switch sr.ToolChoice {
		case "", ToolChoiceAuto, ToolChoiceRequired, ToolChoiceNone:
		default:
			t.Errorf("tool choice %q accepted", sr.ToolChoice)
		}
	})
}
