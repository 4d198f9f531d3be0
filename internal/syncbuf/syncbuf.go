// Package syncbuf holds a bytes.Buffer that is safe for concurrent use: a
// log sink or a child's output that tests read while others write.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer whose methods may be called concurrently. The
// zero value is an empty buffer ready to use; a Buffer must not be copied
// after first use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns a copy of the contents written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
