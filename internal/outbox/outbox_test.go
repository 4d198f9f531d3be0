package outbox

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"acpd/acp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func chunk(msg, text string) acp.SessionUpdate { return TextChunk(false, msg, text) }

var toolCall = acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: "c", Title: "t"}}

// describe renders what was written: a chunk as its text, anything else as
// "other".
func describe(us []acp.SessionUpdate) []string {
	var out []string
	for _, u := range us {
		if u.AgentMessageChunk != nil {
			out = append(out, u.AgentMessageChunk.Content.Text.Text)
		} else {
			out = append(out, "other")
		}
	}
	return out
}

// stalledQueue returns a Queue whose first write waits until release is
// closed (busy is closed once it has begun), and what it has written.
func stalledQueue() (q *Queue, busy, release chan struct{}, written func() []acp.SessionUpdate) {
	var mu sync.Mutex
	var sent []acp.SessionUpdate
	busy, release = make(chan struct{}), make(chan struct{})
	first := true
	q = NewQueue(func(ctx context.Context, e Encoded) {
		u := e.Update
		mu.Lock()
		sent = append(sent, u)
		wait := first
		first = false
		mu.Unlock()
		if wait {
			close(busy)
			<-release
		}
	})
	return q, busy, release, func() []acp.SessionUpdate {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(sent)
	}
}

// While the sender is busy, later chunks of one message merge into the
// queued one; any other update returns only once written, after them.
func TestQueueMergesWhileBusy(t *testing.T) {
	q, busy, release, written := stalledQueue()
	ctx := context.Background()
	q.Post(ctx, chunk("m", "a"))
	<-busy
	q.Post(ctx, chunk("m", "b"))
	q.Post(ctx, chunk("m", "c"))
	q.Post(ctx, chunk("n", "d"))
	done := make(chan struct{})
	go func() { q.Post(ctx, toolCall); close(done) }()
	close(release)
	<-done
	q.Close()
	if got, want := describe(written()), []string{"a", "bc", "d", "other"}; !slices.Equal(got, want) {
		t.Errorf("written %q, want %q", got, want)
	}
}

// Text is logged as one record per message run, before the next update,
// at Flush, and at once after Close.
func TestLogBuffersText(t *testing.T) {
	var logged []acp.SessionUpdate
	l := NewLog(func(e Encoded) { logged = append(logged, e.Update) })
	l.after = time.Hour // no timer flush in between
	l.Record(chunk("m", "a"))
	l.Record(chunk("m", "b"))
	l.Record(toolCall)
	l.Record(chunk("m", "c"))
	l.Flush()
	l.Record(chunk("m", "d"))
	l.Close()
	l.Record(chunk("m", "e"))
	if got, want := describe(logged), []string{"ab", "other", "c", "d", "e"}; !slices.Equal(got, want) {
		t.Errorf("logged %q, want %q", got, want)
	}
}

// A fast stream's text is logged once it reaches chunkLogMax, not held
// for the whole window.
func TestLogBoundsText(t *testing.T) {
	var logged []acp.SessionUpdate
	l := NewLog(func(e Encoded) { logged = append(logged, e.Update) })
	l.after = time.Hour
	half := string(make([]byte, chunkLogMax/2))
	l.Record(chunk("m", half))
	l.Record(chunk("m", half))
	if len(logged) != 1 || len(logged[0].AgentMessageChunk.Content.Text.Text) != chunkLogMax {
		t.Errorf("logged %d records at the bound, want one of %d bytes", len(logged), chunkLogMax)
	}
	l.Close()
}

// TestFlushWaitsForTheUpdateBeingWritten: Flush returns only once the
// update the sender has taken out of the queue is written, so a turn's
// last chunk cannot follow the turn's reply.
func TestFlushWaitsForTheUpdateBeingWritten(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var written bool
		q := NewQueue(func(context.Context, Encoded) {
			<-release
			written = true
		})
		q.Post(context.Background(), chunk("m", "last words"))
		synctest.Wait() // the sender holds the chunk, out of the queue
		flushed := make(chan struct{})
		go func() { q.Flush(context.Background()); close(flushed) }()
		synctest.Wait()
		select {
		case <-flushed:
			t.Error("Flush returned while the chunk was being written")
		default:
		}
		close(release)
		<-flushed
		if !written {
			t.Error("flushed before the chunk was written")
		}
		q.Close()
	})
}

// PostText and RecordText are Post and Record of TextChunk: the text
// merges with chunks posted either way, a thought's text is a run of its
// own, and after Close the Log writes it at once.
func TestTextVariants(t *testing.T) {
	q, busy, release, written := stalledQueue()
	ctx := context.Background()
	q.PostText(ctx, false, "m", "a")
	<-busy
	q.PostText(ctx, false, "m", "b")
	q.Post(ctx, chunk("m", "c"))
	q.PostText(ctx, true, "m", "t")
	q.PostText(ctx, false, "n", "d")
	done := make(chan struct{})
	go func() { q.Post(ctx, toolCall); close(done) }()
	close(release)
	<-done
	q.Close()
	sent := written()
	if got, want := describe(sent), []string{"a", "bc", "other", "d", "other"}; !slices.Equal(got, want) {
		t.Errorf("written %q, want %q", got, want)
	}
	if c := sent[2].AgentThoughtChunk; c == nil || c.Content.Text.Text != "t" || *c.MessageID != "m" {
		t.Errorf("thought written as %+v", sent[2])
	}
	if id := sent[3].AgentMessageChunk.MessageID; *id != "n" {
		t.Errorf("second message's chunk has id %q", *id)
	}

	var logged []acp.SessionUpdate
	l := NewLog(func(e Encoded) { logged = append(logged, e.Update) })
	l.after = time.Hour
	l.RecordText(false, "m", "a")
	l.Record(chunk("m", "b"))
	l.RecordText(true, "m", "x")
	l.Close()
	l.RecordText(false, "m", "e")
	if got, want := describe(logged), []string{"ab", "other", "e"}; !slices.Equal(got, want) {
		t.Errorf("logged %q, want %q", got, want)
	}
	if c := logged[1].AgentThoughtChunk; c == nil || c.Content.Text.Text != "x" {
		t.Errorf("thought logged as %+v", logged[1])
	}
}

// TestQueueIdlePosterWrites: an update other than a text chunk posted to
// an idle queue is written by its poster (on its goroutine, before Post
// returns); what is posted while it is written queues behind it, merged,
// and is written after it, in order; Flush waits for it.
func TestQueueIdlePosterWrites(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q, poster, release, written := stalledQueue()
		ctx := context.Background()
		posted := make(chan struct{})
		go func() { q.Post(ctx, toolCall); close(posted) }()
		<-poster
		q.Post(ctx, chunk("m", "a"))
		q.Post(ctx, chunk("m", "b"))
		flushed := make(chan struct{})
		go func() { q.Flush(ctx); close(flushed) }()
		last := make(chan struct{})
		go func() { q.Post(ctx, toolCall); close(last) }()
		synctest.Wait()
		select {
		case <-posted:
			t.Fatal("Post returned before its update was written")
		case <-flushed:
			t.Fatal("Flush returned while updates were being written")
		default:
		}
		close(release)
		<-posted
		<-last
		<-flushed
		q.Close()
		if got, want := describe(written()), []string{"other", "ab", "other"}; !slices.Equal(got, want) {
			t.Errorf("written %q, want %q", got, want)
		}
	})
}

// A delta merged into buffered text costs no allocation of its own.
func TestRecordTextMergesWithoutAllocating(t *testing.T) {
	l := NewLog(func(Encoded) {})
	l.after = time.Hour
	l.RecordText(false, "m", "start")
	l.text.Grow(1 << 10)
	if n := testing.AllocsPerRun(100, func() { l.RecordText(false, "m", "x") }); n != 0 {
		t.Errorf("RecordText of a delta: %v allocations, want 0", n)
	}
	l.Close()
}

// An encoded update reaches the log's writer and the queue's sender with
// its encoding, after the text before it; merged text reaches them
// unencoded.
func TestEncodedReachesTheWriters(t *testing.T) {
	st := acp.ToolCallStatusCompleted
	e := Encode(acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "call_1", Status: &st}})
	if string(e.JSON) != `{"sessionUpdate":"tool_call_update","status":"completed","toolCallId":"call_1"}` {
		t.Fatalf("Encode: %s", e.JSON)
	}
	var logged, sent []Encoded
	l := NewLog(func(e Encoded) { logged = append(logged, e) })
	l.RecordText(false, "m", "before")
	l.RecordEncoded(e)
	q := NewQueue(func(_ context.Context, e Encoded) { sent = append(sent, e) })
	q.PostEncoded(context.Background(), e)
	q.Close()
	if len(logged) != 2 || logged[0].JSON != nil || logged[0].Update.AgentMessageChunk == nil || string(logged[1].JSON) != string(e.JSON) {
		t.Errorf("logged %+v", logged)
	}
	if len(sent) != 1 || string(sent[0].JSON) != string(e.JSON) {
		t.Errorf("sent %+v", sent)
	}
}
