// Package tailbuf keeps the end of a stream: a terminal's output, a child's
// stderr. It is the one copy of this mechanism in acpd.
package tailbuf

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// Buffer is an io.Writer that keeps the last limit bytes written to it. It
// grows on demand up to limit and then turns into a ring, so its memory
// never exceeds limit bytes however much is written. It is safe for
// concurrent use. The zero Buffer is not usable; call [New].
type Buffer struct {
	mu      sync.Mutex
	limit   int
	data    []byte // len(data) <= limit; a ring once full
	start   int    // index of the oldest byte when full
	full    bool
	dropped bool // some bytes have been overwritten or skipped
}

// New returns a Buffer keeping the last limit bytes (at least one).
func New(limit int) *Buffer {
	if limit < 1 {
		limit = 1
	}
	return &Buffer{limit: limit}
}

// Write appends p, discarding the oldest bytes beyond the limit. It never
// fails: n is always len(p).
func (b *Buffer) Write(p []byte) (n int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.write(p)
	return len(p), nil
}

func (b *Buffer) write(p []byte) {
	if len(p) == 0 {
		return
	}
	if len(p) >= b.limit {
		// Only the last limit bytes of p survive.
		if len(p) > b.limit || len(b.data) > 0 {
			b.dropped = true
		}
		b.ensureCap(b.limit)
		b.data = b.data[:b.limit]
		copy(b.data, p[len(p)-b.limit:])
		b.start = 0
		b.full = true
		return
	}
	if !b.full {
		if len(b.data)+len(p) <= b.limit {
			b.ensureCap(len(b.data) + len(p))
			b.data = append(b.data, p...)
			if len(b.data) == b.limit {
				b.full = true
				b.start = 0
			}
			return
		}
		// Fill up to the limit, then continue as a ring with the rest.
		n := b.limit - len(b.data)
		b.ensureCap(b.limit)
		b.data = append(b.data, p[:n]...)
		p = p[n:]
		b.full = true
		b.start = 0
	}
	// Ring: overwrite the oldest bytes, len(p) < limit.
	b.dropped = true
	n := copy(b.data[b.start:], p)
	copy(b.data, p[n:])
	b.start = (b.start + len(p)) % b.limit
}

// ensureCap grows data's capacity to at least n, never beyond limit.
func (b *Buffer) ensureCap(n int) {
	if cap(b.data) >= n {
		return
	}
	c := max(2*cap(b.data), 4096, n)
	c = min(c, b.limit)
	nd := make([]byte, len(b.data), c)
	copy(nd, b.data)
	b.data = nd
}

// Snapshot returns the retained bytes in order, cut at a UTF-8 character
// boundary at the start when bytes were dropped. When complete is false (the
// writer may still add bytes), an incomplete UTF-8 sequence at the very end
// is left out so a character is never split.
func (b *Buffer) Snapshot(complete bool) (text string, truncated bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var s []byte
	if b.full {
		s = make([]byte, 0, len(b.data))
		s = append(s, b.data[b.start:]...)
		s = append(s, b.data[:b.start]...)
	} else {
		s = b.data
	}
	if b.dropped {
		s = trimLeadingPartial(s)
	}
	if !complete {
		s = trimTrailingPartial(s)
	}
	return string(s), b.dropped
}

// String returns the complete snapshot as valid UTF-8 (invalid bytes
// replaced by U+FFFD) with surrounding white space trimmed, for error
// messages quoting a child's last words.
func (b *Buffer) String() string {
	s, _ := b.Snapshot(true)
	return strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
}

// trimLeadingPartial drops the continuation bytes of a character whose first
// bytes were cut off (at most utf8.UTFMax-1 bytes).
func trimLeadingPartial(s []byte) []byte {
	for i := 0; i < utf8.UTFMax-1 && len(s) > 0 && !utf8.RuneStart(s[0]); i++ {
		s = s[1:]
	}
	return s
}

// trimTrailingPartial drops an incomplete UTF-8 sequence at the end of s
// whose remaining bytes may still arrive. Invalid sequences are kept.
func trimTrailingPartial(s []byte) []byte {
	for i := 1; i < utf8.UTFMax && i <= len(s); i++ {
		c := s[len(s)-i]
		if !utf8.RuneStart(c) {
			continue
		}
		if c >= utf8.RuneSelf && !utf8.FullRune(s[len(s)-i:]) {
			return s[:len(s)-i]
		}
		return s
	}
	return s
}
