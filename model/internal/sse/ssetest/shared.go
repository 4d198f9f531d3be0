package ssetest

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"acpd/model"
)

// sharedRequest is the request an agent builds from a transcript it
// shares: the transcript itself, capped, with the cache breakpoints of its
// last two user messages in CacheAt, and system as the system prompt.
func sharedRequest(transcript []model.Message, system string) *model.Request {
	req := request(nil, true)
	req.System = system
	req.Messages = transcript[:len(transcript):len(transcript)]
	for i := len(transcript) - 1; i >= 0 && len(req.CacheAt) < 2; i-- {
		if transcript[i].Role == model.RoleUser {
			req.CacheAt = append(req.CacheAt, i)
		}
	}
	return req
}

// freshRequest is sharedRequest's request as copies without memos, the
// breakpoints marked on the copies.
func freshRequest(transcript []model.Message, system string) *model.Request {
	req := request(transcript, false)
	req.System = system
	return req
}

// CheckShared checks that a dialect's request payload functions build the
// same body from requests that share their transcript (as the agent's do:
// the transcript's own array, appended to, its breakpoints in
// Request.CacheAt) as from fresh copies of its messages without memos and
// with their breakpoints marked, byte for byte, through what a dialect
// keeps between the requests of a conversation (model.Prefix) and
// everything that must invalidate it: the conversation growing turn by
// turn, the system prompt changing (a mode change), the payload functions
// (a dialect's options, a model change) taking turns, a rewind that
// truncates the transcript and appends over its array, a compaction (a
// new array starting with messages of the old one) and a fork (another
// array of the same memoized messages, growing apart). With prefix set,
// it also checks that a dialect keeps a prefix: a request that adds one
// message to a long conversation looks at that message only.
func CheckShared(t *testing.T, provider string, prefix bool, payloads ...Payload) {
	t.Helper()
	check := func(name string, transcript []model.Message, system string) {
		t.Helper()
		for k, p := range payloads {
			got, err := p(sharedRequest(transcript, system))
			if err != nil {
				t.Fatalf("%s, payload %d: %v", name, k, err)
			}
			want, err := p(freshRequest(transcript, system))
			if err != nil {
				t.Fatalf("%s, payload %d: %v", name, k, err)
			}
			g, w := got.Bytes(), want.Bytes()
			if !bytes.Equal(g, w) {
				i := 0
				for i < min(len(g), len(w)) && g[i] == w[i] {
					i++
				}
				t.Fatalf("%s, payload %d: the body of the shared transcript differs at byte %d of %d:\n%.200q\nwant\n%.200q", name, k, i, len(w), g[i:], w[i:])
			}
			if got.Len() != int64(len(w)) {
				t.Fatalf("%s, payload %d: Len %d, want %d", name, k, got.Len(), len(w))
			}
		}
	}
	var transcript []model.Message
	grow := func(from, to int, system string) {
		t.Helper()
		for n := from; n < to; n++ {
			for _, m := range memoTurn(provider, n) {
				transcript = append(transcript, m.Memoized())
				check(fmt.Sprintf("turn %d, %d messages", n, len(transcript)), transcript, system)
			}
		}
	}
	grow(0, 6, "You are a test.")

	// A mode change: another system prompt, the same messages.
	check("another system prompt", transcript, "You are another test.")
	grow(6, 7, "You are another test.")
	check("the first system prompt again", transcript, "You are a test.")

	// A rewind: the transcript truncated, then appended over its array.
	keep := len(transcript) - 6
	transcript = transcript[:keep]
	check("rewound", transcript, "You are a test.")
	grow(30, 32, "You are a test.")

	// A fork: the same memoized messages in another array, growing apart
	// from the original, their requests taking turns.
	fork := append([]model.Message(nil), transcript...)
	for n := 40; n < 42; n++ {
		turnA, turnB := memoTurn(provider, n), memoTurn(provider, n+50)
		for i := range turnA {
			transcript = append(transcript, turnA[i].Memoized())
			fork = append(fork, turnB[i].Memoized())
			check(fmt.Sprintf("original, turn %d", n), transcript, "You are a test.")
			check(fmt.Sprintf("fork, turn %d", n), fork, "You are a test.")
		}
	}

	// A compaction: a new array of a summary and the last messages, memos
	// and all.
	summary := model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "[summary]"}}}
	transcript = append([]model.Message{summary.Memoized()}, transcript[len(transcript)-2:]...)
	check("compacted", transcript, "You are a test.")
	grow(60, 62, "You are a test.")

	if !prefix {
		return
	}
	// The prefix serves: a request that extends the last one does not
	// look at the messages before (an edit in place, which breaks the
	// rule, shows it).
	for k, p := range payloads {
		// Room to append in place: the next request is of the same array.
		transcript = slices.Grow(transcript, 1)
		if _, err := p(sharedRequest(transcript, "You are a test.")); err != nil {
			t.Fatal(err)
		}
		want := append([]model.Message(nil), transcript...)
		want = append(want, memoTurn(provider, 200+k)[0].Memoized())
		i := len(transcript) - 2
		edited := transcript[i]
		transcript[i].Parts = []model.Part{{Type: model.PartText, Text: "edited in place"}}
		transcript = append(transcript, want[len(want)-1])
		got, err := p(sharedRequest(transcript, "You are a test."))
		if err != nil {
			t.Fatal(err)
		}
		w, err := p(freshRequest(want, "You are a test."))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), w.Bytes()) {
			g, ww := got.Bytes(), w.Bytes()
			x := 0
			for x < min(len(g), len(ww)) && g[x] == ww[x] {
				x++
			}
			t.Errorf("payload %d: a request that extends the last one encoded an earlier message again: at %d of %d\n%.300q\nwant\n%.300q", k, x, len(ww), g[max(0, x-100):], ww[max(0, x-100):])
		}
		transcript[i] = edited
	}
}
