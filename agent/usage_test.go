package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"acpd/acp"
	"acpd/compact"
	"acpd/internal/testpeers"
	"acpd/model"
)

var (
	schemaOnce sync.Once
	schemas    map[string]*jsonschema.Compiler
	schemaErr  error
)

// acpSchemaDef compiles $defs/name of the SDK's stable (schema.json) or
// unstable (schema.unstable.json) ACP schema.
func acpSchemaDef(t *testing.T, file, name string) *jsonschema.Schema {
	t.Helper()
	dir := filepath.Dir(testpeers.ACPSchema(t))
	schemaOnce.Do(func() {
		schemas = map[string]*jsonschema.Compiler{}
		for _, f := range []string{"schema.json", "schema.unstable.json"} {
			raw, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				schemaErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				schemaErr = err
				return
			}
			c := jsonschema.NewCompiler()
			if schemaErr = c.AddResource("file:///"+f, doc); schemaErr != nil {
				return
			}
			schemas[f] = c
		}
	})
	if schemaErr != nil {
		t.Fatal(schemaErr)
	}
	s, err := schemas[file].Compile("file:///" + file + "#/$defs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mustValidate checks raw JSON against $defs/name of a schema file.
func mustValidate(t *testing.T, file, name string, raw json.RawMessage) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := acpSchemaDef(t, file, name).Validate(inst); err != nil {
		t.Errorf("%s invalid as %s#/$defs/%s: %v", raw, file, name, err)
	}
}

// promptRaw sends a text prompt and returns the raw result of its reply.
func (c *client) promptRaw(sid acp.SessionID, text string) json.RawMessage {
	c.t.Helper()
	mark := c.out.count()
	var resp acp.PromptResponse
	if err := c.call(acp.AgentMethodSessionPrompt, acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: text}}}}, &resp); err != nil {
		c.t.Fatalf("prompt %q: %v", text, err)
	}
	m, ok := c.in.reply(c.out.idSince(mark, acp.AgentMethodSessionPrompt))
	if !ok {
		c.t.Fatal("no reply on the wire")
	}
	return m.Result
}

// TestPromptUsageTotals: PromptResponse.usage sums the usage the scripted
// model reported for every request of the turn (the main loop's two and
// the task sub-agent's), split as claude-agent-acp splits it, valid
// against the unstable schema's PromptResponse; the tool calls carry their
// tool's name. A turn without a model request reports no usage.
func TestPromptUsageTotals(t *testing.T) {
	env := newEnv(t, "")
	main := env.script(
		// Request 1: a task call.
		`{"type":"tool_done","toolCallId":"t1","toolName":"task","input":{"description":"find it","prompt":"Where is it?"}}`,
		`{"type":"usage","usage":{"inputTokens":50,"outputTokens":1}}`, // superseded
		`{"type":"usage","usage":{"inputTokens":100,"outputTokens":20,"cacheReadTokens":60,"cacheWriteTokens":10,"reasoningTokens":5}}`,
		`{"type":"finish","finish":"tool_use"}`,
		// Request 2, after the report.
		`{"type":"expect","contains":"It is in main.go."}`,
		`{"type":"text","text":"Found it."}`,
		`{"type":"usage","usage":{"inputTokens":130,"outputTokens":7,"cacheReadTokens":110}}`,
		`{"type":"finish"}`,
	)
	sub := env.script( // the sub-agent's one request
		`{"type":"text","text":"It is in main.go."}`,
		`{"type":"usage","usage":{"inputTokens":40,"outputTokens":8}}`,
		`{"type":"finish"}`,
	)
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		b := main
		if strings.HasPrefix(req.System, "You are a read-only exploration sub-agent") {
			b = sub
		}
		for ev, err := range b.Stream(ctx, req) {
			if !yield(ev, err) {
				return
			}
		}
	}))
	env.setModel(mainModel, rec)
	info := func(i *model.ModelInfo) { i.InputPrice, i.OutputPrice = 3, 15 }
	c := env.connectWith(info, nil)
	if err := c.call(acp.AgentMethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersion1}, &acp.InitializeResponse{}); err != nil {
		t.Fatal(err)
	}
	sid := c.newSession()
	raw := c.promptRaw(sid, "where is it?")
	mustValidate(t, "schema.unstable.json", "PromptResponse", raw)
	mustValidate(t, "schema.json", "PromptResponse", raw)

	var resp acp.PromptResponse
	if err := acp.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != acp.StopReasonEndTurn || resp.Usage == nil {
		t.Fatalf("reply %s", raw)
	}
	u := resp.Usage
	// Reported: input 100+40+130 = 270 (cache reads 60+110 = 170, writes
	// 10 included), output 20+8+7 = 35, reasoning 5.
	want := acp.Usage{InputTokens: 270 - 170 - 10, OutputTokens: 35, TotalTokens: 270 + 35}
	if u.InputTokens != want.InputTokens || u.OutputTokens != want.OutputTokens || u.TotalTokens != want.TotalTokens {
		t.Errorf("usage %s, want input %d output %d total %d", raw, want.InputTokens, want.OutputTokens, want.TotalTokens)
	}
	if u.CachedReadTokens == nil || *u.CachedReadTokens != 170 || u.CachedWriteTokens == nil || *u.CachedWriteTokens != 10 || u.ThoughtTokens == nil || *u.ThoughtTokens != 5 {
		t.Errorf("cache and thought tokens: %s", raw)
	}
	if u.TotalTokens != u.InputTokens+u.OutputTokens+*u.CachedReadTokens+*u.CachedWriteTokens {
		t.Errorf("totalTokens is not the sum of its parts: %s", raw)
	}
	p := model.ModelInfo{InputPrice: 3, OutputPrice: 15}
	wantCost := compact.Cost(model.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 60, CacheWriteTokens: 10, ReasoningTokens: 5}, p) +
		compact.Cost(model.Usage{InputTokens: 40, OutputTokens: 8}, p) +
		compact.Cost(model.Usage{InputTokens: 130, OutputTokens: 7, CacheReadTokens: 110}, p)
	var meta struct {
		Acpd struct{ Cost acp.Cost } `json:"acpd"`
	}
	b, _ := json.Marshal(u.Meta)
	if err := json.Unmarshal(b, &meta); err != nil || math.Abs(meta.Acpd.Cost.Amount-wantCost) > 1e-12 || meta.Acpd.Cost.Currency != "USD" {
		t.Errorf("cost %s, want %g USD", b, wantCost)
	}
	if n := len(rec.requests()); n != 3 {
		t.Fatalf("%d model requests, want 3", n)
	}

	// The tool call is schema-valid and named after its tool.
	named := false
	for _, m := range c.in.messages() {
		if m.Method != acp.ClientMethodSessionUpdate {
			continue
		}
		mustValidate(t, "schema.json", "SessionNotification", m.Params)
		mustValidate(t, "schema.unstable.json", "SessionNotification", m.Params)
		var n acp.SessionNotification
		if err := acp.Unmarshal(m.Params, &n); err != nil {
			t.Fatal(err)
		}
		if tc := n.Update.ToolCall; tc != nil && tc.ToolCallID == "t1" {
			named = tc.Name != nil && *tc.Name == "task"
		}
	}
	if !named {
		t.Error("no tool_call for t1 named task")
	}

	// A turn that makes no model request reports no usage.
	raw = c.promptRaw(sid, "/plan")
	mustValidate(t, "schema.unstable.json", "PromptResponse", raw)
	var plain acp.PromptResponse
	if err := acp.Unmarshal(raw, &plain); err != nil || plain.Usage != nil {
		t.Errorf("a turn without model requests: %s (%v)", raw, err)
	}
}
