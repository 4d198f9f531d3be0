// Package ctxsleep holds the one sleep that a context ends early.
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx is done, whichever comes first, and then
// returns nil or ctx's error. A d of zero or less returns nil at once.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
