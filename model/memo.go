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

// sameMessage reports whether a and b are the same message as far as a
// memo can tell: one memo, role and parts.
func sameMessage(a, b Message) bool {
	return a.memo == b.memo && a.Role == b.Role && first(a.Parts) == first(b.Parts) && len(a.Parts) == len(b.Parts)
}

// prefixKey is the key under which a request's first message keeps what a
// dialect derived from the request's messages as a whole ([KeepPrefix]).
type prefixKey struct{ key any }

// prefixEntry is a value kept by [KeepPrefix]: v, derived from msgs, the
// last of which was last (a copy: msgs's array may be written over).
type prefixEntry struct {
	msgs []Message
	last Message
	v    any
}

// Prefix returns the value kept under key by [KeepPrefix] for the first n
// messages of msgs, and n: a dialect that keeps what it derives from a
// request's messages (their encodings, the body's length so far) thus
// derives a later request's from its new messages only, instead of
// walking the whole history. It returns nil and 0 when nothing is kept
// for msgs.
//
// The value was kept for messages each of which is the same message (its
// memo, role and parts, as [Message.Recall] tells) as the one at its index
// in msgs. When msgs starts at the same array element as they did, only
// the last of them is checked: msgs extends them when the caller follows
// the rule that makes a shared transcript safe, that a message of a slice
// passed in a request is never modified in place, only appended to or
// replaced with a new array (the agent's transcript: a compaction or a
// rewind makes a new one), and a truncation followed by appends (the
// array reused) fails that check. In another array (the transcript grew
// out of its array, a fork) each is checked, which reads the two arrays
// and nothing they point to. Each message needs a memo
// ([Message.Memoized]); msgs[0]'s keeps the value.
func Prefix(msgs []Message, key any) (any, int) {
	if len(msgs) == 0 {
		return nil, 0
	}
	v, ok := msgs[0].Recall(prefixKey{key})
	if !ok {
		return nil, 0
	}
	e := v.(*prefixEntry)
	n := len(e.msgs)
	if n > len(msgs) {
		return nil, 0
	}
	if !sameMessage(e.last, msgs[n-1]) {
		return nil, 0
	}
	if &e.msgs[0] == &msgs[0] {
		return e.v, n
	}
	for i := range e.msgs {
		if !sameMessage(e.msgs[i], msgs[i]) {
			return nil, 0
		}
	}
	return e.v, n
}

// KeepPrefix keeps v (not nil) under key as derived from all of msgs, for
// [Prefix]; it does nothing when msgs is empty or its first or last
// message has no memo. key must be comparable and say everything v
// depends on besides the messages. The caller must not modify msgs after.
func KeepPrefix(msgs []Message, key, v any) {
	if len(msgs) == 0 || v == nil || msgs[len(msgs)-1].memo == nil {
		return
	}
	n := len(msgs)
	msgs[0].Remember(prefixKey{key}, &prefixEntry{msgs: msgs[:n:n], last: msgs[n-1], v: v})
}
