package loopguard

import (
	"encoding/json"
	"testing"
)

// TestObserve: Limit identical calls run, the next is refused, one more
// stops; key order and spacing do not make calls different, and a
// different call resets the count.
func TestObserve(t *testing.T) {
	var g Guard
	in := []string{`{"a":1,"b":2}`, `{"b":2, "a":1}`, `{"a":1,"b":2}`}
	for i, s := range in {
		if v := g.Observe("read_file", json.RawMessage(s)); v != Run {
			t.Fatalf("call %d: %v", i+1, v)
		}
	}
	if v := g.Observe("read_file", json.RawMessage(in[0])); v != Refuse {
		t.Fatalf("call %d: %v, want Refuse", Limit+1, v)
	}
	if v := g.Observe("read_file", json.RawMessage(in[0])); v != Stop {
		t.Fatalf("call %d: %v, want Stop", Limit+2, v)
	}
	var h Guard
	for range Limit {
		h.Observe("grep", json.RawMessage(`{}`))
	}
	if v := h.Observe("glob", json.RawMessage(`{}`)); v != Run {
		t.Errorf("a different call: %v", v)
	}
	if v := h.Observe("grep", json.RawMessage(`{}`)); v != Run {
		t.Errorf("after a reset: %v", v)
	}
}
