package ctxsleep

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := Sleep(t.Context(), time.Minute); err != nil || time.Since(start) != time.Minute {
			t.Errorf("Sleep = %v after %v, want nil after a minute", err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start = time.Now()
		if err := Sleep(ctx, time.Hour); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Errorf("Sleep = %v after %v, want the deadline after a second", err, time.Since(start))
		}
		cancel()
		if err := Sleep(ctx, 0); err != nil {
			t.Errorf("Sleep(0) on an ended context = %v, want nil", err)
		}
	})
}

func TestSleepCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- Sleep(ctx, time.Hour) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep = %v, want context.Canceled", err)
	}
	if err := Sleep(context.Background(), 0); err != nil {
		t.Errorf("Sleep(0) = %v", err)
	}
}
