package session

import (
	"context"
	"errors"
	"testing"

	"acpd/internal/filelock"
)

// TestIndexLockWaitEndsWithContext: an operation waiting for an index lock
// another process holds fails with the cause of the store's context once
// it ends, not after lockIndexTimeout.
func TestIndexLockWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	unlock, err := filelock.Lock(s.indexLockPath(), 0) // as another process would
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	why := errors.New("acpd is shutting down")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(why)
	s2, err := Open(ctx, s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.List(Filter{}); !errors.Is(err, why) {
		t.Fatalf("List under a held index lock = %v, want the context's cause", err)
	}
	if _, err := s2.Create(Meta{}); !errors.Is(err, why) {
		t.Fatalf("Create under a held index lock = %v, want the context's cause", err)
	}
	unlock()
	if _, err := s.List(Filter{}); err != nil {
		t.Fatalf("List once the lock is free: %v", err)
	}
}
