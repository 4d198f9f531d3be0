package model

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// A response's events become one assistant message: deltas joined, a
// reasoning block closed with its signature, tool uses in stream order,
// incomplete calls left out.
func TestAssembler(t *testing.T) {
	var a Assembler
	for _, ev := range []Event{
		{Type: EventReasoning, Text: "thin"},
		{Type: EventReasoning, Text: "king"},
		{Type: EventReasoningDone, Signature: "sig", Provider: "anthropic"},
		{Type: EventText, Text: "Let me "},
		{Type: EventText, Text: ""},
		{Type: EventText, Text: "look."},
		{Type: EventToolStart, ToolCallID: "c1", ToolName: "read_file"},
		{Type: EventToolDelta, ToolCallID: "c1", Text: `{"path":`},
		{Type: EventToolDelta, ToolCallID: "c1", Text: `"a"}`},
		{Type: EventToolDone, ToolCallID: "c1", ToolName: "read_file"},
		{Type: EventText, Text: "And"},
		{Type: EventToolStart, ToolName: "glob"},
		{Type: EventUsage, Usage: &Usage{InputTokens: 3}},
		{Type: EventFinish, Finish: FinishToolUse},
	} {
		a.Add(ev)
	}
	want := []Part{
		{Type: PartReasoning, Text: "thinking", Signature: "sig", Provider: "anthropic"},
		{Type: PartText, Text: "Let me look."},
		{Type: PartToolUse, ToolCallID: "c1", ToolName: "read_file", Input: json.RawMessage(`{"path":"a"}`)},
		{Type: PartText, Text: "And"},
	}
	if got := a.Message(); got.Role != RoleAssistant || !reflect.DeepEqual(got.Parts, want) {
		t.Errorf("message = %+v, want parts %+v", got, want)
	}
	calls := a.Calls()
	if len(calls) != 2 || calls[0].ID != "c1" || calls[1].ID != "call_1" || calls[1].Input != nil {
		t.Errorf("calls = %+v", calls)
	}
	if !a.Finished || a.Finish != FinishToolUse || a.Usage == nil || a.Usage.InputTokens != 3 {
		t.Errorf("finish %v %v, usage %+v", a.Finished, a.Finish, a.Usage)
	}
	var empty Assembler
	if m := empty.Message(); m.Parts == nil || len(m.Parts) != 0 {
		t.Errorf("empty response = %+v, want no parts (not nil)", m)
	}
}

// TestStreamedPartsOrder: deltas merge into one part per run of the same
// kind; a reasoning block's end, a tool call or a change of kind starts a
// new part, and nothing is lost at any of them.
func TestStreamedPartsOrder(t *testing.T) {
	var ts Assembler
	ts.addText(PartReasoning, "a")
	ts.addText(PartReasoning, "b")
	ts.closeReasoning(Event{Type: EventReasoningDone, Signature: "s1", Provider: "anthropic"})
	ts.addText(PartReasoning, "c")
	ts.addText(PartText, "d")
	ts.addText(PartText, "e")
	ts.flushText()
	ts.parts = append(ts.parts, Part{Type: PartToolUse, ToolCallID: "t1"})
	ts.addText(PartText, "f")
	ts.closeReasoning(Event{Type: EventReasoningDone, Redacted: true, Opaque: json.RawMessage(`"r"`)})
	ts.addText(PartText, "g")
	ts.flushText()
	ts.addText(PartText, "h") // reopens the flushed part
	ts.flushText()
	type p struct {
		typ  PartType
		text string
		sig  string
	}
	var got []p
	for _, x := range ts.parts {
		got = append(got, p{x.Type, x.Text, x.Signature})
	}
	want := []p{
		{PartReasoning, "ab", "s1"},
		{PartReasoning, "c", ""},
		{PartText, "de", ""},
		{PartToolUse, "", ""},
		{PartText, "f", ""},
		{PartReasoning, "", ""},
		{PartText, "gh", ""},
	}
	if !slices.Equal(got, want) {
		t.Errorf("parts\n%v\nwant\n%v", got, want)
	}
}

func TestTextBuf(t *testing.T) {
	var tb textBuf
	var want strings.Builder
	for i := range 3000 {
		s := strings.Repeat(string(rune('a'+i%26)), i%700)
		if i == 1500 {
			s = strings.Repeat("z", 3*textBlockMax) // larger than a block
		}
		if i%7 == 0 {
			s += "é€😀" // runes of 2, 3 and 4 bytes, cut nowhere
		}
		tb.WriteString(s)
		want.WriteString(s)
	}
	blocks := tb.Blocks()
	if tb.Len() != want.Len() || strings.Join(blocks, "") != want.String() {
		t.Fatalf("textBuf holds %d bytes, want %d (or different text)", tb.Len(), want.Len())
	}
	for _, b := range blocks {
		if len(b) > textBlockMax {
			t.Fatalf("a block of %d bytes", len(b))
		}
		if !utf8.ValidString(b) {
			t.Fatalf("a block cut inside a rune: %q...", b[:16])
		}
	}
	tb.Reset()
	if tb.Len() != 0 || len(tb.Blocks()) != 0 {
		t.Fatal("Reset left text")
	}
}

// A long streamed text is kept as a run of parts, never joined: each part
// at most a block, only the last ending the run, together the text.
func TestAssemblerLongTextRun(t *testing.T) {
	var a Assembler
	var want strings.Builder
	delta := strings.Repeat("0123456789abcdé", 600)
	for want.Len() < 5*textBlockMax {
		a.Add(Event{Type: EventReasoning, Text: delta})
		want.WriteString(delta)
	}
	a.Add(Event{Type: EventReasoningDone, Signature: "sig", Provider: "p"})
	a.Add(Event{Type: EventText, Text: "short"})
	msg := a.Message()
	var got strings.Builder
	run := 0
	for i, p := range msg.Parts {
		if p.Type != PartReasoning {
			break
		}
		run++
		got.WriteString(p.Text)
		if len(p.Text) > textBlockMax {
			t.Fatalf("part %d holds %d bytes", i, len(p.Text))
		}
		if p.Continued != (i > 0) {
			t.Fatalf("part %d: Continued %v", i, p.Continued)
		}
	}
	if run < 5 || got.String() != want.String() {
		t.Fatalf("a run of %d parts holding %d bytes, want 5 or more holding %d", run, got.Len(), want.Len())
	}
	if last := msg.Parts[run-1]; last.Signature != "sig" || last.Provider != "p" || msg.Parts[0].Signature != "" {
		t.Fatalf("signature on the wrong part: first %+v, last %q", msg.Parts[0].Signature, last.Signature)
	}
	if tail := msg.Parts[run:]; len(tail) != 1 || tail[0].Type != PartText || tail[0].Text != "short" {
		t.Fatalf("after the run: %+v", tail)
	}
}
