// Package turnslot is a session's prompt turn slot: at most one turn runs
// at a time. A prompt that arrives while a cancelled turn is winding down,
// or while a finished turn's reply is being written, waits for it (editors
// send session/cancel then the next prompt at once, and may send the next
// prompt as soon as they read a reply); any other overlap is refused. A
// cancel also cancels the prompts read before it whose turns have not
// begun.
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
	// ErrBusy: a running, uncancelled turn overlaps the prompt.
	ErrBusy = errors.New("turn in progress")
	// ErrCancelledEarly: the prompt was cancelled before its turn began.
	ErrCancelledEarly = errors.New("prompt cancelled before its turn began")
)

// Slot holds a session's running turn.
type Slot struct {
	mu     sync.Mutex
	cur    *Turn
	closed bool
	// cancelledBefore is the arrival of the latest cancel: a prompt read
	// before it is cancelled even when its turn had not begun.
	cancelledBefore uint64
}

// Turn is a running prompt turn.
type Turn struct {
	slot   *Slot
	ctx    context.Context // ends when the turn is cancelled, by any means
	cancel context.CancelFunc
	done   chan struct{}
	// cancelled: Cancel or Close hit the turn. replying: its prompt
	// handler returned and its reply is being written. Guarded by slot.mu.
	cancelled, replying bool
}

// Begin starts a turn for a prompt whose request context is ctx and which
// arrived at arrival (its order of reading; 0 when unknown), waiting as the
// package doc says. The turn's context derives from ctx.
func (s *Slot) Begin(ctx context.Context, arrival uint64) (*Turn, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		if arrival != 0 && arrival < s.cancelledBefore {
			s.mu.Unlock()
			return nil, ErrCancelledEarly
		}
		cur := s.cur
		if cur == nil {
			tctx, cancel := context.WithCancel(ctx)
			t := &Turn{slot: s, ctx: tctx, cancel: cancel, done: make(chan struct{})}
			s.cur = t
			s.mu.Unlock()
			return t, nil
		}
		// A turn whose request the client cancelled ($/cancel_request) is
		// winding down too.
		wait := cur.cancelled || cur.replying || cur.ctx.Err() != nil
		s.mu.Unlock()
		if !wait {
			return nil, ErrBusy
		}
		select {
		case <-cur.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Cancel cancels the running turn, if any, and every prompt that arrived
// before arrival (0 when unknown) whose turn has not begun yet. It never
// blocks.
func (s *Slot) Cancel(arrival uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelledBefore = max(s.cancelledBefore, arrival)
	if s.cur != nil {
		s.cur.cancelled = true
		s.cur.cancel()
	}
}

// Running returns the running turn's context; false when none runs.
func (s *Slot) Running() (context.Context, bool) {
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
func (s *Slot) Close() (<-chan struct{}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, false
	}
	s.closed = true
	if t := s.cur; t != nil {
		t.cancelled = true
		t.cancel()
		return t.done, true
	}
	return nil, true
}

// Context ends when the turn is cancelled, by any means.
func (t *Turn) Context() context.Context { return t.ctx }

// Replying records that the turn's prompt handler returned.
func (t *Turn) Replying() {
	t.slot.mu.Lock()
	t.replying = true
	t.slot.mu.Unlock()
}

// End releases the slot (once the turn's reply is written).
func (t *Turn) End() {
	t.slot.mu.Lock()
	if t.slot.cur == t {
		t.slot.cur = nil
	}
	t.slot.mu.Unlock()
	t.cancel()
	close(t.done)
}

// Cancelled reports whether Cancel or Close hit the turn.
func (t *Turn) Cancelled() bool {
	t.slot.mu.Lock()
	defer t.slot.mu.Unlock()
	return t.cancelled
}
