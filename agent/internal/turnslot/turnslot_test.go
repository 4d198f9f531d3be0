package turnslot

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
)

// One turn at a time: an overlapping prompt is queued behind the running
// turn; a cancel also stops prompts read before it (the queue); Close ends
// everything.
func TestSlot(t *testing.T) {
	var s Slot[string]
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
	next := make(chan *Turn[string])
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
func waitQueued(t *testing.T, s *Slot[string], n int) {
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
	var s Slot[string]
	ctx := context.Background()
	first, err := s.Begin(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan uint64, MaxQueued)
	turns := make(chan *Turn[string], MaxQueued)
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

// Steering messages join the running turn in order; the turn's last look
// closes its inbox, so a later message is refused (it becomes a prompt of
// its own); a cancel keeps what was waiting for the handler to report and
// takes no more; without a turn nothing is taken.
func TestSteer(t *testing.T) {
	var s Slot[string]
	ctx := context.Background()
	if s.Steer("idle") {
		t.Fatal("Steer without a turn took the message")
	}
	t1, err := s.Begin(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := t1.Steered(false); len(got) != 0 {
		t.Fatalf("empty inbox gave %q", got)
	}
	if !s.Steer("a") || !s.Steer("b") {
		t.Fatal("the running turn refused a steering message")
	}
	if got := t1.Steered(true); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Steered = %q, want [a b]", got)
	}
	// Not empty at the last look: the inbox stays open.
	if !s.Steer("c") {
		t.Fatal("refused after a last look that found messages")
	}
	if got := t1.Steered(true); !slices.Equal(got, []string{"c"}) {
		t.Fatalf("Steered = %q, want [c]", got)
	}
	if got := t1.Steered(true); len(got) != 0 || s.Steer("late") {
		t.Fatalf("after the empty last look: %q, and a late message was taken", got)
	}
	t1.End()

	t2, _ := s.Begin(ctx, 2)
	for i := range MaxSteered {
		if !s.Steer(fmt.Sprint(i)) {
			t.Fatalf("message %d refused", i)
		}
	}
	if s.Steer("over") {
		t.Error("took more than MaxSteered messages")
	}
	s.Cancel(3)
	if s.Steer("after cancel") {
		t.Error("a cancelled turn took a message")
	}
	if got := t2.Steered(true); len(got) != MaxSteered {
		t.Errorf("after the cancel the inbox held %d, want %d", len(got), MaxSteered)
	}
	t2.End()

	t3, _ := s.Begin(ctx, 4)
	s.Steer("x")
	if got := t3.Shut(); !slices.Equal(got, []string{"x"}) || s.Steer("y") {
		t.Errorf("Shut gave %q or did not close the inbox", got)
	}
	t3.Replying()
	t3.End()
}
