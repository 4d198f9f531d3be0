package model

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Assembler builds the assistant message of one streamed response from its
// events: text and reasoning deltas join into parts (in time linear in the
// answer's length, whatever its delta count), a reasoning block's
// signature or opaque data is attached to the part it ends, and each tool
// use takes its place in stream order among them once complete (providers
// such as the Responses API require that order). An Assembler serves one
// response and is not safe for concurrent use.
type Assembler struct {
	// Usage is the latest usage the response reported; nil before one.
	Usage *Usage
	// Finish is the response's finish reason; Finished reports that it
	// came (a stream without one did not end properly).
	Finish   FinishReason
	Finished bool

	parts []Part
	calls []*StreamedCall
	byID  map[string]*StreamedCall
	// text accumulates the text of the last part while it streams;
	// flushText stores it in the part.
	text textBuf
}

// StreamedCall is a tool call of a streamed response.
type StreamedCall struct {
	ID, Name string
	// Input is the call's arguments, set once the call completed
	// (EventToolDone): the event's, else the streamed deltas, else {}.
	Input json.RawMessage
	args  strings.Builder
}

// Add applies ev and returns the tool call it is about (nil for events of
// no call). Empty text and reasoning deltas are ignored.
func (a *Assembler) Add(ev Event) *StreamedCall {
	switch ev.Type {
	case EventText:
		a.addText(PartText, ev.Text)
	case EventReasoning:
		a.addText(PartReasoning, ev.Text)
	case EventReasoningDone:
		a.closeReasoning(ev)
	case EventToolStart:
		return a.call(ev.ToolCallID, ev.ToolName)
	case EventToolDelta:
		c := a.call(ev.ToolCallID, ev.ToolName)
		c.args.WriteString(ev.Text)
		return c
	case EventToolDone:
		c := a.call(ev.ToolCallID, ev.ToolName)
		c.Input = ev.Input
		if len(c.Input) == 0 {
			c.Input = json.RawMessage(c.args.String())
		}
		if len(c.Input) == 0 {
			c.Input = json.RawMessage("{}")
		}
		a.flushText()
		a.parts = append(a.parts, Part{Type: PartToolUse, ToolCallID: c.ID, ToolName: c.Name, Input: c.Input, Signature: ev.Signature, Opaque: ev.Opaque, Provider: ev.Provider})
		return c
	case EventUsage:
		u := *ev.Usage
		a.Usage = &u
	case EventFinish:
		a.Finish, a.Finished = ev.Finish, true
	}
	return nil
}

// Calls returns the response's tool calls in stream order, completed or
// not.
func (a *Assembler) Calls() []*StreamedCall { return a.calls }

// Message returns the assistant message so far. Calls that never completed
// are not in it: a provider would reject a tool use without a result.
func (a *Assembler) Message() Message {
	a.flushText()
	msg := Message{Role: RoleAssistant, Parts: a.parts}
	if msg.Parts == nil {
		msg.Parts = []Part{}
	}
	return msg
}

func (a *Assembler) addText(t PartType, text string) {
	if text == "" {
		return
	}
	if n := len(a.parts); n > 0 && a.parts[n-1].Type == t && a.parts[n-1].Signature == "" && !a.parts[n-1].Redacted && a.parts[n-1].Opaque == nil {
		if a.text.Len() == 0 {
			// Reopened after a flush.
			a.text.WriteString(a.parts[n-1].Text)
		}
		a.text.WriteString(text)
		return
	}
	a.flushText()
	a.parts = append(a.parts, Part{Type: t})
	a.text.WriteString(text)
}

// flushText stores the streamed text of the last part in it: a text of one
// block (up to textBlockMax) as one string of its exact size, a longer one
// as a run of parts of the part's type, one per block (see [Part]). Joining
// a long text would need one more allocation of its size while its blocks
// are still live, and the garbage its stream left behind is fragmented, so
// the join would take fresh pages: a 32 MiB answer peaked at 117 MiB.
func (a *Assembler) flushText() {
	if a.text.Len() == 0 {
		return
	}
	blocks := a.text.Blocks()
	a.text.Reset()
	last := &a.parts[len(a.parts)-1]
	last.Text = blocks[0]
	for _, b := range blocks[1:] {
		a.parts = append(a.parts, Part{Type: a.parts[len(a.parts)-1].Type, Text: b, Continued: true})
	}
}

// closeReasoning attaches a reasoning block's signature or opaque data to
// the reasoning part it ends (or adds a redacted part).
func (a *Assembler) closeReasoning(ev Event) {
	a.flushText()
	if n := len(a.parts); n > 0 && a.parts[n-1].Type == PartReasoning && a.parts[n-1].Signature == "" && a.parts[n-1].Opaque == nil && !ev.Redacted {
		a.parts[n-1].Signature = ev.Signature
		a.parts[n-1].Opaque = ev.Opaque
		a.parts[n-1].Provider = ev.Provider
		return
	}
	a.parts = append(a.parts, Part{Type: PartReasoning, Signature: ev.Signature, Redacted: ev.Redacted, Opaque: ev.Opaque, Provider: ev.Provider})
}

func (a *Assembler) call(id, name string) *StreamedCall {
	if id == "" {
		id = fmt.Sprintf("call_%d", len(a.calls))
	}
	if a.byID == nil {
		a.byID = map[string]*StreamedCall{}
	}
	c := a.byID[id]
	if c == nil {
		c = &StreamedCall{ID: id, Name: name}
		a.byID[id] = c
		a.calls = append(a.calls, c)
	}
	if c.Name == "" {
		c.Name = name
	}
	return c
}

// textBuf accumulates streamed text in blocks of growing size, up to
// textBlockMax, each cut at a rune boundary. A strings.Builder would
// reallocate as the text grows, holding the old and the new copy at once
// (and raising the garbage collector's target to match), and keep up to a
// quarter of slack for good.
type textBuf struct {
	done []string        // full blocks
	cur  strings.Builder // the block being filled, never grown past its capacity
	n    int
}

// textBlockMax bounds a block, and so a part of a long text. Blocks this
// small fit in the pages the stream's garbage frees (larger ones need
// fresh runs of pages: 1 MiB blocks peaked 7 MiB higher for a 32 MiB
// answer), and a part costs about 100 bytes besides its text.
const textBlockMax = 64 << 10

func (t *textBuf) Len() int { return t.n }

func (t *textBuf) WriteString(s string) {
	t.n += len(s)
	for {
		room := t.cur.Cap() - t.cur.Len()
		if len(s) <= room {
			t.cur.WriteString(s)
			return
		}
		m := room
		for m > 0 && !utf8.RuneStart(s[m]) {
			m--
		}
		t.cur.WriteString(s[:m])
		s = s[m:]
		size := 512
		if c := t.cur.Cap(); c > 0 {
			size = min(2*c, textBlockMax)
			t.done = append(t.done, t.cur.String())
		}
		t.cur = strings.Builder{}
		t.cur.Grow(max(size, min(len(s), textBlockMax)))
	}
}

// Blocks returns the text as its blocks, the last one copied to its exact
// size (the others are full); Reset drops the text.
func (t *textBuf) Blocks() []string {
	blocks := t.done
	if t.cur.Len() > 0 {
		blocks = append(blocks, strings.Clone(t.cur.String()))
	}
	return blocks
}

func (t *textBuf) Reset() { *t = textBuf{} }
