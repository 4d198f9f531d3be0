package model

import (
	"sync"
	"testing"
)

func TestMemoIsSharedByCopies(t *testing.T) {
	parts := make([]Part, 1, 4)
	parts[0] = Part{Type: PartText, Text: "hi"}
	m := Message{Role: RoleUser, Parts: parts}
	m.Remember("k", 1)
	if _, ok := m.Recall("k"); ok {
		t.Fatal("a message without a memo kept a value")
	}
	m = m.Memoized()
	if m.Memoized().memo != m.memo {
		t.Fatal("Memoized replaced the memo of a memoized message")
	}
	c := m
	c.Cache = true
	c.Remember("k", 1)
	if v, ok := m.Recall("k"); !ok || v != 1 {
		t.Fatalf("the original does not see what its copy kept: %v %v", v, ok)
	}
	if _, ok := m.Recall("other"); ok {
		t.Fatal("a value was recalled under another key")
	}

	// Another content, through the same memo: not the kept value.
	replaced := m
	replaced.Parts = []Part{{Type: PartText, Text: "hi"}}
	extended := m
	extended.Parts = append(extended.Parts, Part{Type: PartText, Text: "more"}) // in parts' spare capacity
	role := m
	role.Role = RoleAssistant
	var empty Message
	empty = empty.Memoized()
	empty.Remember("k", 2)
	for name, x := range map[string]Message{"replaced parts": replaced, "extended parts": extended, "another role": role} {
		if _, ok := x.Recall("k"); ok {
			t.Errorf("%s: recalled the value kept for the original", name)
		}
	}
	if v, ok := empty.Recall("k"); !ok || v != 2 {
		t.Fatal("a message without parts did not keep its value")
	}

	// Keeping a value for the new content replaces the stale one.
	replaced.Remember("k", 3)
	if v, _ := replaced.Recall("k"); v != 3 {
		t.Fatal("the replaced message did not keep its value")
	}
	if _, ok := m.Recall("k"); ok {
		t.Fatal("the original recalled its copy's value for other parts")
	}
}

func TestMemoKeepsTheLatestKeys(t *testing.T) {
	m := Message{Role: RoleUser}.Memoized()
	for i := range memoEntries + 2 {
		m.Remember(i, i)
	}
	for i := range memoEntries + 2 {
		_, ok := m.Recall(i)
		if want := i >= 2; ok != want {
			t.Errorf("key %d: recalled %v, want %v", i, ok, want)
		}
	}
}

func TestMemoConcurrent(t *testing.T) {
	m := Message{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "x"}}}.Memoized()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			c := m
			for i := range 200 {
				k := (g + i) % 6
				if v, ok := c.Recall(k); ok && v != k {
					t.Errorf("key %d: recalled %v", k, v)
					return
				}
				c.Remember(k, k)
			}
		})
	}
	wg.Wait()
}

// TestPrefix: a value kept for a request's messages serves a later request
// whose messages extend them in the same array, and nothing else.
func TestPrefix(t *testing.T) {
	msg := func(s string) Message {
		return Message{Role: RoleUser, Parts: []Part{{Type: PartText, Text: s}}}.Memoized()
	}
	arr := make([]Message, 0, 8)
	for _, s := range []string{"a", "b", "c", "d"} {
		arr = append(arr, msg(s))
	}
	KeepPrefix(arr[:3:3], "k", "v3")
	if v, n := Prefix(arr[:4:4], "k"); v != "v3" || n != 3 {
		t.Fatalf("an extension: %v %d, want v3 3", v, n)
	}
	if v, n := Prefix(arr[:3:3], "k"); v != "v3" || n != 3 {
		t.Fatalf("the same messages: %v %d, want v3 3", v, n)
	}
	if v, _ := Prefix(arr[:2:2], "k"); v != nil {
		t.Fatal("a shorter list recalled the value")
	}
	if v, _ := Prefix(arr[:4:4], "other"); v != nil {
		t.Fatal("recalled under another key")
	}
	// Another array of the same messages (the transcript outgrew its
	// array, a fork): each is checked.
	moved := append([]Message(nil), arr...)
	if v, n := Prefix(moved, "k"); v != "v3" || n != 3 {
		t.Fatalf("the same messages in another array: %v %d, want v3 3", v, n)
	}
	moved[1] = msg("b")
	if v, _ := Prefix(moved, "k"); v != nil {
		t.Fatal("another array with another message recalled the value")
	}
	compacted := append([]Message{msg("summary")}, arr[2:]...)
	if v, _ := Prefix(compacted, "k"); v != nil {
		t.Fatal("a compacted transcript recalled the value")
	}
	// A rewind that appends over the array: the third message is another.
	rewound := append(arr[:2], msg("x"), msg("y"))
	if &rewound[0] != &arr[0] {
		t.Fatal("the rewind did not reuse the array")
	}
	if v, _ := Prefix(rewound, "k"); v != nil {
		t.Fatal("a rewound list recalled the value")
	}
	// A rewind over the array, then the transcript outgrows it: its
	// messages from the rewind on are others.
	arr = append(arr[:0], msg("a"), msg("b"), msg("c"))
	KeepPrefix(arr[:3], "k", "abc")
	grown := append(append(arr[:1], msg("x")), make([]Message, cap(arr))...)
	grown = append(grown[:2], msg("y"))
	if v, _ := Prefix(grown, "k"); v != nil {
		t.Fatal("a rewound list in another array recalled the value")
	}
	// The third message's parts replaced: not the message kept for.
	arr = append(arr[:2], msg("c"), msg("d"))
	KeepPrefix(arr[:3], "k", "again")
	arr[2].Parts = []Part{{Type: PartText, Text: "c"}}
	if v, _ := Prefix(arr, "k"); v != nil {
		t.Fatal("a list whose last kept message changed recalled the value")
	}
	// Without memos nothing is kept.
	plain := []Message{{Role: RoleUser}, {Role: RoleUser}}
	KeepPrefix(plain, "k", "v")
	if v, _ := Prefix(plain, "k"); v != nil {
		t.Fatal("messages without memos kept a value")
	}
}
