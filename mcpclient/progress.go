package mcpclient

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
}

// begin registers a call: the returned context ends after short (or long,
// counted from now, once the server reports progress) with an ErrTimeout
// cause.
func (t *progressTable) begin(ctx context.Context, short, long time.Duration, onUpdate func(Progress)) (context.Context, *callState) {
	ctx, cancel := context.WithCancelCause(ctx)
	t.mu.Lock()
	t.seq++
	cs := &callState{token: "acpd-" + strconv.FormatUint(t.seq, 10), start: time.Now(), long: long, cancel: cancel, onUpdate: onUpdate}
	t.calls[cs.token] = cs
	t.mu.Unlock()
	cs.timer = time.AfterFunc(short, func() {
		t.mu.Lock()
		long := cs.progressed
		t.mu.Unlock()
		d := short
		if long {
			d = cs.long
		}
		cancel(fmt.Errorf("%w after %v", ErrTimeout, d))
	})
	return ctx, cs
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
		if remaining := cs.long - time.Since(cs.start); remaining > 0 && cs.timer.Stop() {
			cs.timer.Reset(remaining)
		}
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
