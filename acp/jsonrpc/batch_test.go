package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A Batch writes the lines Notify writes for the same params, in order,
// nothing before its flush, in few writes; a notification after the flush
// follows them.
func TestBatch(t *testing.T) {
	w := &writeCounter{}
	c := NewConn(context.Background(), eofReader{}, w, func(context.Context, string, json.RawMessage) (any, error) {
		return nil, nil
	}, Options{Logger: discardLogger()})
	defer c.Close()
	ctx := context.Background()
	type params struct {
		ID     string          `json:"sessionId"`
		Update json.RawMessage `json:"update"`
	}
	var want strings.Builder
	ref := NewConn(context.Background(), eofReader{}, &stringWriter{&want}, func(context.Context, string, json.RawMessage) (any, error) {
		return nil, nil
	}, Options{Logger: discardLogger()})
	defer ref.Close()
	b := c.Batch(ctx)
	const n = 2000
	for i := range n {
		u := json.RawMessage(`{"n":` + strings.Repeat("1", 1+i%7) + `,"s":"<&é>"}`)
		if err := b.NotifyRaw("session/update", []byte(`{"sessionId":"s_<1>","update":`), u, []byte("}")); err != nil {
			t.Fatal(err)
		}
		if err := ref.Notify(ctx, "session/update", params{"s_<1>", u}); err != nil {
			t.Fatal(err)
		}
	}
	written, _ := w.count()
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := c.Notify(ctx, "after", 1); err != nil {
		t.Fatal(err)
	}
	ref.Notify(ctx, "after", 1)
	writes, out := w.count()
	if out != want.String() {
		t.Fatalf("batch wrote %.200q…, want %.200q…", out, want.String())
	}
	if writes > 2+len(out)/lineBufMax || writes == written {
		t.Fatalf("%d writes for %d bytes (%d before the flush)", writes, len(out), written)
	}
	if err := b.NotifyRaw("m", []byte("{\"a\":\n1}")); err == nil || b.Flush() == nil {
		t.Fatal("a part holding a newline was taken")
	}
}

// A Batch whose context ended adds and writes nothing more.
func TestBatchCancelled(t *testing.T) {
	w := &writeCounter{}
	c := NewConn(context.Background(), eofReader{}, w, func(context.Context, string, json.RawMessage) (any, error) {
		return nil, nil
	}, Options{Logger: discardLogger()})
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	b := c.Batch(ctx)
	if err := b.NotifyRaw("m", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := b.NotifyRaw("m", []byte(`{}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("NotifyRaw after cancel: %v", err)
	}
	if err := b.Flush(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Flush after cancel: %v", err)
	}
	if n, _ := w.count(); n != 0 {
		t.Fatalf("%d writes after cancel", n)
	}
}

type stringWriter struct{ b *strings.Builder }

func (w *stringWriter) Write(p []byte) (int, error) { return w.b.Write(p) }
func (w *stringWriter) Close() error                { return nil }
