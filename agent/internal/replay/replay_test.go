package replay

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/internal/outbox"
	"acpd/model"
)

// A terminal of an earlier connection replays as the command's output:
// fenced text for any client, a display-only terminal for Zed's.
func TestTerminalContent(t *testing.T) {
	stored := []json.RawMessage{
		json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"ls","status":"pending","content":[{"type":"terminal","terminalId":"t-old"}]}`),
		json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","rawOutput":{"exitCode":0}}`),
	}
	transcript := []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartToolResult, ToolCallID: "c1", Content: []model.Part{{Type: model.PartText, Text: "a.go\n"}}}}}}
	results := Results(transcript)
	var plain []string
	for u := range Updates(stored, Options{Results: results}) {
		plain = append(plain, string(u))
	}
	if len(plain) != 2 || strings.Contains(plain[0], "t-old") || !strings.Contains(plain[0], "a.go") {
		t.Errorf("plain replay = %q", plain)
	}
	var zed []string
	for u := range Updates(stored, Options{Terminals: true, Results: results}) {
		zed = append(zed, string(u))
	}
	if len(zed) != 4 || strings.Contains(zed[0], "t-old") || !strings.Contains(zed[0], "terminal_info") ||
		!strings.Contains(zed[1], `a.go\r\n`) || !strings.Contains(zed[2], `"exit_code":0`) {
		t.Errorf("Zed replay = %q", zed)
	}
	checkTerminals(t, stored, collect(stored, Options{Terminals: true, Results: results}))
}

// replayed is one replayed update, decoded for the terminal checks.
type replayed struct {
	kind    string
	id      acp.ToolCallID
	terms   []string // terminal content ids
	meta    map[string]any
	content []acp.ToolCallContent
}

func decodeReplayed(t *testing.T, raw json.RawMessage) replayed {
	t.Helper()
	var u acp.SessionUpdate
	if err := json.Unmarshal(raw, &u); err != nil {
		t.Fatalf("replayed %s, which does not decode: %v", raw, err)
	}
	var r replayed
	tc, ok := toolCallOf(&u)
	if !ok {
		return r
	}
	r.kind = "tool_call_update"
	if u.ToolCall != nil {
		r.kind = "tool_call"
	}
	r.id, r.meta, r.content = tc.id, *tc.meta, tc.content
	for _, c := range tc.content {
		if c.Terminal != nil {
			r.terms = append(r.terms, string(c.Terminal.TerminalID))
		}
	}
	return r
}

// checkTerminals asserts what Zed needs of a replay's display-only
// terminals: a terminal is opened by _meta.terminal_info on a tool_call
// (only there, once per terminal) that also shows it as content, before
// any other update names it; terminal_output and terminal_exit ride on
// tool_call_updates and name opened terminals; no input terminal id
// survives. It returns the replayed updates.
func checkTerminals(t *testing.T, in []json.RawMessage, out []json.RawMessage) []replayed {
	t.Helper()
	inputIDs := map[string]bool{}
	for _, raw := range in {
		var u acp.SessionUpdate
		if json.Unmarshal(raw, &u) != nil {
			continue
		}
		if tc, ok := toolCallOf(&u); ok {
			for _, c := range tc.content {
				if c.Terminal != nil {
					inputIDs[string(c.Terminal.TerminalID)] = true
				}
			}
		}
	}
	opened := map[string]acp.ToolCallID{}
	var rs []replayed
	for _, raw := range out {
		r := decodeReplayed(t, raw)
		rs = append(rs, r)
		idOf := func(key string) (string, bool) {
			v, ok := r.meta[key]
			if !ok {
				return "", false
			}
			m, _ := v.(map[string]any)
			s, _ := m["terminal_id"].(string)
			return s, true
		}
		if tid, ok := idOf("terminal_info"); ok {
			if r.kind != "tool_call" {
				t.Fatalf("terminal_info on a %s: %s", r.kind, raw)
			}
			if _, dup := opened[tid]; dup || tid == "" || inputIDs[tid] {
				t.Fatalf("terminal_info opens %q again or an input id: %s", tid, raw)
			}
			if !slices.Contains(r.terms, tid) {
				t.Fatalf("the tool_call opening %q does not show it: %s", tid, raw)
			}
			opened[tid] = r.id
		}
		for _, key := range []string{"terminal_output", "terminal_exit"} {
			if tid, ok := idOf(key); ok && (r.kind != "tool_call_update" || opened[tid] != r.id) {
				t.Fatalf("%s for %q on a %s of %s (opened by %q): %s", key, tid, r.kind, r.id, opened[tid], raw)
			}
		}
		for _, tid := range r.terms {
			if owner, ok := opened[tid]; !ok || owner != r.id {
				t.Fatalf("update names terminal %q that no tool_call of %s opened: %s", tid, r.id, raw)
			}
		}
	}
	return rs
}

func collect(stored []json.RawMessage, o Options) []json.RawMessage {
	var out []json.RawMessage
	for u := range Updates(stored, o) {
		out = append(out, u)
	}
	return out
}

// TestTerminalOpenedByToolCall replays the shape acpd stores for a command
// in the editor's terminal (a tool_call without content, the terminal in
// later updates, stale terminal _meta of a past connection): the
// tool_call opens the display-only terminal, output and exit follow it at
// once, and later updates name it.
func TestTerminalOpenedByToolCall(t *testing.T) {
	stored := []json.RawMessage{
		json.RawMessage(`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"make","kind":"execute","status":"pending","_meta":{"keep":1}}`),
		json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","content":[{"type":"terminal","terminalId":"t-old"}],"_meta":{"terminal_info":{"terminal_id":"t-old"}}}`),
		json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","_meta":{"terminal_output":{"terminal_id":"t-old","data":"x"}}}`),
		json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed","content":[{"type":"terminal","terminalId":"t-old"}],"rawOutput":{"exitCode":2}}`),
		// A tool call that does not open with a tool_call: text.
		json.RawMessage(`{"sessionUpdate":"tool_call_update","toolCallId":"c2","content":[{"type":"terminal","terminalId":"t-2"}]}`),
	}
	results := map[string]string{"c1": "boom\n", "c2": "two\n"}
	out := collect(stored, Options{Terminals: true, Results: results})
	rs := checkTerminals(t, stored, out)
	if len(rs) != 7 {
		t.Fatalf("replayed %d updates, want 7: %q", len(rs), out)
	}
	open := rs[0]
	if open.kind != "tool_call" || len(open.terms) != 1 || open.meta["keep"] != float64(1) {
		t.Fatalf("opening tool_call %s", out[0])
	}
	tid := open.terms[0]
	if o, _ := rs[1].meta["terminal_output"].(map[string]any); o == nil || o["data"] != "boom\r\n" {
		t.Errorf("output %s", out[1])
	}
	if e, _ := rs[2].meta["terminal_exit"].(map[string]any); e == nil || e["exit_code"] != float64(2) {
		t.Errorf("exit %s", out[2])
	}
	if !slices.Equal(rs[3].terms, []string{tid}) || rs[3].meta != nil {
		t.Errorf("in_progress update %s: want terminal %s and no stale _meta", out[3], tid)
	}
	if rs[4].meta != nil || len(rs[4].content) != 0 {
		t.Errorf("stale terminal_output update %s: want it without _meta", out[4])
	}
	if !slices.Equal(rs[5].terms, []string{tid}) {
		t.Errorf("final update %s", out[5])
	}
	if c2 := rs[6]; len(c2.terms) != 0 || len(c2.content) != 1 || c2.content[0].Content == nil || !strings.Contains(c2.content[0].Content.Content.Text.Text, "two") {
		t.Errorf("c2 %s: want its output as text", out[6])
	}
}

// FuzzReplayTerminals feeds the display-only terminal rewrite arbitrary
// stored updates (one per line; the log is untrusted input): whatever it
// replays decodes, and its terminals are exactly what Zed can show (see
// checkTerminals); without the extension no terminal is named at all.
func FuzzReplayTerminals(f *testing.F) {
	for _, seed := range []string{
		`{"sessionUpdate":"tool_call","toolCallId":"c","title":"ls","status":"pending"}` + "\n" +
			`{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"terminal","terminalId":"t"}],"rawOutput":{"exitCode":0}}`,
		`{"sessionUpdate":"tool_call","toolCallId":"c","title":"ls","content":[{"type":"terminal","terminalId":"t"},{"type":"terminal","terminalId":"u"}],"_meta":{"terminal_info":{"terminal_id":"t"}}}` + "\n" +
			`{"sessionUpdate":"tool_call","toolCallId":"c","title":"again","content":[{"type":"terminal","terminalId":"t"}]}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"terminal","terminalId":"t"}]}` + "\n" +
			`{"sessionUpdate":"tool_call","toolCallId":"c","title":"late","content":[{"type":"terminal","terminalId":"t"}]}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"c","_meta":{"terminal_exit":{"terminal_id":"t","exit_code":1}}}`,
		`{"sessionUpdate":"tool_call","toolCallId":"c","title":"x","rawOutput":{"signal":"KILL"},"content":[{"type":"terminal","terminalId":"replay-0"}]}`,
	} {
		f.Add(seed, "out\n")
	}
	f.Fuzz(func(t *testing.T, stored, result string) {
		var in []json.RawMessage
		for line := range strings.Lines(stored) {
			in = append(in, json.RawMessage(strings.TrimSuffix(line, "\n")))
		}
		results := map[string]string{"c": result}
		checkTerminals(t, in, collect(in, Options{Terminals: true, Results: results}))
		for _, raw := range collect(in, Options{Results: results}) {
			if r := decodeReplayed(t, raw); len(r.terms) != 0 {
				t.Fatalf("replayed terminal content to a client without the extension: %s", raw)
			}
		}
	})
}

// FuzzReplayUpdates feeds session/load's replay arbitrary stored updates
// (one per line): whatever it passes on must decode as a session update,
// the text of merged agent chunks must be kept whole and in order, and
// notices never replay.
func FuzzReplayUpdates(f *testing.F) {
	for _, seed := range []string{
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"},"messageId":"m1"}` + "\n" +
			`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"b"},"messageId":"m1"}`,
		`{"sessionUpdate":"tool_call_update","toolCallId":"c","content":[{"type":"content","content":{"type":"text","text":"x"}}]}`,
		`{"sessionUpdate":"notice","content":{"type":"text","text":"n"}}`,
		`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"t","annotations":{}},"messageId":"m"}`,
		`{"sessionUpdate":"agent_message_chunk","content":[1]}`,
		`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"u"},"messageId":"m"}` + "\n" +
			`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"v","extra":1},"messageId":"m"}`,
		`not json`,
	} {
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, stored string, compaction bool) {
		var in []json.RawMessage
		var want strings.Builder
		for line := range strings.Lines(stored) {
			raw := json.RawMessage(strings.TrimSuffix(line, "\n"))
			in = append(in, raw)
			var p probe
			var c chunkContent
			if p.decode(raw, &c) == nil {
				if k, text, ok := p.mergeable(&c); ok && !k.thought {
					want.WriteString(text)
				}
			}
		}
		var got strings.Builder
		for raw := range Updates(in, Options{Compaction: compaction}) {
			var u acp.SessionUpdate
			if err := json.Unmarshal(raw, &u); err != nil {
				t.Fatalf("replayed %s, which does not decode: %v", raw, err)
			}
			if bytes.Contains(raw, []byte(`"sessionUpdate":"notice"`)) && !bytes.Contains(raw, []byte(`"sessionUpdate":"agent`)) {
				var k struct {
					SessionUpdate string `json:"sessionUpdate"`
				}
				if json.Unmarshal(raw, &k) == nil && k.SessionUpdate == "notice" {
					t.Fatalf("replayed a notice: %s", raw)
				}
			}
			var p probe
			var c chunkContent
			if p.decode(raw, &c) == nil {
				if k, text, ok := p.mergeable(&c); ok && !k.thought {
					got.WriteString(text)
				}
			}
		}
		if got.String() != want.String() {
			t.Fatalf("agent text %q replayed as %q", want.String(), got.String())
		}
	})
}

// FuzzScanProbe: where scanProbe answers for a valid stored update, it
// gives json.Unmarshal's answer.
func FuzzScanProbe(f *testing.F) {
	for _, seed := range []string{
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a\u00e9\n"},"messageId":"m1"}`,
		`{"sessionUpdate":"agent_thought_chunk","messageId":null,"content":{"type":"text","text":"t"}}`,
		`{ "SessionUpdate" : "agent_message_chunk" , "content":{"text":"x","type":"text"},"messageId":"m"}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","annotations":null},"messageId":"m","_meta":{"a":[1,{"b":"}"}]}}`,
		`{"sessionUpdate":"tool_call","toolCallId":"c","content":[{"type":"terminal","terminalId":"t"}],"rawInput":{"k":"\"}"}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\ud800"},"messageId":"\u006d"}`,
		`{"sessionUpdate":5}`,
		`{"sessionUpdate":"agent_message_chunk","_meta":null,"content":{"type":"text","text":"x"},"messageId":"m"}`,
		`[1,2]`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\xff"},"messageId":"m"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var p probe
		var c chunkContent
		ok := scanProbe(raw, &p, &c) // must return, whatever raw holds
		if !ok || !json.Valid(raw) {
			return // its answer stands for valid JSON only
		}
		var wp probe
		var wc chunkContent
		if err := wp.decode(raw, &wc); err != nil {
			t.Fatalf("scanProbe answered for %s, which json.Unmarshal rejects: %v", raw, err)
		}
		if p.SessionUpdate != wp.SessionUpdate || (p.MessageID == nil) != (wp.MessageID == nil) ||
			(p.MessageID != nil && *p.MessageID != *wp.MessageID) || (p.Meta == nil) != (wp.Meta == nil) || (p.Content == nil) != (wp.Content == nil) {
			t.Fatalf("probe of %s: got %+v, want %+v", raw, p, wp)
		}
		gk, gt, gok := p.mergeable(&c)
		wk, wt, wok := wp.mergeable(&wc)
		if gk != wk || gt != wt || gok != wok || p.plain(&c) != wp.plain(&wc) {
			t.Fatalf("mergeable of %s: got %v %q %v, want %v %q %v", raw, gk, gt, gok, wk, wt, wok)
		}
	})
}

// The merged chunk's shortcut encoding is the generated encoder's.
func TestChunkEncoding(t *testing.T) {
	for _, k := range []chunkKey{{msg: "m_1"}, {thought: true, msg: "m\"<é>\xff"}} {
		for _, text := range []string{"", "hi <&> \u2028 \xff\n"} {
			want, err := json.Marshal(outbox.TextChunk(k.thought, k.msg, text))
			if err != nil {
				t.Fatal(err)
			}
			got, err := k.encode(text)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("encode(%q) = %s, %v; want %s", text, got, err, want)
			}
		}
	}
}
