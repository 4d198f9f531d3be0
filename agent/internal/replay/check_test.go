package replay

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/internal/loadfixture"
)

// checkSeeds are stored tool calls, as acpd writes them and mangled.
var checkSeeds = []string{
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":"Read a.go","kind":"read","status":"pending","locations":[{"path":"/a.go","line":120}],"rawInput":{"path":"/a.go","limit":12}}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","content":[{"type":"content","content":{"type":"text","text":"x\n"}}],"rawOutput":{"lines":7}}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"diff","path":"/a.go","oldText":"a","newText":"b"},{"type":"terminal","terminalId":"t"}],"_meta":{"k":[1]}}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","locations":[{"path":"/a","line":4294967296}]}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","locations":[{"path":"/a","line":-1}]}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","locations":[{"path":"/a","line":1.5}]}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":null}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c"}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","Title":"y"}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","content":[null]}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","content":[{"type":"content","content":{"type":"image","data":"","mimeType":"image/png"}}]}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","content":[{"type":"content","content":{"type":"text","text":1}}]}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","content":{"type":"terminal","terminalId":"t"}}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","_meta":[]}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","kind":5}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"c","toolCallId":"d"}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"c","\u0074itle":5}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"c","ſtatus":5}`,
	`{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","content":[{"type":"content","content":{"type":"text","text":"t","annotations":{"priority":"high"}}}]}`,
	`{"sessionUpdate":"usage_update","size":1e3,"used":1}`,
	`{"sessionUpdate":"usage_update","size":128000,"used":-1}`,
	`{"sessionUpdate":"usage_update","size":128000}`,
	`{"sessionUpdate":"usage_update","size":128000,"used":960,"cost":{"amount":1,"currency":"USD"}}`,
	`{"sessionUpdate":"usage_update","size":128000,"used":960}`,
	`{"sessionUpdate":"tool_call_update","toolCallId":"c","extra":{"a":null}}`,
}

// FuzzDecodes: where decodes answers, the strict decoder accepts.
func FuzzDecodes(f *testing.F) {
	for _, s := range checkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var p probe
		var c chunkContent
		if !json.Valid(raw) || p.decode(raw, &c) != nil || !decodes(raw, p.SessionUpdate) {
			return
		}
		var u acp.SessionUpdate
		if err := json.Unmarshal(raw, &u); err != nil {
			t.Fatalf("decodes(%s) = true, but the decoder rejects it: %v", raw, err)
		}
	})
}

// The shapes acpd writes are answered without the decoder; the others
// are left to it, which rejects those above that are not tool calls.
func TestDecodes(t *testing.T) {
	cwd := "/home/u/project"
	sure := [][]byte{loadfixture.Update(cwd, 8), loadfixture.Update(cwd, 9), []byte(checkSeeds[0]), []byte(checkSeeds[1]), []byte(checkSeeds[2]), []byte(checkSeeds[len(checkSeeds)-2]), []byte(checkSeeds[len(checkSeeds)-1])}
	line := uint32(3)
	old := "a"
	for _, u := range []acp.SessionUpdate{
		{ToolCall: &acp.ToolCall{ToolCallID: "c", Title: "t", Kind: acp.ToolKindEdit, Content: []acp.ToolCallContent{{Diff: &acp.Diff{Path: "/p", OldText: &old, NewText: "b"}}}, Locations: []acp.ToolCallLocation{{Path: "/p", Line: &line}}}},
		{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "c", Content: []acp.ToolCallContent{{Terminal: &acp.Terminal{TerminalID: "t"}}}, Meta: map[string]any{"x": 1}}},
	} {
		b, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		sure = append(sure, b)
	}
	for _, raw := range sure {
		var p probe
		var c chunkContent
		if err := p.decode(raw, &c); err != nil || !decodes(raw, p.SessionUpdate) {
			t.Errorf("decodes(%s) = false, want true", raw)
		}
	}
	for _, s := range checkSeeds[3 : len(checkSeeds)-2] {
		var p probe
		var c chunkContent
		if err := p.decode([]byte(s), &c); err == nil && decodes([]byte(s), p.SessionUpdate) {
			t.Errorf("decodes(%s) = true, want false (not sure)", s)
		}
	}
}

// Each shape lists every field of its type (the decoder ignores only the
// keys that are none of them), so a field the schema adds fails here until
// its shape knows it.
func TestShapesListEveryField(t *testing.T) {
	sh := schema.Get()
	for _, c := range []struct {
		shape []schemaField
		typ   reflect.Type
		extra []string // keys of the union around it
	}{
		{sh.toolCall, reflect.TypeFor[acp.ToolCall](), []string{"sessionUpdate"}},
		{sh.toolCallUpdate, reflect.TypeFor[acp.ToolCallUpdate](), []string{"sessionUpdate"}},
		{sh.usage, reflect.TypeFor[acp.UsageUpdate](), []string{"sessionUpdate"}},
		{sh.location, reflect.TypeFor[acp.ToolCallLocation](), nil},
		{sh.content, reflect.TypeFor[acp.Content](), []string{"type"}},
		{sh.diff, reflect.TypeFor[acp.Diff](), []string{"type"}},
		{sh.terminal, reflect.TypeFor[acp.Terminal](), []string{"type"}},
		{sh.text, reflect.TypeFor[acp.TextContent](), []string{"type"}},
	} {
		want := map[string]bool{}
		for _, k := range c.extra {
			want[k] = true
		}
		for f := range c.typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				t.Errorf("%v.%s: not a plain JSON field", c.typ, f.Name)
				continue
			}
			want[name] = true
		}
		got := map[string]bool{}
		for _, f := range c.shape {
			got[f.key] = true
		}
		if !maps.Equal(got, want) {
			t.Errorf("shape of %v has %v, want %v", c.typ, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
	}
}
