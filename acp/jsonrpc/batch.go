package jsonrpc

import (
	"bytes"
	"context"
	"errors"
)

// A Batch writes a run of notifications, in order, through a buffer of its
// own: each is appended to it already encoded, and the buffer reaches the
// connection in whole lines about 64 KiB at a time (one turn of the writer's
// lock and one write each), instead of one encode and one turn of the lock
// per message, which is what a replay of thousands of small updates cost.
// Other writers' messages may come between two of its flushes, never inside
// a line.
//
// A Batch belongs to the goroutine that made it. Nothing of it is written
// before a flush: Flush it before writing anything that must follow it.
type Batch struct {
	c      *Conn
	ctx    context.Context
	buf    []byte
	method string // of prefix
	prefix []byte // `{"jsonrpc":"2.0","method":"…","params":`
	err    error
}

// Batch returns a Batch writing to c; ctx bounds its flushes as it bounds
// Notify.
func (c *Conn) Batch(ctx context.Context) *Batch {
	return &Batch{c: c, ctx: ctx}
}

var errMultiline = errors.New("acp: internal error: message is not a single line")

// NotifyRaw adds a notification of method whose params are the
// concatenation of parts: compact JSON (an object or array), as
// encoding/json writes it, which is written as it is (not re-encoded). The
// line is the one Notify writes for the same params. It flushes when the
// buffer is full. After an error (ctx's, the connection's, a part holding a
// newline) nothing more is added and the error is returned again.
func (b *Batch) NotifyRaw(method string, parts ...[]byte) error {
	if b.err != nil {
		return b.err
	}
	if err := b.ctx.Err(); err != nil {
		b.err = err
		return err
	}
	for _, p := range parts {
		if bytes.IndexByte(p, '\n') >= 0 {
			b.err = errMultiline
			return b.err
		}
	}
	if method != b.method || b.prefix == nil {
		buf, err := encodeLine(method)
		if err != nil {
			b.err = err
			return err
		}
		name := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
		b.prefix = append(append([]byte(`{"jsonrpc":"2.0","method":`), name...), `,"params":`...)
		b.method = method
		putBuf(buf)
	}
	b.buf = append(b.buf, b.prefix...)
	for _, p := range parts {
		b.buf = append(b.buf, p...)
	}
	b.buf = append(b.buf, '}', '\n')
	if len(b.buf) >= lineBufMax {
		return b.Flush()
	}
	return nil
}

// Flush writes the notifications added since the last flush. If ctx ends
// while it waits for the writer, none of them is written.
func (b *Batch) Flush() error {
	if b.err != nil || len(b.buf) == 0 {
		return b.err
	}
	if b.c.isClosed() {
		b.err = errConnClosed
	} else {
		b.err = b.c.out.writeLines(b.ctx, b.buf)
	}
	b.buf = b.buf[:0]
	return b.err
}
