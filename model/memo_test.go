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
