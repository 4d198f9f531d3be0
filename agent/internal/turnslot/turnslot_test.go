package turnslot

import (
	"context"
	"errors"
	"testing"
)

// One turn at a time: an overlap is refused unless the running turn was
// cancelled or is replying, which the new prompt then waits for; a cancel
// also stops prompts read before it; Close ends everything.
func TestSlot(t *testing.T) {
	var s Slot
	ctx := context.Background()
	t1, err := s.Begin(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Begin(ctx, 2); !errors.Is(err, ErrBusy) {
		t.Fatalf("overlap: %v, want ErrBusy", err)
	}
	if c, ok := s.Running(); !ok || c != t1.Context() {
		t.Fatal("Running does not report the turn")
	}
	s.Cancel(3)
	if !t1.Cancelled() || t1.Context().Err() == nil {
		t.Fatal("Cancel did not cancel the running turn")
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
