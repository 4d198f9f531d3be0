package filelock

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestPoll: Poll retries until try succeeds, returns try's error, gives up
// with ErrTimeout after its timeout and with the context's cause as soon
// as the context ends (the clock is synctest's).
func TestPoll(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		start := time.Now()
		err := Poll(t.Context(), time.Minute, func() (bool, error) { calls++; return calls == 5, nil })
		if err != nil || calls != 5 {
			t.Fatalf("Poll = %v after %d calls", err, calls)
		}
		if d := time.Since(start); d >= time.Minute {
			t.Errorf("4 retries took %v", d)
		}

		boom := errors.New("boom")
		if err := Poll(t.Context(), time.Minute, func() (bool, error) { return false, boom }); err != boom {
			t.Errorf("Poll with a failing try = %v", err)
		}

		start = time.Now()
		err = Poll(t.Context(), 30*time.Second, func() (bool, error) { return false, nil })
		if !errors.Is(err, ErrTimeout) || time.Since(start) != 30*time.Second {
			t.Errorf("Poll never succeeding = %v after %v, want ErrTimeout after 30s", err, time.Since(start))
		}

		why := errors.New("shutting down")
		ctx, cancel := context.WithCancelCause(t.Context())
		time.AfterFunc(time.Second, func() { cancel(why) })
		start = time.Now()
		err = Poll(ctx, time.Hour, func() (bool, error) { return false, nil })
		if err != why || time.Since(start) != time.Second {
			t.Errorf("Poll with a context ended after 1s = %v after %v", err, time.Since(start))
		}
	})
}

// TestLockTimeout: a Lock that waits its whole timeout says so and names
// the file.
func TestLockTimeout(t *testing.T) {
	t.Parallel()
	p := t.TempDir() + "/x.lock"
	unlock, err := Lock(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := Lock(p, 20*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Lock of a held file = %v, want ErrTimeout", err)
	}
}
