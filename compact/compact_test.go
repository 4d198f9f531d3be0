package compact

import (
	"context"
	"encoding/json"
	"iter"
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

// summaryBackend answers every request with text.
type summaryBackend string

func (b summaryBackend) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		if yield(model.Event{Type: model.EventText, Text: string(b)}, nil) {
			yield(model.Event{Type: model.EventFinish}, nil)
		}
	}
}

// TestCompactionKeepsUserMessages: after a compaction, between turns
// (manual /compact) or in a turn, the user's own messages stay verbatim,
// oldest first, newest kept within the budget, without acpd's notes or
// the old summary; a second compaction keeps them too.
func TestCompactionKeepsUserMessages(t *testing.T) {
	text := func(role model.Role, s string) model.Message {
		return model.Message{Role: role, Parts: []model.Part{{Type: model.PartText, Text: s}}}
	}
	call := model.Message{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartToolUse, ToolCallID: "c1", ToolName: "read_file", Input: json.RawMessage(`{}`)}}}
	result := model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartToolResult, ToolCallID: "c1", Content: []model.Part{{Type: model.PartText, Text: "file body"}}}}}
	msgs := []model.Message{
		text(model.RoleUser, "rename Foo to Bar in every .go file, keep the tests green"),
		call, result,
		text(model.RoleAssistant, "Done."),
		{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "also update the docs"}, {Type: model.PartText, Text: "[acpd: these files changed outside the file tools]"}}},
		text(model.RoleAssistant, "Updated."),
	}
	job := func(m []model.Message) Job {
		return Job{Messages: m, Window: 100_000, Backend: summaryBackend("the summary (which forgot the request)"),
			Request: func() *model.Request { return &model.Request{Messages: slices.Clone(m)} }}
	}
	wantKept := func(t *testing.T, got []model.Message, want ...string) {
		t.Helper()
		var texts []string
		for _, p := range UserTexts(got, len(got), 1<<20) {
			texts = append(texts, p.Text)
		}
		if !slices.Equal(texts, want) {
			t.Errorf("the user's texts after compaction: %q, want %q", texts, want)
		}
	}

	// Between turns (/compact).
	next, _, err := Run(context.Background(), job(msgs))
	if err != nil {
		t.Fatal(err)
	}
	wantKept(t, next, "rename Foo to Bar in every .go file, keep the tests green", "also update the docs")
	if len(next) != 2 || next[1].Role != model.RoleAssistant || !strings.Contains(next[0].Text(), "the summary") {
		t.Fatalf("transcript after /compact: %+v", next)
	}

	// Then a new turn, compacted in the turn: all three, the prompt last.
	inTurn := append(slices.Clone(next), text(model.RoleUser, "now add a changelog entry"), call, result)
	again, _, err := Run(context.Background(), job(inTurn))
	if err != nil {
		t.Fatal(err)
	}
	wantKept(t, again, "rename Foo to Bar in every .go file, keep the tests green", "also update the docs", "now add a changelog entry")
	// The current prompt stays first in the compacted turn.
	if first := again[0].Parts[0].Text; first != "now add a changelog entry" {
		t.Errorf("the compacted turn starts with %q", first)
	}
	if strings.Count(again[0].Text(), "the summary") != 1 {
		t.Errorf("the old summary survived beside the new one: %q", again[0].Text())
	}

	// The budget keeps the newest.
	if got := UserTexts(msgs, len(msgs), len("also update the docs")); len(got) != 1 || got[0].Text != "also update the docs" {
		t.Errorf("UserTexts within a small budget = %+v", got)
	}
}
