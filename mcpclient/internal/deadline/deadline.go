// Package deadline is a context deadline that can be pushed back: a
// connection attempt's or a tool call's, while a person authorizes the
// server it waits for (mcpclient's timeouts, mcpclient/oauth's
// authorization step).
package deadline

import (
	"context"
	"sync"
	"time"
)

// extendKey is the context key of a deadline's extender.
type extendKey struct{}

// WithTimeout is context.WithTimeout whose deadline [Extend] can push back
// (while a person authorizes a server). The context ends with the cause
// context.DeadlineExceeded at the deadline.
func WithTimeout(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
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
	return WithExtender(ctx, extend), func() {
		timer.Stop()
		cancel(context.Canceled)
	}
}

// WithExtender returns ctx whose deadline [Extend] pushes back by calling
// extend with the time wanted from now (a tool call's own timer does).
func WithExtender(ctx context.Context, extend func(time.Duration)) context.Context {
	return context.WithValue(ctx, extendKey{}, extend)
}

// Extend gives ctx at least d from now, when its deadline is one of
// [WithTimeout] or [WithExtender]; otherwise it does nothing.
func Extend(ctx context.Context, d time.Duration) {
	if extend, ok := ctx.Value(extendKey{}).(func(time.Duration)); ok {
		extend(d)
	}
}
