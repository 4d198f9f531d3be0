// Package retry wraps a [model.Backend] with retries of transient
// failures.
//
// # Design: retries are silent or not at all
//
// A retry repeats the whole request, so it is only invisible to the
// consumer when the failed attempt yielded nothing. The wrapper therefore
// retries an attempt only when
//
//   - it failed with a *model.Error whose Retryable() is true (rate limit,
//     overloaded, server, network; never auth, quota, context overflow,
//     invalid request, nor a context error), and
//   - it had not yielded any event yet, and
//   - attempts remain and the server's RetryAfter hint is not longer than
//     Policy.MaxRetryAfter.
//
// Once an attempt has yielded events, a failure is returned unchanged as
// the stream's last element: the wrapper never splices a second response
// onto a partial one. The consumer (the agent loop) owns that case: it
// keeps what it received as an interrupted assistant message
// ([model.Message].Interrupted) and, if the error is retryable, may call
// Stream again; that new call is again retried silently until it yields.
// The consumer must bound such restarts itself.
package retry

import (
	"context"
	"errors"
	"iter"
	"math/rand/v2"
	"time"

	"acpd/internal/ctxsleep"
	"acpd/model"
)

// Defaults of [Policy] fields left zero.
const (
	DefaultMaxAttempts   = 4
	DefaultMaxRetryAfter = time.Minute
)

// Policy configures [Wrap]. The zero value uses every default.
type Policy struct {
	// MaxAttempts is the total number of attempts per Stream call, the
	// first included; 0 or less means DefaultMaxAttempts.
	MaxAttempts int
	// Backoff returns the delay after failed attempt number attempt
	// (1-based); nil means [DefaultBackoff]. The delay used is the larger
	// of Backoff's and the error's RetryAfter.
	Backoff func(attempt int) time.Duration
	// MaxRetryAfter is the longest server-requested delay the wrapper
	// waits; a longer RetryAfter ends retrying and returns the error.
	// 0 or less means DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// Sleep waits d, returning early with ctx's error when ctx ends; nil
	// means a timer. Tests inject it.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetry, if set, is called before each silent retry with the number
	// of the failed attempt, its error and the delay about to be waited.
	// It runs on the consumer's goroutine and must not block.
	OnRetry func(attempt int, err error, delay time.Duration)
}

// DefaultBackoff is exponential from 1s doubling to a 30s cap, with
// "equal jitter": a random delay in [d/2, d].
func DefaultBackoff(attempt int) time.Duration {
	attempt = max(attempt, 1)
	d := 30 * time.Second
	if attempt <= 5 {
		d = time.Second << (attempt - 1)
	}
	return d/2 + rand.N(d/2+1)
}

// Wrap returns a Backend that retries b's transient failures according to
// p (see the package documentation). It is safe for concurrent use when b
// is; p's functions are called concurrently by concurrent streams.
func Wrap(b model.Backend, p Policy) model.Backend {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.Backoff == nil {
		p.Backoff = DefaultBackoff
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if p.Sleep == nil {
		p.Sleep = ctxsleep.Sleep
	}
	return &backend{b: b, p: p}
}

type backend struct {
	b model.Backend
	p Policy
}

// Stream implements [model.Backend].
func (r *backend) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		for attempt := 1; ; attempt++ {
			yielded := false
			var failure error
			for ev, err := range r.b.Stream(ctx, req) {
				if err != nil {
					failure = err
					break
				}
				yielded = true
				if !yield(ev, nil) {
					return
				}
			}
			if failure == nil {
				return
			}
			delay, ok := r.retryDelay(ctx, attempt, failure, yielded)
			if !ok {
				yield(model.Event{}, failure)
				return
			}
			if r.p.OnRetry != nil {
				r.p.OnRetry(attempt, failure, delay)
			}
			if err := r.p.Sleep(ctx, delay); err != nil {
				yield(model.Event{}, err)
				return
			}
		}
	}
}

// retryDelay decides whether failed attempt number attempt is retried, and
// after which delay.
func (r *backend) retryDelay(ctx context.Context, attempt int, err error, yielded bool) (time.Duration, bool) {
	var me *model.Error
	if yielded || attempt >= r.p.MaxAttempts || ctx.Err() != nil ||
		!errors.As(err, &me) || !me.Retryable() || me.RetryAfter > r.p.MaxRetryAfter {
		return 0, false
	}
	return max(r.p.Backoff(attempt), me.RetryAfter), true
}
