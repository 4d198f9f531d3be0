package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWrites: concurrent writers and a reader (under -race) lose
// nothing.
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if n, err := b.Write([]byte("x")); n != 1 || err != nil {
					t.Errorf("Write = %d, %v", n, err)
				}
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 800) {
		t.Errorf("got %d bytes, want 800", len(got))
	}
}
