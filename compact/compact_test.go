package compact

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"acpd/model"
)

// TestSummaryTranscript: the summarisation request's transcript has no
// tool blocks and no reasoning, keeps everything else, and its roles
// alternate even when a message is left empty.
func TestSummaryTranscript(t *testing.T) {
	msgs := []model.Message{
		{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "fix it"}}},
		{Role: model.RoleAssistant, Parts: []model.Part{
			{Type: model.PartReasoning, Text: "hmm", Signature: "sig"},
			{Type: model.PartText, Text: "Reading."},
			{Type: model.PartToolUse, ToolCallID: "c1", ToolName: "read_file", Input: json.RawMessage(`{"path":"a.go"}`)},
		}},
		{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartToolResult, ToolCallID: "c1", IsError: true, Content: []model.Part{{Type: model.PartText, Text: "no such file"}}}}},
		// An answer cut before any text: only a signed reasoning part.
		{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartReasoning, Redacted: true, Opaque: json.RawMessage(`"x"`)}}, Interrupted: true},
		{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "try b.go"}}},
	}
	orig, err := json.Marshal(msgs)
	if err != nil {
		t.Fatal(err)
	}
	got := SummaryTranscript(msgs)
	if after, _ := json.Marshal(msgs); string(after) != string(orig) {
		t.Error("SummaryTranscript modified its input")
	}
	roles := make([]model.Role, len(got))
	for i, m := range got {
		roles[i] = m.Role
		for _, p := range m.Parts {
			if p.Type != model.PartText {
				t.Errorf("message %d keeps a %s part", i, p.Type)
			}
		}
	}
	if want := []model.Role{model.RoleUser, model.RoleAssistant, model.RoleUser}; !slices.Equal(roles, want) {
		t.Fatalf("roles %v, want %v", roles, want)
	}
	if tx := got[1].Text(); !strings.Contains(tx, "Reading.") || !strings.Contains(tx, "read_file") || !strings.Contains(tx, `{"path":"a.go"}`) {
		t.Errorf("assistant message %q", tx)
	}
	if tx := got[2].Text(); !strings.Contains(tx, "no such file") || !strings.Contains(tx, "failed") || !strings.Contains(tx, "read_file") || !strings.Contains(tx, "try b.go") {
		t.Errorf("merged user message %q", tx)
	}
	if strings.Contains(got[1].Text()+got[2].Text(), "hmm") {
		t.Error("reasoning reached the summary request")
	}
}

func TestCompactedTurnReplacesItsSummary(t *testing.T) {
	prompt := model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "the task"}}}
	once := turn([]model.Message{prompt}, summaryHead+"first", 1000)
	twice := turn(once, summaryHead+"second", 1000)
	if len(twice) != 1 {
		t.Fatalf("%d messages", len(twice))
	}
	got := twice[0].Text()
	if !strings.HasPrefix(got, "the task") || strings.Contains(got, "first") || !strings.Contains(got, "second") || strings.Count(got, continueNote) != 1 {
		t.Errorf("after two compactions: %q", got)
	}
}
