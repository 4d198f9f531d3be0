package mcpclient

import (
	"context"
	"sync"
	"time"
)

// extendKey is the context key of a deadline's extender.
type extendKey struct{}

// withExtendableTimeout is context.WithTimeout whose deadline
// [extendDeadline] can push back (while a person authorizes a server). The
// context ends with the cause context.DeadlineExceeded at the deadline.
func withExtendableTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	var mu sync.Mutex
	end := time.Now().Add(d)
	timer := time.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	extend := func(d time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if e := time.Now().Add(d); e.After(end) && timer.Stop() {
			end = e
			timer.Reset(d)
		}
	}
	return context.WithValue(ctx, extendKey{}, extend), func() {
		timer.Stop()
		cancel(context.Canceled)
	}
}

// extendDeadline gives ctx at least d from now, when its deadline is one
// of withExtendableTimeout (or a tool call's).
func extendDeadline(ctx context.Context, d time.Duration) {
	if extend, ok := ctx.Value(extendKey{}).(func(time.Duration)); ok {
		extend(d)
	}
}
