package turnslot

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

// One turn at a time: an overlapping prompt is queued behind the running
// turn; a cancel also stops prompts read before it (the queue); Close ends
// everything.
func TestSlot(t *testing.T) {
	var s Slot
	ctx := context.Background()
	t1, err := s.Begin(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	queued := make(chan error, 1)
	go func() {
		_, err := s.Begin(ctx, 2)
		queued <- err
	}()
	waitQueued(t, &s, 1)
	if c, ok := s.Running(); !ok || c != t1.Context() {
		t.Fatal("Running does not report the turn")
	}
	s.Cancel(3)
	if !t1.Cancelled() || t1.Context().Err() == nil {
		t.Fatal("Cancel did not cancel the running turn")
	}
	if err := <-queued; !errors.Is(err, ErrCancelledEarly) {
		t.Fatalf("queued prompt read before the cancel: %v, want ErrCancelledEarly", err)
	}
	if _, err := s.Begin(ctx, 2); !errors.Is(err, ErrCancelledEarly) {
		t.Fatalf("prompt read before the cancel: %v, want ErrCancelledEarly", err)
	}
	next := make(chan *Turn)
	go func() {
		t2, err := s.Begin(ctx, 4)
		if err != nil {
			t.Error(err)
		}
		next <- t2
	}()
	t1.Replying()
	t1.End()
	t2 := <-next
	if _, ok := s.Running(); !ok || t2.Cancelled() {
		t.Fatal("the waiting prompt did not get the slot")
	}
	done, first := s.Close()
	if !first || done == nil || !t2.Cancelled() {
		t.Fatal("Close did not cancel the running turn")
	}
	t2.End()
	<-done
	if _, again := s.Close(); again {
		t.Error("second Close reported first")
	}
	if _, err := s.Begin(ctx, 5); !errors.Is(err, ErrClosed) {
		t.Errorf("Begin after Close: %v", err)
	}
}

// waitQueued waits until n prompts wait in s.
func waitQueued(t *testing.T, s *Slot, n int) {
	t.Helper()
	for i := 0; s.Queued() != n; i++ {
		if i > 1e6 {
			t.Fatalf("%d prompts queued, want %d", s.Queued(), n)
		}
		runtime.Gosched()
	}
}

// Queued prompts become turns in arrival order, one at a time; past
// MaxQueued one more is refused; a waiter whose request ends leaves.
func TestQueueOrder(t *testing.T) {
	var s Slot
	ctx := context.Background()
	first, err := s.Begin(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan uint64, MaxQueued)
	turns := make(chan *Turn, MaxQueued)
	for i := range uint64(3) {
		go func() {
			tt, err := s.Begin(ctx, 10+i)
			if err != nil {
				t.Error(err)
				return
			}
			got <- 10 + i
			turns <- tt
		}()
		waitQueued(t, &s, int(i)+1)
	}
	lctx, cancel := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() { _, err := s.Begin(lctx, 20); left <- err }()
	waitQueued(t, &s, 4)
	cancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Errorf("a waiter whose request ended: %v", err)
	}
	for s.Queued() != 3 {
		runtime.Gosched()
	}
	first.End()
	for _, want := range []uint64{10, 11, 12} {
		if a := <-got; a != want {
			t.Fatalf("turn of arrival %d began, want %d", a, want)
		}
		(<-turns).End()
	}
	// The limit.
	hold, _ := s.Begin(ctx, 30)
	var fill []context.CancelFunc
	for i := range MaxQueued {
		c, cf := context.WithCancel(ctx)
		fill = append(fill, cf)
		go func() { _, _ = s.Begin(c, uint64(100+i)) }()
	}
	waitQueued(t, &s, MaxQueued)
	if _, err := s.Begin(ctx, 200); !errors.Is(err, ErrBusy) {
		t.Errorf("past MaxQueued: %v, want ErrBusy", err)
	}
	for _, cf := range fill {
		cf()
	}
	hold.End()
}
