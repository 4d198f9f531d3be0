package model

import (
	"sync"
	"sync/atomic"
)

// A Memo keeps what dialects derive from one transcript message between
// requests (its encoded form in each request body shape), so that a
// request of a long conversation encodes only its new messages and writes
// the kept bytes of the others. A message gets one with
// [Message.Memoized]; the copies of that message value share it, so a
// memo made for a session's transcript serves every request built from
// copies of it, breakpoint marks and all.
//
// A kept value is tied to the message's Role and Parts as they were when it
// was kept (the Parts slice itself: its first element's address and its
// length): a copy whose Parts were replaced or extended, or whose Role
// changed, does not see it. Parts of a transcript message are never
// modified in place (copies of the message share them), so this identity
// is its content's. Everything else a value depends on (the Cache mark,
// the dialect's options) belongs in its key.
//
// A Memo is safe for concurrent use; the values kept in it must not be
// modified once kept.
type Memo struct {
	// entries is read without a lock (a request reads every message's);
	// Remember replaces it, under mu, with a changed copy.
	entries atomic.Pointer[memoTable]
	mu      sync.Mutex
}

type memoTable struct {
	e    [memoEntries]memoEntry
	next int // the entry Remember replaces when all are taken
}

// memoEntries is how many values a message keeps: one or two per dialect
// (with and without a breakpoint), for a session that changes models once
// or twice.
const memoEntries = 4

type memoEntry struct {
	key   any
	role  Role
	parts *Part
	n     int
	val   any
}

// Memoized returns m with a memo (see [Memo]): m's own when it has one,
// else a new one.
func (m Message) Memoized() Message {
	if m.memo == nil {
		m.memo = new(Memo)
	}
	return m
}

// first is the address of ps's first element, nil when ps is empty.
func first(ps []Part) *Part {
	if len(ps) == 0 {
		return nil
	}
	return &ps[0]
}

// Recall returns the value kept under key for m by [Message.Remember]
// when m has the Role and Parts it had then.
func (m Message) Recall(key any) (any, bool) {
	if m.memo == nil {
		return nil, false
	}
	t := m.memo.entries.Load()
	if t == nil {
		return nil, false
	}
	p := first(m.Parts)
	for i := range t.e {
		e := &t.e[i]
		if e.val != nil && e.key == key && e.role == m.Role && e.parts == p && e.n == len(m.Parts) {
			return e.val, true
		}
	}
	return nil, false
}

// Remember keeps v (not nil) under key for m as it is now, replacing a
// value kept under key before; it does nothing when m has no memo. key
// must be comparable and say everything v depends on besides m's Role and
// Parts.
func (m Message) Remember(key, v any) {
	if m.memo == nil || v == nil {
		return
	}
	e := memoEntry{key: key, role: m.Role, parts: first(m.Parts), n: len(m.Parts), val: v}
	m.memo.mu.Lock()
	defer m.memo.mu.Unlock()
	t := new(memoTable)
	if old := m.memo.entries.Load(); old != nil {
		*t = *old
	}
	defer m.memo.entries.Store(t)
	for i := range t.e {
		if t.e[i].val == nil || t.e[i].key == key {
			t.e[i] = e
			return
		}
	}
	t.e[t.next] = e
	t.next = (t.next + 1) % memoEntries
}
