package agent

import (
	"context"
	"strings"
	"sync"
	"time"

	"acpd/acp"
)

// Streaming text costs one log record and one notification per delta when
// done naively (a model streams tens of deltas a second, each a few bytes).
// Two mechanisms keep it near the wire's speed:
//
//   - chunkLog buffers the text of the current message (or thought) and logs
//     it as one "update" record when another update comes, when the turn
//     reaches a boundary (sess.sync), when it reaches chunkLogMax, or at most
//     chunkFlush after its first delta: a kill -9 loses at most that window
//     of streamed text.
//   - outbox queues updates for the client. A text chunk is queued and the
//     caller goes on; the queue's sender writes it at once when idle, and
//     while it is busy writing, later chunks of the same message merge into
//     the queued one, so a slow client gets fewer, larger updates and a fast
//     one gets each delta as it comes. Every other update waits until it is
//     written, so it (and whatever its caller writes next, such as a
//     permission request) never overtakes the text before it.

// chunkFlush bounds how long streamed text stays unlogged, chunkLogMax how
// much of it is buffered (a fast stream's 50 ms can be megabytes, and a
// record is encoded in memory).
const (
	chunkFlush  = 50 * time.Millisecond
	chunkLogMax = 64 << 10
)

// outboxMax and outboxMaxText bound the updates and the merged text queued
// for the client; a caller finding the queue full waits for room, so a client
// that stops reading stalls the turn instead of growing the queue.
const (
	outboxMax     = 64
	outboxMaxText = 256 << 10
)

// chunkKey identifies a run of mergeable chunks: agent message or thought
// text of one message.
type chunkKey struct {
	thought bool
	msg     string
}

// chunkOfText returns u's key and text when u is a mergeable text chunk.
func chunkOfText(u *acp.SessionUpdate) (chunkKey, string, bool) {
	var c *acp.ContentChunk
	var k chunkKey
	switch {
	case u.AgentMessageChunk != nil && u.AgentThoughtChunk == nil && u.UserMessageChunk == nil:
		c = u.AgentMessageChunk
	case u.AgentThoughtChunk != nil && u.AgentMessageChunk == nil && u.UserMessageChunk == nil:
		c, k.thought = u.AgentThoughtChunk, true
	default:
		return k, "", false
	}
	if c.MessageID == nil || c.Content.Text == nil || c.Meta != nil || c.Content.Text.Meta != nil || c.Content.Text.Annotations != nil {
		return k, "", false
	}
	k.msg = string(*c.MessageID)
	return k, c.Content.Text.Text, true
}

func (k chunkKey) update(text string) acp.SessionUpdate {
	c := textChunk(text, k.msg)
	if k.thought {
		return acp.SessionUpdate{AgentThoughtChunk: c}
	}
	return acp.SessionUpdate{AgentMessageChunk: c}
}

// chunkLog is a session's buffered text record (see above).
type chunkLog struct {
	mu     sync.Mutex
	key    chunkKey
	text   strings.Builder
	timer  *time.Timer
	closed bool
}

// recordUpdate logs u, buffering mergeable text.
func (s *sess) recordUpdate(u acp.SessionUpdate) {
	cl := &s.chunks
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if k, text, ok := chunkOfText(&u); ok && !cl.closed {
		if cl.text.Len() > 0 && cl.key == k {
			cl.text.WriteString(text)
			if cl.text.Len() >= chunkLogMax {
				s.flushChunksLocked()
			}
			return
		}
		s.flushChunksLocked()
		cl.key = k
		cl.text.WriteString(text)
		if cl.timer == nil {
			cl.timer = time.AfterFunc(chunkFlush, s.flushChunks)
		} else {
			cl.timer.Reset(chunkFlush)
		}
		return
	}
	s.flushChunksLocked()
	s.appendRecord(kindUpdate, u)
}

// flushChunks logs the buffered text, if any.
func (s *sess) flushChunks() {
	s.chunks.mu.Lock()
	s.flushChunksLocked()
	s.chunks.mu.Unlock()
}

func (s *sess) flushChunksLocked() {
	cl := &s.chunks
	if cl.text.Len() == 0 {
		return
	}
	u := cl.key.update(cl.text.String())
	cl.text.Reset()
	if cl.timer != nil {
		cl.timer.Stop()
	}
	s.appendRecord(kindUpdate, u)
}

// closeChunks logs the buffered text and stops buffering (before the log
// closes).
func (s *sess) closeChunks() {
	s.chunks.mu.Lock()
	defer s.chunks.mu.Unlock()
	s.flushChunksLocked()
	s.chunks.closed = true
	if s.chunks.timer != nil {
		s.chunks.timer.Stop()
	}
}

// outbox is a session's queue of updates for the client (see above).
type outbox struct {
	mu      sync.Mutex
	items   []*outItem
	text    int // bytes of text in queued chunks
	sending bool
	wg      sync.WaitGroup // the sender goroutine, started when the queue fills from empty
}

type outItem struct {
	ctx   context.Context
	u     acp.SessionUpdate
	chunk bool
	key   chunkKey
	text  strings.Builder
	done  chan struct{} // closed once written (or dropped)
}

// post queues u for the client. A mergeable text chunk returns at once
// (unless the queue is full); anything else returns once written or when ctx
// ends.
func (s *sess) post(ctx context.Context, u acp.SessionUpdate) {
	ob := &s.out
	k, text, chunk := chunkOfText(&u)
	ob.mu.Lock()
	if chunk {
		if n := len(ob.items); n > 0 {
			if tail := ob.items[n-1]; tail.chunk && tail.key == k {
				tail.text.WriteString(text)
				ob.text += len(text)
				full := ob.text > outboxMaxText
				ob.mu.Unlock()
				if full {
					waitDone(ctx, tail.done)
				}
				return
			}
		}
	}
	var wait chan struct{}
	if len(ob.items) >= outboxMax || ob.text > outboxMaxText {
		wait = ob.items[len(ob.items)-1].done
	}
	it := &outItem{ctx: ctx, u: u, chunk: chunk, key: k, done: make(chan struct{})}
	if chunk {
		it.text.WriteString(text)
		ob.text += len(text)
	} else {
		wait = it.done
	}
	ob.items = append(ob.items, it)
	if !ob.sending {
		ob.sending = true
		ob.wg.Go(s.drainOutbox)
	}
	ob.mu.Unlock()
	waitDone(ctx, wait)
}

// waitDone waits for done (nil: no wait) or the end of ctx.
func waitDone(ctx context.Context, done chan struct{}) {
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// flushOut waits until everything queued so far has been written, or ctx
// ends.
func (s *sess) flushOut(ctx context.Context) {
	s.out.mu.Lock()
	var wait chan struct{}
	if n := len(s.out.items); n > 0 {
		wait = s.out.items[n-1].done
	}
	s.out.mu.Unlock()
	waitDone(ctx, wait)
}

// drainOutbox is the outbox's sender goroutine: it writes queued updates in
// order and returns when the queue is empty (owned by the session: close
// waits for it).
func (s *sess) drainOutbox() {
	ob := &s.out
	for {
		ob.mu.Lock()
		if len(ob.items) == 0 {
			ob.sending = false
			ob.items = nil
			ob.mu.Unlock()
			return
		}
		it := ob.items[0]
		ob.items[0] = nil
		ob.items = ob.items[1:]
		if it.chunk {
			ob.text -= it.text.Len()
		}
		ob.mu.Unlock()
		u := it.u
		if it.chunk {
			u = it.key.update(it.text.String())
		}
		s.sendNow(it.ctx, u)
		close(it.done)
	}
}
