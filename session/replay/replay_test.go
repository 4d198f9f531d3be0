package replay

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"acpd/acp"
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
			if json.Unmarshal(raw, &p) == nil {
				if k, text, ok := p.mergeable(); ok && !k.thought {
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
			if json.Unmarshal(raw, &p) == nil {
				if k, text, ok := p.mergeable(); ok && !k.thought {
					got.WriteString(text)
				}
			}
		}
		if got.String() != want.String() {
			t.Fatalf("agent text %q replayed as %q", want.String(), got.String())
		}
	})
}
