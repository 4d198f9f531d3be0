package mcpclient

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"acpd/mcpclient/internal/deadline"
)

// progressInterval is the shortest time between two progress callbacks of
// one call (about ten per second).
const progressInterval = 100 * time.Millisecond

// progressTable routes progress notifications to the calls that asked for
// them and runs each call's timeout.
type progressTable struct {
	mu    sync.Mutex
	seq   uint64
	calls map[string]*callState
}

// callState is one tool call in flight.
type callState struct {
	token    string
	start    time.Time
	long     time.Duration // the timeout once progress was reported
	timer    *time.Timer
	cancel   context.CancelCauseFunc
	onUpdate func(Progress)

	// guarded by progressTable.mu
	progressed bool
	last       time.Time
	deadline   time.Time // when timer fires
}

// begin registers a call: the returned context ends after short (or long,
// counted from now, once the server reports progress; or later, see
// [deadline.Extend]) with an ErrTimeout cause.
func (t *progressTable) begin(ctx context.Context, short, long time.Duration, onUpdate func(Progress)) (context.Context, *callState) {
	ctx, cancel := context.WithCancelCause(ctx)
	t.mu.Lock()
	t.seq++
	now := time.Now()
	cs := &callState{token: "acpd-" + strconv.FormatUint(t.seq, 10), start: now, long: long, cancel: cancel, onUpdate: onUpdate, deadline: now.Add(short)}
	t.calls[cs.token] = cs
	cs.timer = time.AfterFunc(short, func() {
		t.mu.Lock()
		d := cs.deadline.Sub(cs.start)
		t.mu.Unlock()
		cancel(fmt.Errorf("%w after %v", ErrTimeout, d))
	})
	t.mu.Unlock()
	extend := func(d time.Duration) {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.postponeLocked(cs, time.Now().Add(d))
	}
	return deadline.WithExtender(ctx, extend), cs
}

// postponeLocked moves cs's deadline to dl if that is later and the call
// has not timed out yet.
func (t *progressTable) postponeLocked(cs *callState, dl time.Time) {
	if dl.After(cs.deadline) && cs.timer.Stop() {
		cs.deadline = dl
		cs.timer.Reset(time.Until(dl))
	}
}

// end unregisters cs and releases its timer and context.
func (t *progressTable) end(cs *callState) {
	cs.timer.Stop()
	cs.cancel(nil)
	t.mu.Lock()
	delete(t.calls, cs.token)
	t.mu.Unlock()
}

// handle is the SDK's progress notification handler.
func (t *progressTable) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	t.mu.Lock()
	cs := t.calls[token]
	if cs == nil {
		t.mu.Unlock()
		return
	}
	if !cs.progressed {
		cs.progressed = true
		// From now on the longer limit applies, counted from the start.
		t.postponeLocked(cs, cs.start.Add(cs.long))
	}
	now := time.Now()
	final := p.Total > 0 && p.Progress >= p.Total
	deliver := cs.onUpdate != nil && (final || now.Sub(cs.last) >= progressInterval)
	if deliver {
		cs.last = now
	}
	t.mu.Unlock()
	if deliver {
		cs.onUpdate(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}
