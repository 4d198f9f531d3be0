package notice

import (
	"strings"
	"testing"

	"acpd/acp"
)

// A client that takes notices gets a notice with the reason as its
// description; any other a failed tool call card with the reason as its
// text, under a fresh note_ id each time.
func TestTell(t *testing.T) {
	takes := acp.ClientCapabilities{Session: &acp.ClientSessionCapabilities{Notices: &acp.NoticeCapabilities{}}}
	u, card := Tell(takes, acp.NoticeSeverityWarning, "What", "Why")
	if card || u.Notice == nil || u.Notice.Title != "What" || u.Notice.Severity != acp.NoticeSeverityWarning || u.Notice.Description == nil || *u.Notice.Description != "Why" {
		t.Fatalf("notice %+v card %v", u, card)
	}
	if u := Notice(acp.NoticeSeverityInfo, "Only", ""); u.Notice.Description != nil {
		t.Errorf("empty why described: %+v", u.Notice)
	}
	u, card = Tell(acp.ClientCapabilities{}, acp.NoticeSeverityWarning, "What", "Why")
	tc := u.ToolCall
	if !card || tc == nil || tc.Title != "What" || tc.Status != acp.ToolCallStatusFailed || tc.Kind != acp.ToolKindOther || len(tc.Content) != 1 || tc.Content[0].Content.Content.Text.Text != "Why" {
		t.Fatalf("card %+v", u)
	}
	if !strings.HasPrefix(string(tc.ToolCallID), "note_") || Card("What", "").ToolCall.ToolCallID == tc.ToolCallID {
		t.Errorf("card id %q not fresh", tc.ToolCallID)
	}
	if c := Card("What", ""); len(c.ToolCall.Content) != 0 {
		t.Errorf("empty why has content: %+v", c.ToolCall)
	}
}
