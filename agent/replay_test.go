package agent

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"acpd/acp"
)

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
	s := &sess{a: &Agent{log: slog.New(slog.DiscardHandler)}, id: "s"}
	f.Fuzz(func(t *testing.T, stored string, compaction bool) {
		var in []json.RawMessage
		var want strings.Builder
		for line := range strings.Lines(stored) {
			raw := json.RawMessage(strings.TrimSuffix(line, "\n"))
			in = append(in, raw)
			var p replayProbe
			if json.Unmarshal(raw, &p) == nil {
				if k, text, ok := p.mergeable(); ok && !k.thought {
					want.WriteString(text)
				}
			}
		}
		var got strings.Builder
		for _, raw := range s.replayUpdates(in, compaction) {
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
			var p replayProbe
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
