package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/internal/outbox"
)

// The params sendText writes for a text chunk are the update's encoding
// through encoding/json, byte for byte, whatever the text holds.
func TestTextChunkParamsAreTheEncoding(t *testing.T) {
	texts := []string{"", "plain", "<a href=\"x\">&amp;</a>\n\t\r\b\f\x00\x1f\x7f", "é€😀 \u2028\u2029", "bad \xff\xfe utf-8 \xe2\x82", strings.Repeat("line \"quoted\"\n", 5000)}
	for _, thought := range []bool{false, true} {
		for _, text := range texts {
			want, err := json.Marshal(&acp.SessionNotification{SessionID: "ses_1", Update: outbox.TextChunk(thought, "m_<1>", text)})
			if err != nil {
				t.Fatal(err)
			}
			if got := textChunkParams("ses_1", thought, "m_<1>", text); string(got) != string(want) {
				t.Errorf("thought %v, text %.40q:\n got %.200s\nwant %.200s", thought, text, got, want)
			}
		}
	}
}

// The params sendEncoded writes for an encoded update are those Notify
// writes for the update (encoding/json, HTML escaping off), byte for byte,
// and the update's record is the encoding the log would make of it.
func TestEncodedParamsAreTheEncoding(t *testing.T) {
	title, st := `<run> "a & b"`, acp.ToolCallStatusCompleted
	updates := []acp.SessionUpdate{
		{ToolCall: &acp.ToolCall{ToolCallID: "call_<1>", Title: "é€😀 \u2028 <x>", Kind: acp.ToolKindExecute, Status: acp.ToolCallStatusPending, RawInput: json.RawMessage(`{"command":"echo '<&>'"}`)}},
		{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "call_1", Status: &st, Title: &title, Content: []acp.ToolCallContent{{Content: &acp.Content{Content: acp.ContentBlock{Text: &acp.TextContent{Text: "bad \xff utf-8 </script>"}}}}}}},
		{AvailableCommandsUpdate: &acp.AvailableCommandsUpdate{}},
		{UserMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: "a < b"}}}},
	}
	for _, u := range updates {
		e := outbox.Encode(u)
		if e.JSON == nil {
			t.Fatalf("%+v was not encoded", u)
		}
		var want strings.Builder
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(&acp.SessionNotification{SessionID: "ses_<1>", Update: u}); err != nil {
			t.Fatal(err)
		}
		if got := encodedParams("ses_<1>", e.JSON); string(got)+"\n" != want.String() {
			t.Errorf("\n got %s\nwant %s", got, want.String())
		}
	}
	if e := outbox.Encode(outbox.TextChunk(false, "m_1", "merged")); e.JSON != nil {
		t.Errorf("a mergeable chunk was encoded: %s", e.JSON)
	}
}

// A text chunk's record is the update's encoding through encoding/json (as
// the log encodes any other payload), byte for byte, whatever the text.
func TestChunkRecordIsTheEncoding(t *testing.T) {
	texts := []string{"", "plain", "<a href=\"x\">&amp;</a>\n\t\r\b\f\x00\x1f\x7f", "é€😀 \u2028\u2029", "bad \xff\xfe utf-8 \xe2\x82", strings.Repeat("line \"quoted\" é\n", 5000), strings.Repeat("€", 3000)}
	for _, thought := range []bool{false, true} {
		for _, text := range texts {
			var want strings.Builder
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(outbox.TextChunk(thought, "m_<1>", text)); err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			if err := (chunkRecord{thought: thought, msg: "m_<1>", text: text}).WriteJSON(&got); err != nil {
				t.Fatal(err)
			}
			if got.String()+"\n" != want.String() {
				t.Errorf("thought %v, text %.40q:\n got %.200s\nwant %.200s", thought, text, got.String(), want.String())
			}
		}
	}
}
