package ssetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"acpd/model"
	"acpd/model/internal/body"
)

// Payload is a dialect's request payload function.
type Payload func(*model.Request) (*body.Payload, error)

// plain is m without its memo: encoded anew by every request.
func plain(m model.Message) model.Message {
	return model.Message{Role: m.Role, Parts: m.Parts, Cache: m.Cache, Interrupted: m.Interrupted}
}

// memoTurn is the messages of one turn n of a conversation in the shape of
// a recorded turn (the user asks, the model reasons and calls a tool, the
// result comes back, the model answers), with texts of every length class:
// short, out of line (body.Inline) and longer than a fragment keeps
// (body.Keep), split in runs, with characters JSON escapes.
func memoTurn(provider string, n int) []model.Message {
	odd := "<b>&\"q\"</b>\t\\ é€😀\u2028\u2029\xff\x01 "
	lines := 40
	if n == 2 {
		lines = body.Keep / 40
	}
	result := strings.Repeat(fmt.Sprintf("line %d of the file %s\n", n, odd), lines)
	answer := strings.Repeat("the answer "+odd, 30+n%4)
	call := fmt.Sprintf("call_%d", n)
	sig := "sig"
	if n%4 == 1 {
		sig = "" // reasoning cut short: no thinking block
	}
	user := model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: fmt.Sprintf("Turn %d: what does it do? %s", n, odd)}}}
	if n%5 == 3 {
		user.Parts = append(user.Parts, model.Part{Type: model.PartImage, MimeType: "image/png", Data: strings.Repeat("iVBORw0K", 300)})
	}
	return []model.Message{
		user,
		{Role: model.RoleAssistant, Parts: []model.Part{
			{Type: model.PartReasoning, Text: "I should read " + odd},
			{Type: model.PartReasoning, Text: answer, Continued: true, Signature: sig, Provider: provider,
				Opaque: json.RawMessage(`{"type":"reasoning","id":"rs_` + fmt.Sprint(n) + `","summary":[],"encrypted_content":"e<n>c"}`)},
			{Type: model.PartText, Text: "Reading."},
			{Type: model.PartToolUse, ToolCallID: call, ToolName: "read_file", Input: json.RawMessage(`{"path":"main.go","n":` + fmt.Sprint(n) + `}`)},
		}},
		{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartToolResult, ToolCallID: call, IsError: n%7 == 6, Content: []model.Part{{Type: model.PartText, Text: result}}}}},
		{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartText, Text: answer[:len(answer)/2]}, {Type: model.PartText, Text: answer[len(answer)/2:], Continued: true}}},
	}
}

// request is the request an agent builds from transcript: copies of its
// messages, with cache breakpoints on the last two user messages; with
// memo false, the copies have no memo.
func request(transcript []model.Message, memo bool) *model.Request {
	msgs := make([]model.Message, len(transcript))
	copy(msgs, transcript)
	for i, marked := len(msgs)-1, 0; i >= 0 && marked < 2; i-- {
		if msgs[i].Role == model.RoleUser {
			msgs[i].Cache = true
			marked++
		}
	}
	if !memo {
		for i := range msgs {
			msgs[i] = plain(msgs[i])
		}
	}
	return &model.Request{Model: "m-1", System: "You are a test.", Messages: msgs,
		Tools:       []model.ToolDef{{Name: "read_file", Description: "Reads a file.", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		CacheSystem: true, CacheTools: true, MaxOutputTokens: 1000, Effort: model.EffortHigh}
}

// sameBody checks that payload builds the same body from transcript's
// memoized messages (encodings kept between requests) as from copies
// without memos, byte for byte, with an exact length.
func sameBody(t *testing.T, name string, payload Payload, transcript []model.Message) {
	t.Helper()
	got, err := payload(request(transcript, true))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want, err := payload(request(transcript, false))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	w := want.Bytes()
	if g := got.Bytes(); !bytes.Equal(g, w) {
		k := 0
		for k < min(len(g), len(w)) && g[k] == w[k] {
			k++
		}
		t.Fatalf("%s: the body from memoized messages differs at byte %d of %d:\n%.200q\nwant\n%.200q", name, k, len(w), g[k:], w[k:])
	}
	if got.Len() != int64(len(w)) {
		t.Fatalf("%s: Len %d, want %d", name, got.Len(), len(w))
	}
	if r, err := io.ReadAll(got.Reader()); err != nil || !bytes.Equal(r, w) {
		t.Fatalf("%s: reading the body: %d bytes, %v", name, len(r), err)
	}
}

// CheckMemo checks that a dialect's request payload functions (payloads:
// one per set of options, all used on the same messages) build the same
// body from memoized messages ([model.Memo]: each message encoded once,
// its encoding kept) as from messages encoded anew, over a conversation
// that grows turn by turn with its breakpoints moving, whose messages are
// edited (parts replaced, extended) and whose history is replaced (a
// compaction), and in sessions built concurrently. It also checks that the
// memos are used: a request then allocates a small part of what encoding
// it anew does.
func CheckMemo(t *testing.T, provider string, payloads ...Payload) {
	t.Helper()
	var transcript []model.Message
	add := func(ms ...model.Message) {
		for _, m := range ms {
			transcript = append(transcript, m.Memoized())
		}
	}
	for n := range 8 {
		turn := memoTurn(provider, n)
		for _, m := range turn {
			add(m)
			for i, p := range payloads {
				sameBody(t, fmt.Sprintf("turn %d, %d messages, payload %d", n, len(transcript), i), p, transcript)
			}
		}
	}

	// Edits keep the message's memo but not its content.
	i := 2 // a tool result
	cleared := append([]model.Part(nil), transcript[i].Parts...)
	cleared[0].Content = []model.Part{{Type: model.PartText, Text: "[cleared]"}}
	transcript[i].Parts = cleared
	j := 4 // a prompt, extended in its parts' spare capacity
	ps := make([]model.Part, len(transcript[j].Parts), len(transcript[j].Parts)+1)
	copy(ps, transcript[j].Parts)
	transcript[j].Parts = ps
	for _, p := range payloads {
		sameBody(t, "before extending", p, transcript)
	}
	transcript[j].Parts = append(transcript[j].Parts, model.Part{Type: model.PartText, Text: "and more"})
	for k, p := range payloads {
		sameBody(t, fmt.Sprintf("edited, payload %d", k), p, transcript)
	}

	// A compaction: a summary, then the last turn's tool result and answer,
	// memos and all (the result now answers a call the request does not
	// hold).
	summary := model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "[summary of the conversation]"}}}
	transcript = append([]model.Message{summary.Memoized()}, transcript[len(transcript)-2:]...)
	for k, p := range payloads {
		sameBody(t, fmt.Sprintf("compacted, payload %d", k), p, transcript)
	}
	for _, m := range memoTurn(provider, 20) {
		add(m)
		for k, p := range payloads {
			sameBody(t, fmt.Sprintf("after compaction, payload %d", k), p, transcript)
		}
	}

	// Concurrent sessions: each its own conversation, sharing its first
	// turn's messages (a fork) with the others.
	shared := transcript[:4:4]
	var wg sync.WaitGroup
	for s := range 4 {
		wg.Go(func() {
			mine := append([]model.Message(nil), shared...)
			for n := range 4 {
				for _, m := range memoTurn(provider, 100*s+n) {
					mine = append(mine, m.Memoized())
					for k, p := range payloads {
						got, err := p(request(mine, true))
						if err != nil {
							t.Error(err)
							return
						}
						want, err := p(request(mine, false))
						if err != nil {
							t.Error(err)
							return
						}
						if !bytes.Equal(got.Bytes(), want.Bytes()) || got.Len() != want.Len() {
							t.Errorf("session %d turn %d payload %d: the bodies differ", s, n, k)
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()

	// The memos serve: with every message's encoding kept, a request
	// allocates far less than one that encodes them all.
	for k, p := range payloads {
		memo, fresh := request(transcript, true), request(transcript, false)
		if _, err := p(memo); err != nil {
			t.Fatal(err)
		}
		kept := testing.AllocsPerRun(5, func() { _, _ = p(memo) })
		anew := testing.AllocsPerRun(5, func() { _, _ = p(fresh) })
		if kept*4 > anew {
			t.Errorf("payload %d: a request of %d memoized messages makes %.0f allocations, %.0f encoding them anew", k, len(transcript), kept, anew)
		}
	}
}
