package replay

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"acpd/model"
)

var concurrentStreams = flag.Int("replay.streams", 8, "concurrent streams in TestRecorderConcurrentStreams")

// fake is a model.Backend made of a function.
type fake func(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error]

func (f fake) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return f(ctx, req)
}

// scripted returns a backend that yields events and then err (if non-nil).
func scripted(err error, events ...model.Event) fake {
	return func(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
		return func(yield func(model.Event, error) bool) {
			for _, ev := range events {
				if !yield(ev, nil) {
					return
				}
			}
			if err != nil {
				yield(model.Event{}, err)
			}
		}
	}
}

// saveAndLoad writes a recording to a file and loads it.
func saveAndLoad(t *testing.T, rec []byte) *Backend {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rec.jsonl")
	if err := os.WriteFile(p, rec, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := New(p)
	if err != nil {
		t.Fatalf("recording does not load: %v\n%s", err, rec)
	}
	return b
}

func TestRecorderRoundTrip(t *testing.T) {
	live := mustNew(t, filepath.Join("testdata", "example.jsonl"))
	var buf bytes.Buffer
	rec := NewRecorder(live, &buf)

	secret := "private user text"
	reqs := []*model.Request{request(0, secret), request(1, secret), request(2, secret)}
	// Response #2 of the example expects call_1's tool result.
	reqs[1].Messages = append(reqs[1].Messages, model.Message{Role: model.RoleUser, Parts: []model.Part{
		{Type: model.PartToolResult, ToolCallID: "call_1", Content: []model.Part{{Type: model.PartText, Text: "ok"}}},
	}})
	var liveEvents [][]model.Event
	for _, req := range reqs {
		got, err := collect(context.Background(), rec, req)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := collect(context.Background(), live, req)
		wantEvents(t, got, want) // the recorder passes events through unchanged
		liveEvents = append(liveEvents, got)
	}
	if strings.Contains(buf.String(), secret) {
		t.Errorf("the recording contains message content:\n%s", buf.String())
	}
	if !strings.HasPrefix(buf.String(), `{"type":"request","model":"script.jsonl","messages":1}`+"\n") {
		t.Errorf("recording starts with %q", strings.SplitN(buf.String(), "\n", 2)[0])
	}

	replayed := saveAndLoad(t, buf.Bytes())
	for i, req := range reqs {
		got, err := collect(context.Background(), replayed, req)
		if err != nil {
			t.Fatal(err)
		}
		wantEvents(t, got, liveEvents[i])
	}
	_, err := collect(context.Background(), replayed, request(3))
	wantKind(t, err, model.ErrReplay, "has 3 responses; request needs response #4")
}

func TestRecorderErrors(t *testing.T) {
	text := model.Event{Type: model.EventText, Text: "partial"}
	finish := model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}
	overloaded := &model.Error{Kind: model.ErrOverloaded, Status: 529, RetryAfter: 1500 * time.Millisecond, Message: "busy"}
	var buf bytes.Buffer
	backends := []fake{
		// #1: fails before any output: recorded as a comment only, so the
		// retry (same assistant count) gets the next recorded response.
		scripted(&model.Error{Kind: model.ErrRateLimit, Status: 429, Err: errors.New("slow down")},
			model.Event{Type: model.EventUsage, Usage: &model.Usage{InputTokens: 1}}),
		// #2: the successful retry.
		scripted(nil, text, finish),
		// #3: fails after output.
		scripted(overloaded, text),
		// #4: a model.Error without Message.
		scripted(&model.Error{Kind: model.ErrNetwork, Err: errors.New("connection reset")}, text),
		// #5: a plain error.
		scripted(errors.New("boom"), text),
		// #6: a stream that ends without finish.
		scripted(nil, text),
	}
	for i, b := range backends {
		got, err := collect(context.Background(), NewRecorder(b, &buf), request(0))
		want, wantErr := collect(context.Background(), b, request(0))
		wantEvents(t, got, want)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Errorf("backend %d: recorder returned %v, backend %v", i, err, wantErr)
		}
	}
	if !strings.Contains(buf.String(), "# request failed before any output (not a response): model rate_limit error (HTTP 429): slow down\n") {
		t.Errorf("missing comment for the failed request:\n%s", buf.String())
	}
	r := saveAndLoad(t, buf.Bytes())

	got, err := collect(context.Background(), r, request(0))
	if err != nil {
		t.Fatal(err)
	}
	wantEvents(t, got, []model.Event{text, finish})

	got, err = collect(context.Background(), r, request(1))
	wantEvents(t, got, []model.Event{text})
	me := wantKind(t, err, model.ErrOverloaded, "^busy$")
	if me.Status != 529 || me.RetryAfter != 1500*time.Millisecond {
		t.Errorf("replayed error %+v", me)
	}
	_, err = collect(context.Background(), r, request(2))
	wantKind(t, err, model.ErrNetwork, "^connection reset$")
	_, err = collect(context.Background(), r, request(3))
	wantKind(t, err, model.ErrReplay, "^recorded stream ended early: boom$")
	_, err = collect(context.Background(), r, request(4))
	wantKind(t, err, model.ErrReplay, "^recorded stream ended early: the stream ended without a finish event$")
}

func TestRecorderEarlyBreakAndCancel(t *testing.T) {
	text := model.Event{Type: model.EventText, Text: "a"}
	live := scripted(nil, text, text, model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn})
	var buf bytes.Buffer
	rec := NewRecorder(live, &buf)

	// Abandoned after output.
	for range rec.Stream(context.Background(), request(0)) {
		break
	}
	// Abandoned before output: no response.
	usage := model.Event{Type: model.EventUsage, Usage: &model.Usage{InputTokens: 3}}
	for range NewRecorder(scripted(nil, usage, text), &buf).Stream(context.Background(), request(1)) {
		break
	}
	// Cancelled after output: the wrapped backend ends with ctx's error.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	blocking := fake(func(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
		return func(yield func(model.Event, error) bool) {
			if !yield(text, nil) {
				return
			}
			<-ctx.Done()
			yield(model.Event{}, ctx.Err())
		}
	})
	for _, err := range NewRecorder(blocking, &buf).Stream(ctx, request(1)) {
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v", err)
			}
			break
		}
		cancel()
	}
	// Abandoned right after finish: complete.
	for ev := range rec.Stream(context.Background(), request(2)) {
		if ev.Type == model.EventFinish {
			break
		}
	}

	r := saveAndLoad(t, buf.Bytes())
	got, err := collect(context.Background(), r, request(0))
	wantEvents(t, got, []model.Event{text})
	wantKind(t, err, model.ErrReplay, "^recorded stream ended early: the consumer stopped reading the stream$")
	got, err = collect(context.Background(), r, request(1))
	wantEvents(t, got, []model.Event{text})
	wantKind(t, err, model.ErrReplay, "^recorded stream ended early: context canceled$")
	got, err = collect(context.Background(), r, request(2))
	if err != nil || len(got) != 3 {
		t.Errorf("response #3: %v, %v", got, err)
	}
}

func TestRecorderConcurrentStreams(t *testing.T) {
	n := *concurrentStreams
	// Each response has many events, to give interleaving a chance.
	var events []model.Event
	for range 50 {
		events = append(events, model.Event{Type: model.EventText, Text: "x"})
	}
	events = append(events, model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn})
	var buf bytes.Buffer
	rec := NewRecorder(scripted(nil, events...), &buf)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, err := collect(context.Background(), rec, request(0)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	r := saveAndLoad(t, buf.Bytes())
	if len(r.responses) != n {
		t.Fatalf("recording has %d responses, want %d", len(r.responses), n)
	}
	for i := range n {
		got, err := collect(context.Background(), r, request(i))
		if err != nil {
			t.Fatal(err)
		}
		wantEvents(t, got, events)
	}
}

// failingWriter fails every write and counts them.
type failingWriter struct {
	mu     sync.Mutex
	writes int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return 0, errors.New("disk full")
}

func TestRecorderWriteErrorDoesNotFailStreams(t *testing.T) {
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.DiscardHandler)) // the recorder logs the write error
	t.Cleanup(func() { slog.SetDefault(prev) })
	w := &failingWriter{}
	ev := []model.Event{{Type: model.EventText, Text: "a"}, {Type: model.EventFinish, Finish: model.FinishEndTurn}}
	rec := NewRecorder(scripted(nil, ev...), w)
	for range 3 {
		got, err := collect(context.Background(), rec, request(0))
		if err != nil {
			t.Fatal(err)
		}
		wantEvents(t, got, ev)
	}
	if w.writes != 1 {
		t.Errorf("%d writes after a write error, want recording to stop after 1", w.writes)
	}
}
