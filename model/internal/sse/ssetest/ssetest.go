// Package ssetest holds test helpers for the model backends: the contract
// suite every backend runs ([TestBackend], in the style of
// testing/fstest.TestFS), readers and HTTP handlers that deliver a
// recorded stream in random pieces, an in-memory HTTP server for
// testing/synctest bubbles ([PipeClient]), a collector that checks the
// [model.Backend] iterator contract, and golden-file comparison.
package ssetest

import (
	"encoding/json"
	"errors"
	"io"
	"iter"
	"math/rand/v2"
	"net/http"
	"os"
	"reflect"
	"testing"

	"acpd/model"
)

// ChunkReader returns a reader of data that returns short reads of random
// sizes chosen by seed, sometimes an empty read (never two in a row), and
// sometimes the last bytes together with io.EOF.
func ChunkReader(data []byte, seed uint64) io.Reader {
	return &chunkReader{data: data, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

type chunkReader struct {
	data      []byte
	rng       *rand.Rand
	lastEmpty bool
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !c.lastEmpty && c.rng.IntN(8) == 0 {
		c.lastEmpty = true
		return 0, nil
	}
	c.lastEmpty = false
	n := 1 + c.rng.IntN(min(len(p), 64))
	if c.rng.IntN(4) == 0 {
		n = 1 + c.rng.IntN(len(p))
	}
	n = copy(p, c.data[:min(n, len(c.data))])
	c.data = c.data[n:]
	if len(c.data) == 0 && c.rng.IntN(2) == 0 {
		return n, io.EOF
	}
	return n, nil
}

// Handler answers every request with data as a text/event-stream body,
// written in random pieces (chosen by seed), each flushed to the client.
func Handler(data []byte, seed uint64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		WriteChunked(w, data, seed)
	})
}

// WriteChunked writes data to w in random pieces chosen by seed, flushing
// after each. It stops at the first write error (the client went away).
func WriteChunked(w http.ResponseWriter, data []byte, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	f, _ := w.(http.Flusher)
	for len(data) > 0 {
		n := min(len(data), 1+rng.IntN(48))
		if _, err := w.Write(data[:n]); err != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
		data = data[n:]
	}
}

// Result is the outcome of one stream, in golden-file form.
type Result struct {
	Events []model.Event `json:"events"`
	Error  *Error        `json:"error"`
}

// Error is an error in golden-file form.
type Error struct {
	Kind         model.ErrorKind `json:"kind,omitempty"`
	Status       int             `json:"status,omitempty"`
	RetryAfterMS int64           `json:"retryAfterMs,omitempty"`
	Message      string          `json:"message"`
}

// ErrorOf converts err to its golden-file form (nil for nil).
func ErrorOf(err error) *Error {
	if err == nil {
		return nil
	}
	var me *model.Error
	if errors.As(err, &me) {
		msg := me.Message
		if msg == "" && me.Err != nil {
			msg = me.Err.Error()
		}
		return &Error{Kind: me.Kind, Status: me.Status, RetryAfterMS: me.RetryAfter.Milliseconds(), Message: msg}
	}
	return &Error{Message: err.Error()}
}

// Collect drains seq and reports violations of the [model.Backend]
// contract: an element after an error, an event after EventFinish, or a
// stream that ends with neither.
func Collect(t testing.TB, seq iter.Seq2[model.Event, error]) Result {
	t.Helper()
	var res Result
	var finished, failed bool
	for ev, err := range seq {
		if failed || finished {
			t.Errorf("element after the end of the stream: %+v, %v", ev, err)
		}
		if err != nil {
			failed = true
			res.Error = ErrorOf(err)
			continue
		}
		if ev.Type == model.EventFinish {
			finished = true
		}
		res.Events = append(res.Events, ev)
	}
	if !failed && !finished {
		t.Errorf("stream ended without EventFinish or error")
	}
	return res
}

// Golden compares got, as JSON, with the JSON file at path; with update it
// rewrites the file instead.
func Golden(t testing.TB, path string, got any, update bool) {
	t.Helper()
	gotJSON, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if update {
		if err := os.WriteFile(path, append(gotJSON, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	wantJSON, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if !JSONEqual(gotJSON, wantJSON) {
		t.Errorf("%s: mismatch (run with -update after checking)\ngot:\n%s\nwant:\n%s", path, gotJSON, wantJSON)
	}
}

// JSONEqual reports whether a and b hold equal JSON values.
func JSONEqual(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
