// Package outbox keeps streamed text cheap for a session: one log record
// and one notification per model delta would cost far more than the wire
// (a model streams tens of deltas a second, each a few bytes). Two
// mechanisms keep it near the wire's speed:
//
//   - [Log] buffers the text of the current message (or thought) and writes
//     it as one update record when another update comes, when its owner
//     calls Flush (at a turn boundary), when it reaches chunkLogMax, or at
//     most [ChunkFlush] after its first delta: a kill -9 loses at most that
//     window of streamed text.
//   - [Queue] queues updates for the client. A text chunk is queued and the
//     caller goes on; the queue's sender writes it at once when idle, and
//     while it is busy writing, later chunks of the same message merge into
//     the queued one, so a slow client gets fewer, larger updates and a fast
//     one gets each delta as it comes. Every other update waits until it is
//     written, so it (and whatever its caller writes next, such as a
//     permission request) never overtakes the text before it.
//
// Both are safe for concurrent use; each belongs to one session, which
// closes it once (Log.Close, Queue.Close) before closing what it writes
// to.
package outbox

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"acpd/acp"
)

// ChunkFlush bounds how long streamed text stays unlogged.
const ChunkFlush = 50 * time.Millisecond

// chunkLogMax bounds how much streamed text is buffered (a fast stream's
// 50 ms can be megabytes, and a record is encoded in memory).
const chunkLogMax = 64 << 10

// maxItems and maxText bound the updates and the merged text queued for
// the client; a caller finding the queue full waits for room, so a client
// that stops reading stalls the turn instead of growing the queue. A
// merged update is encoded in memory (its text about three times, in
// growing buffers the encoder pools), so maxText is chunkLogMax's size:
// 256 KiB cost a 32 MiB answer streamed beside another session 3 MiB of
// peak RSS, and 64 KiB still merges thousands of small deltas.
const (
	maxItems = 64
	maxText  = 64 << 10
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

// TextOf reports whether u is a chunk [TextChunk] makes (the updates the
// Queue merges), and returns what it was made of.
func TextOf(u *acp.SessionUpdate) (thought bool, msg, text string, ok bool) {
	k, text, ok := chunkOfText(u)
	return k.thought, k.msg, text, ok
}

// update is the chunk of k holding text.
func (k chunkKey) update(text string) acp.SessionUpdate { return TextChunk(k.thought, k.msg, text) }

// TextChunk is the update that carries merged text: an agent message (or,
// with thought, thought) chunk of message msg. Replayed merged chunks have
// the same shape (package agent/internal/replay).
func TextChunk(thought bool, msg, text string) acp.SessionUpdate {
	id := acp.MessageID(msg)
	c := &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: text}}, MessageID: &id}
	if thought {
		return acp.SessionUpdate{AgentThoughtChunk: c}
	}
	return acp.SessionUpdate{AgentMessageChunk: c}
}

// Encoded is an update with its JSON encoding, made once for both its
// record and its notification (a tool call's few updates, each encoded
// twice through the union types' marshalers, cost a tenth of the call's
// CPU time).
type Encoded struct {
	Update acp.SessionUpdate
	// JSON is Update encoded as encoding/json encodes it with HTML
	// escaping off (compact, one line, no trailing newline), or nil: the
	// writer encodes Update itself.
	JSON []byte
}

// Encode returns u with its encoding. A mergeable text chunk is not
// encoded (the Log and the Queue merge its text first), nor is an update
// that fails to encode: the writer then meets, and reports, the error.
func Encode(u acp.SessionUpdate) Encoded {
	if _, _, chunk := chunkOfText(&u); chunk {
		return Encoded{Update: u}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(u) != nil {
		return Encoded{Update: u}
	}
	return Encoded{Update: u, JSON: bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})}
}

// Log is a session's buffered update log (see the package doc).
type Log struct {
	write func(Encoded)
	after time.Duration // ChunkFlush, but in tests

	mu     sync.Mutex
	key    chunkKey
	text   strings.Builder
	timer  *time.Timer
	closed bool
}

// NewLog returns a Log that records updates with write, which is called
// with the Log's lock held (so records keep their order) from Record, Flush,
// Close and a timer's goroutine; write must not call back into the Log.
// Buffered text reaches write unencoded (Encoded.JSON nil).
func NewLog(write func(Encoded)) *Log {
	return &Log{write: write, after: ChunkFlush}
}

// Record logs u, buffering mergeable text.
func (l *Log) Record(u acp.SessionUpdate) { l.RecordEncoded(Encoded{Update: u}) }

// RecordEncoded is Record of an update encoded already (see [Encode]).
func (l *Log) RecordEncoded(e Encoded) {
	if k, text, ok := chunkOfText(&e.Update); ok {
		l.recordText(k, text, &e.Update)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
	l.write(e)
}

// RecordText logs the update TextChunk(thought, msg, text) without the
// caller building it: a turn logs one per streamed delta, and buffered
// text needs none.
func (l *Log) RecordText(thought bool, msg, text string) {
	l.recordText(chunkKey{thought: thought, msg: msg}, text, nil)
}

// recordText buffers text of k; u, when not nil, is its update.
func (l *Log) recordText(k chunkKey, text string, u *acp.SessionUpdate) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		l.flushLocked()
		if u == nil {
			c := k.update(text)
			u = &c
		}
		l.write(Encoded{Update: *u})
		return
	}
	if l.text.Len() > 0 && l.key == k {
		l.text.WriteString(text)
		if l.text.Len() >= chunkLogMax {
			l.flushLocked()
		}
		return
	}
	l.flushLocked()
	l.key = k
	l.text.WriteString(text)
	if l.timer == nil {
		l.timer = time.AfterFunc(l.after, l.Flush)
	} else {
		l.timer.Reset(l.after)
	}
}

// Flush logs the buffered text, if any.
func (l *Log) Flush() {
	l.mu.Lock()
	l.flushLocked()
	l.mu.Unlock()
}

func (l *Log) flushLocked() {
	if l.text.Len() == 0 {
		return
	}
	u := l.key.update(l.text.String())
	l.text.Reset()
	if l.timer != nil {
		l.timer.Stop()
	}
	l.write(Encoded{Update: u})
}

// Close logs the buffered text and stops buffering: later records are
// written at once. Call it before closing what write writes to.
func (l *Log) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
	}
}

// Queue is a session's queue of updates for the client (see the package
// doc).
type Queue struct {
	send func(context.Context, Encoded)

	mu      sync.Mutex
	items   []*item
	cur     *item          // the update being written (out of items), or nil
	text    int            // bytes of text in queued chunks
	sending bool           // a sender goroutine or an inline poster is writing
	wg      sync.WaitGroup // the sender goroutine, started when the queue fills from empty
}

type item struct {
	ctx   context.Context
	e     Encoded // not set for a chunk: key and text are its update
	chunk bool
	key   chunkKey
	text  strings.Builder
	done  chan struct{} // closed once written (or dropped)
}

// NewQueue returns a Queue that writes updates with send, one at a time and
// in order: on a sender goroutine the Queue owns (started when the queue
// fills from empty, gone when it is empty again), or, for an update that
// is not a text chunk posted while the queue is idle, on the poster's own
// goroutine, which would wait for it anyway. send gets the context
// the update was posted with and must return when it ends; merged text
// reaches it unencoded (Encoded.JSON nil).
func NewQueue(send func(context.Context, Encoded)) *Queue {
	return &Queue{send: send}
}

// Post queues u for the client. A mergeable text chunk returns at once
// (unless the queue is full); anything else returns once written or when
// ctx ends.
func (q *Queue) Post(ctx context.Context, u acp.SessionUpdate) {
	q.PostEncoded(ctx, Encoded{Update: u})
}

// PostEncoded is Post of an update encoded already (see [Encode]).
func (q *Queue) PostEncoded(ctx context.Context, e Encoded) {
	if k, text, chunk := chunkOfText(&e.Update); chunk {
		q.postText(ctx, k, text)
		return
	}
	q.mu.Lock()
	if !q.sending {
		// Nothing is queued or being written, and the caller waits for
		// this update anyway: it writes it itself, without a hand-off to
		// a sender goroutine and back.
		q.sendInline(ctx, e)
		return
	}
	it := &item{ctx: ctx, e: e, done: make(chan struct{})}
	q.push(it)
	q.mu.Unlock()
	waitDone(ctx, it.done) // after everything queued before it
}

// PostText queues the update TextChunk(thought, msg, text) as Post does,
// without the caller building it: a turn posts one per streamed delta,
// and one merged into the queue's last needs none.
func (q *Queue) PostText(ctx context.Context, thought bool, msg, text string) {
	q.postText(ctx, chunkKey{thought: thought, msg: msg}, text)
}

func (q *Queue) postText(ctx context.Context, k chunkKey, text string) {
	q.mu.Lock()
	if n := len(q.items); n > 0 {
		if tail := q.items[n-1]; tail.chunk && tail.key == k {
			tail.text.WriteString(text)
			q.text += len(text)
			full := q.text > maxText
			q.mu.Unlock()
			if full {
				waitDone(ctx, tail.done)
			}
			return
		}
	}
	var wait chan struct{}
	if len(q.items) >= maxItems || q.text > maxText {
		wait = q.items[len(q.items)-1].done
	}
	it := &item{ctx: ctx, chunk: true, key: k, done: make(chan struct{})}
	it.text.WriteString(text)
	q.text += len(text)
	q.push(it)
	q.mu.Unlock()
	waitDone(ctx, wait)
}

// push appends it to the queue and starts the sender if it is not
// running. q.mu is held.
func (q *Queue) push(it *item) {
	q.items = append(q.items, it)
	if !q.sending {
		q.sending = true
		q.wg.Go(q.drain)
	}
}

// sendInline writes u on the caller's goroutine while the queue is idle;
// q.mu is held on entry and released on return. Updates posted meanwhile
// queue behind it, and a sender goroutine writes them once it is written.
func (q *Queue) sendInline(ctx context.Context, e Encoded) {
	it := &item{ctx: ctx, e: e, done: make(chan struct{})}
	q.sending = true
	q.cur = it // Flush waits for it
	q.wg.Add(1)
	q.mu.Unlock()
	defer q.wg.Done()
	q.send(ctx, e)
	q.mu.Lock()
	q.cur = nil
	close(it.done)
	if len(q.items) > 0 {
		q.wg.Go(q.drain)
	} else {
		q.sending = false
		q.items = nil
	}
	q.mu.Unlock()
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

// Flush waits until everything queued so far has been written, or ctx
// ends.
func (q *Queue) Flush(ctx context.Context) {
	q.mu.Lock()
	var wait chan struct{}
	if n := len(q.items); n > 0 {
		wait = q.items[n-1].done
	} else if q.cur != nil {
		// The last update is out of the queue but still being written.
		wait = q.cur.done
	}
	q.mu.Unlock()
	waitDone(ctx, wait)
}

// Close waits for the sender goroutine to write what is queued and return
// (bounded by the contexts the updates were posted with). Post must not be
// called after it.
func (q *Queue) Close() {
	q.wg.Wait()
}

// drain is the sender goroutine: it writes queued updates in order and
// returns when the queue is empty.
func (q *Queue) drain() {
	for {
		q.mu.Lock()
		if len(q.items) == 0 {
			q.sending = false
			q.items = nil
			q.mu.Unlock()
			return
		}
		it := q.items[0]
		q.items[0] = nil
		q.items = q.items[1:]
		if it.chunk {
			q.text -= it.text.Len()
		}
		q.cur = it
		q.mu.Unlock()
		e := it.e
		if it.chunk {
			e = Encoded{Update: it.key.update(it.text.String())}
		}
		q.send(it.ctx, e)
		q.mu.Lock()
		q.cur = nil
		q.mu.Unlock()
		close(it.done)
	}
}
