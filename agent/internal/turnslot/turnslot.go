// Package turnslot is a session's prompt turn slot: at most one turn runs
// at a time. A prompt that arrives while a turn runs is queued: it waits,
// in arrival order, and becomes the next turn when the running one ends
// (editors send the next prompt as soon as the user types it, or
// session/cancel then the next prompt at once). At most MaxQueued prompts
// wait; one more is refused (ErrBusy). A cancel cancels the running turn
// and every prompt read before it whose turn has not begun, so a cancel
// drops the queue.
//
// A turn also takes steering messages ([Slot.Steer]): values of type S
// that join the running turn instead of waiting for the next one. They
// wait in the turn's inbox until the turn takes them ([Turn.Steered]) at
// its next model-request boundary; the turn closes the inbox when it is
// about to end with nothing left in it, so a message can never arrive
// after the turn's last look. A cancel leaves what the inbox holds for the
// turn's handler to report ([Turn.Steered] again) and takes no more.
//
// A [Slot] is safe for concurrent use; its zero value is an open, empty
// slot. The prompt handler that began a [Turn] owns it: it calls
// [Turn.Replying] when it returns and [Turn.End] once its reply is written.
package turnslot

import (
	"context"
	"errors"
	"sync"
)

// Errors of [Slot.Begin].
var (
	// ErrClosed: the session is closed.
	ErrClosed = errors.New("the session is closed")
	// ErrBusy: MaxQueued prompts already wait for the running turn.
	ErrBusy = errors.New("turn in progress and too many prompts queued")
	// ErrCancelledEarly: the prompt was cancelled before its turn began.
	ErrCancelledEarly = errors.New("prompt cancelled before its turn began")
)

// MaxQueued bounds the prompts waiting for the running turn.
const MaxQueued = 16

// Slot holds a session's running turn.
type Slot[S any] struct {
	mu     sync.Mutex
	cur    *Turn[S]
	closed bool
	// queue holds the tickets of the prompts waiting, in arrival order;
	// next is the next ticket; changed is closed (and replaced) whenever
	// a waiter may be able to go on.
	queue   []uint64
	next    uint64
	changed chan struct{}
	// cancelledBefore is the arrival of the latest cancel: a prompt read
	// before it is cancelled even when its turn had not begun.
	cancelledBefore uint64
}

// Turn is a running prompt turn.
type Turn[S any] struct {
	slot   *Slot[S]
	ctx    context.Context // ends when the turn is cancelled, by any means
	cancel context.CancelFunc
	done   chan struct{}
	// cancelled: Cancel or Close hit the turn. replying: its prompt
	// handler returned and its reply is being written. shut: the turn
	// takes no more steering messages. Guarded by slot.mu.
	cancelled, replying, shut bool
	// inbox holds the steering messages not taken yet, in arrival order
	// (guarded by slot.mu).
	inbox []S
}

// Begin starts a turn for a prompt whose request context is ctx and which
// arrived at arrival (its order of reading; 0 when unknown), waiting as the
// package doc says. The turn's context derives from ctx.
func (s *Slot[S]) Begin(ctx context.Context, arrival uint64) (*Turn[S], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if arrival != 0 && arrival < s.cancelledBefore {
		return nil, ErrCancelledEarly
	}
	if s.cur == nil && len(s.queue) == 0 {
		return s.beginLocked(ctx), nil
	}
	if len(s.queue) >= MaxQueued {
		return nil, ErrBusy
	}
	s.next++
	ticket := s.next
	s.queue = append(s.queue, ticket)
	defer s.leaveLocked(ticket)
	for {
		if s.closed {
			return nil, ErrClosed
		}
		if arrival != 0 && arrival < s.cancelledBefore {
			return nil, ErrCancelledEarly
		}
		if s.cur == nil && s.queue[0] == ticket {
			return s.beginLocked(ctx), nil
		}
		wait := s.changedLocked()
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			s.mu.Lock()
			return nil, ctx.Err()
		}
		s.mu.Lock()
	}
}

// beginLocked makes a turn for a prompt whose request context is ctx the
// running one.
func (s *Slot[S]) beginLocked(ctx context.Context) *Turn[S] {
	tctx, cancel := context.WithCancel(ctx)
	t := &Turn[S]{slot: s, ctx: tctx, cancel: cancel, done: make(chan struct{})}
	s.cur = t
	return t
}

// leaveLocked takes ticket out of the queue and wakes the others.
func (s *Slot[S]) leaveLocked(ticket uint64) {
	for i, q := range s.queue {
		if q == ticket {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			break
		}
	}
	s.wakeLocked()
}

// changedLocked is the channel the next wake closes.
func (s *Slot[S]) changedLocked() chan struct{} {
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// wakeLocked wakes every waiter to look again.
func (s *Slot[S]) wakeLocked() {
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
}

// Queued is the number of prompts waiting for the running turn.
func (s *Slot[S]) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Cancel cancels the running turn, if any, and every prompt that arrived
// before arrival (0 when unknown) whose turn has not begun yet. It never
// blocks.
func (s *Slot[S]) Cancel(arrival uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelledBefore = max(s.cancelledBefore, arrival)
	if s.cur != nil {
		s.cur.cancelled = true
		s.cur.cancel()
	}
	s.wakeLocked()
}

// Running returns the running turn's context; false when none runs.
func (s *Slot[S]) Running() (context.Context, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return nil, false
	}
	return s.cur.ctx, true
}

// Close closes the slot (later Begins fail with ErrClosed) and cancels the
// running turn. It returns a channel closed when that turn ended (nil
// without one), and false when the slot was already closed.
func (s *Slot[S]) Close() (<-chan struct{}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false
	}
	s.closed = true
	s.wakeLocked()
	if t := s.cur; t != nil {
		t.cancelled = true
		t.cancel()
		return t.done, true
	}
	return nil, true
}

// Context ends when the turn is cancelled, by any means.
func (t *Turn[S]) Context() context.Context { return t.ctx }

// Replying records that the turn's prompt handler returned.
func (t *Turn[S]) Replying() {
	t.slot.mu.Lock()
	t.replying = true
	t.slot.mu.Unlock()
}

// End releases the slot (once the turn's reply is written).
func (t *Turn[S]) End() {
	t.slot.mu.Lock()
	if t.slot.cur == t {
		t.slot.cur = nil
	}
	t.slot.wakeLocked()
	t.slot.mu.Unlock()
	t.cancel()
	close(t.done)
}

// Cancelled reports whether Cancel or Close hit the turn.
func (t *Turn[S]) Cancelled() bool {
	t.slot.mu.Lock()
	defer t.slot.mu.Unlock()
	return t.cancelled
}

// MaxSteered bounds the steering messages waiting in a turn's inbox.
const MaxSteered = 16

// Steer hands v to the running turn and reports whether it took it: false
// when no turn runs, or the running one was cancelled, is replying, has
// closed its inbox (see [Turn.Steered]) or holds MaxSteered messages
// already. It never blocks.
func (s *Slot[S]) Steer(v S) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.cur
	if s.closed || t == nil || t.cancelled || t.replying || t.shut || len(t.inbox) >= MaxSteered {
		return false
	}
	t.inbox = append(t.inbox, v)
	return true
}

// Steered takes the steering messages waiting for the turn, in arrival
// order. With last (the turn is about to end) and none waiting, the turn
// closes its inbox: later [Slot.Steer]s fail. After a cancel it returns
// what was waiting when the cancel came (none is added after it).
func (t *Turn[S]) Steered(last bool) []S {
	t.slot.mu.Lock()
	defer t.slot.mu.Unlock()
	in := t.inbox
	t.inbox = nil
	if last && len(in) == 0 {
		t.shut = true
	}
	return in
}

// Shut closes the turn's inbox (a turn that makes no model request takes
// no steering) and returns the messages it held.
func (t *Turn[S]) Shut() []S {
	t.slot.mu.Lock()
	defer t.slot.mu.Unlock()
	in := t.inbox
	t.inbox, t.shut = nil, true
	return in
}
