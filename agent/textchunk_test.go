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
