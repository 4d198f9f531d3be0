package retry

import (
	"context"
	"errors"
	"iter"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"acpd/model"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// script is a fake backend whose n-th Stream call yields attempts[n].
type script struct {
	mu       sync.Mutex
	attempts [][]any // model.Event or error elements
	calls    int
}

func (s *script) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	s.mu.Lock()
	elems := s.attempts[min(s.calls, len(s.attempts)-1)]
	s.calls++
	s.mu.Unlock()
	return func(yield func(model.Event, error) bool) {
		for _, e := range elems {
			var ok bool
			switch e := e.(type) {
			case model.Event:
				ok = yield(e, nil)
			case error:
				ok = yield(model.Event{}, e)
			}
			if !ok {
				return
			}
		}
	}
}

var (
	text   = model.Event{Type: model.EventText, Text: "hi"}
	finish = model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}
	ok     = []any{text, finish}
)

func kindErr(k model.ErrorKind, retryAfter time.Duration) error {
	return &model.Error{Kind: k, RetryAfter: retryAfter, Message: string(k)}
}

type recorder struct {
	sleeps  []time.Duration
	retries []int
}

func (r *recorder) policy(max int) Policy {
	return Policy{
		MaxAttempts: max,
		Backoff:     func(attempt int) time.Duration { return time.Duration(attempt) * time.Millisecond },
		Sleep: func(ctx context.Context, d time.Duration) error {
			r.sleeps = append(r.sleeps, d)
			return ctx.Err()
		},
		OnRetry: func(attempt int, err error, delay time.Duration) { r.retries = append(r.retries, attempt) },
	}
}

func collect(seq iter.Seq2[model.Event, error]) ([]model.Event, error) {
	var evs []model.Event
	for ev, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

func TestRetryDecisions(t *testing.T) {
	wrapped := errors.New("plain")
	tests := []struct {
		name     string
		attempts [][]any
		max      int
		calls    int
		sleeps   []time.Duration
		events   int
		err      model.ErrorKind
	}{
		{name: "success", attempts: [][]any{ok}, calls: 1, events: 2},
		{name: "rate limit then success", attempts: [][]any{{kindErr(model.ErrRateLimit, 0)}, ok}, calls: 2, sleeps: []time.Duration{time.Millisecond}, events: 2},
		{name: "retry-after wins when larger", attempts: [][]any{{kindErr(model.ErrRateLimit, 2*time.Second)}, ok}, calls: 2, sleeps: []time.Duration{2 * time.Second}, events: 2},
		{name: "backoff wins when larger", attempts: [][]any{{kindErr(model.ErrOverloaded, time.Microsecond)}, ok}, calls: 2, sleeps: []time.Duration{time.Millisecond}, events: 2},
		{name: "exhausted", attempts: [][]any{{kindErr(model.ErrServer, 0)}}, max: 3, calls: 3, sleeps: []time.Duration{time.Millisecond, 2 * time.Millisecond}, err: model.ErrServer},
		{name: "network then success", attempts: [][]any{{kindErr(model.ErrNetwork, 0)}, {kindErr(model.ErrNetwork, 0)}, ok}, calls: 3, sleeps: []time.Duration{time.Millisecond, 2 * time.Millisecond}, events: 2},
		{name: "quota not retried", attempts: [][]any{{kindErr(model.ErrQuota, time.Second)}, ok}, calls: 1, err: model.ErrQuota},
		{name: "auth not retried", attempts: [][]any{{kindErr(model.ErrAuth, 0)}, ok}, calls: 1, err: model.ErrAuth},
		{name: "overflow not retried", attempts: [][]any{{kindErr(model.ErrContextOverflow, 0)}, ok}, calls: 1, err: model.ErrContextOverflow},
		{name: "invalid not retried", attempts: [][]any{{kindErr(model.ErrInvalidRequest, 0)}, ok}, calls: 1, err: model.ErrInvalidRequest},
		{name: "plain error not retried", attempts: [][]any{{wrapped}, ok}, calls: 1},
		{name: "retry-after too long", attempts: [][]any{{kindErr(model.ErrRateLimit, time.Hour)}, ok}, calls: 1, err: model.ErrRateLimit},
		{name: "after deltas not retried", attempts: [][]any{{text, kindErr(model.ErrNetwork, 0)}, ok}, calls: 1, events: 1, err: model.ErrNetwork},
		{name: "one attempt", attempts: [][]any{{kindErr(model.ErrServer, 0)}, ok}, max: 1, calls: 1, err: model.ErrServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &script{attempts: tt.attempts}
			var rec recorder
			evs, err := collect(Wrap(s, rec.policy(tt.max)).Stream(t.Context(), &model.Request{}))
			if s.calls != tt.calls || len(evs) != tt.events {
				t.Errorf("calls %d events %d, want %d %d", s.calls, len(evs), tt.calls, tt.events)
			}
			if model.KindOf(err) != tt.err {
				t.Errorf("err = %v, want kind %q", err, tt.err)
			}
			if tt.name == "plain error not retried" && err != wrapped {
				t.Errorf("err = %v, want the original error", err)
			}
			if len(rec.sleeps) != len(tt.sleeps) || len(rec.retries) != len(tt.sleeps) {
				t.Fatalf("sleeps %v retries %v, want %v", rec.sleeps, rec.retries, tt.sleeps)
			}
			for i := range tt.sleeps {
				if rec.sleeps[i] != tt.sleeps[i] || rec.retries[i] != i+1 {
					t.Errorf("retry %d: slept %v after attempt %d, want %v after %d", i, rec.sleeps[i], rec.retries[i], tt.sleeps[i], i+1)
				}
			}
		})
	}
}

func TestRetryStopsWhenConsumerStops(t *testing.T) {
	s := &script{attempts: [][]any{ok}}
	for range Wrap(s, Policy{}).Stream(t.Context(), &model.Request{}) {
		break
	}
	if s.calls != 1 {
		t.Errorf("calls = %d", s.calls)
	}
}

func TestRetryContextEndsSleep(t *testing.T) {
	s := &script{attempts: [][]any{{kindErr(model.ErrOverloaded, 0)}, ok}}
	ctx, cancel := context.WithCancel(t.Context())
	p := Policy{
		Backoff: func(int) time.Duration { return time.Hour },
		OnRetry: func(int, error, time.Duration) { cancel() },
	}
	evs, err := collect(Wrap(s, p).Stream(ctx, &model.Request{}))
	if err != context.Canceled || len(evs) != 0 || s.calls != 1 {
		t.Fatalf("events %v err %v calls %d", evs, err, s.calls)
	}
}

func TestRetryNotAfterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s := &script{attempts: [][]any{{kindErr(model.ErrNetwork, 0)}, ok}}
	_, err := collect(Wrap(s, Policy{}).Stream(ctx, &model.Request{}))
	if model.KindOf(err) != model.ErrNetwork || s.calls != 1 {
		t.Fatalf("err %v calls %d", err, s.calls)
	}
}

func TestDefaultBackoff(t *testing.T) {
	for attempt := -1; attempt <= 12; attempt++ {
		base := 30 * time.Second
		if attempt <= 5 {
			base = time.Second << (max(attempt, 1) - 1)
		}
		for range 50 {
			d := DefaultBackoff(attempt)
			if d < base/2 || d > base || d > 30*time.Second {
				t.Fatalf("DefaultBackoff(%d) = %v, want in [%v, %v]", attempt, d, base/2, base)
			}
		}
	}
}
