package ssetest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"acpd/model"
)

// Stalled is a backend under test whose every stream of Request emits one
// event, the text delta Text, and then nothing until the consumer lets go
// of the stream.
type Stalled struct {
	Backend model.Backend
	Request *model.Request
	Text    string
	// Released, when not nil, waits until the backend released the stream
	// the test ended last (the server saw the connection close, the
	// plug-in the cancellation).
	Released func(t *testing.T)
}

// Factory describes a backend to [TestBackend]: Stalled for any backend,
// or HTTP for an HTTP dialect (the suite then serves the streams itself
// and also checks the HTTP part of the contract).
type Factory struct {
	Stalled func(t *testing.T) Stalled
	HTTP    *HTTP
}

// HTTP describes an HTTP dialect to [TestBackend].
type HTTP struct {
	// New returns the dialect's backend for o.
	New func(o model.HTTPOptions) model.Backend
	// BasePath is appended to the test server's URL to make BaseURL
	// ("/v1" for OpenAI's APIs, whose BaseURL holds the version).
	BasePath string
	// Path is the path the streaming request of Request goes to.
	Path string
	// Request is a minimal request of the dialect.
	Request *model.Request
	// Head is the start of a stream whose only event is the text delta
	// "Hel".
	Head string
	// KeyHeader and KeyPrefix say how APIKey is sent.
	KeyHeader, KeyPrefix string
	// Fixtures globs recorded streams: each NAME.sse, served in random
	// flushed pieces, must produce the events of NAME.golden.json
	// (rewritten instead when Update is set).
	Fixtures string
	Update   bool
	// Errors are the dialect's error answers; the suite adds answers every
	// dialect classifies alike. ErrorContentType is the Content-Type of
	// rows without their own ("application/json" when empty).
	Errors           []HTTPError
	ErrorContentType string
	// MaxMessage bounds the message of a classified error (plus "...").
	MaxMessage int
	// Last is in the event that completes an answer ("[DONE]"); empty
	// when an answer ends only with its body (Gemini).
	Last string
}

// HTTPError is one error answer and its expected classification.
type HTTPError struct {
	Name        string
	Status      int
	Header      map[string]string
	ContentType string
	Body        string
	Kind        model.ErrorKind
	RetryAfter  time.Duration
	// Message, when not empty, is the exact message expected.
	Message string
	// InBand marks an error object sent with a 2xx status: the error is
	// classified as a stream error, without a status.
	InBand bool
}

// commonErrors are answers every HTTP dialect classifies alike.
var commonErrors = []HTTPError{
	{Name: "common/cross-host redirect", Status: 307, Header: map[string]string{"Location": "http://elsewhere.invalid/x"}, Kind: model.ErrInvalidRequest, Message: "Temporary Redirect"},
	{Name: "common/html bad gateway", Status: 502, ContentType: "text/html", Body: "<html>" + strings.Repeat("x", 5000) + "</html>", Kind: model.ErrServer},
	{Name: "common/json instead of stream", Status: 200, ContentType: "application/json", Body: `{}`, Kind: model.ErrInvalidRequest},
}

// TestBackend checks that a backend keeps the [model.Backend] contract:
// cancelling the context ends the stream with ctx's error after the
// events already received and releases it; a consumer that stops early
// releases it; a cancelled context yields no event; streams of one
// backend run concurrently. For an HTTP dialect it also checks the
// recorded fixtures, the idle timeout, error classification (the API key
// never appears in a message, no request is retried) and the
// model.HTTPOptions plumbing (base URL and its query, Query, Headers,
// APIKey).
func TestBackend(t *testing.T, f Factory) {
	stalled := f.Stalled
	if f.HTTP != nil {
		stalled = f.HTTP.stalled
		t.Run("Fixtures", f.HTTP.testFixtures)
		t.Run("IdleTimeout", f.HTTP.testIdle)
		t.Run("Reuse", f.HTTP.testReuse)
		t.Run("Errors", f.HTTP.testErrors)
		t.Run("Options", f.HTTP.testOptions)
	}
	t.Run("Cancel", func(t *testing.T) {
		s := stalled(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var events []model.Event
		var last error
		for ev, err := range s.Backend.Stream(ctx, s.Request) {
			if err != nil {
				last = err
				break
			}
			events = append(events, ev)
			cancel()
		}
		if last != context.Canceled || len(events) != 1 || events[0].Text != s.Text {
			t.Fatalf("events %+v, err %v", events, last)
		}
		if s.Released != nil {
			s.Released(t)
		}
	})
	t.Run("StopEarly", func(t *testing.T) {
		s := stalled(t)
		for ev, err := range s.Backend.Stream(t.Context(), s.Request) {
			if err != nil || ev.Text != s.Text {
				t.Fatalf("got %+v, %v", ev, err)
			}
			break
		}
		if s.Released != nil {
			s.Released(t)
		}
	})
	t.Run("CancelledContext", func(t *testing.T) {
		s := stalled(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		n := 0
		var last error
		for _, err := range s.Backend.Stream(ctx, s.Request) {
			if err != nil {
				last = err
				break
			}
			n++
		}
		if n != 0 || !errors.Is(last, context.Canceled) {
			t.Fatalf("%d events, err %v; want none and context.Canceled", n, last)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		s := stalled(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var first, wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			first.Add(1)
			wg.Go(func() {
				got := false
				for ev, err := range s.Backend.Stream(ctx, s.Request) {
					if err != nil {
						errs[i] = err
						break
					}
					if !got && ev.Text == s.Text {
						got = true
						first.Done()
					}
				}
				if !got {
					first.Done()
				}
			})
		}
		first.Wait() // both streams are open at once
		cancel()
		wg.Wait()
		for i, err := range errs {
			if err != context.Canceled {
				t.Errorf("stream %d: err %v, want context.Canceled", i, err)
			}
		}
	})
}

// server starts a test server for h and returns the options reaching it.
func (d *HTTP) server(t *testing.T, h http.Handler) model.HTTPOptions {
	t.Helper()
	return Serve(t, h, model.HTTPOptions{}, d.BasePath)
}

// stallServer serves Head and then waits until the client goes away,
// which it reports on the returned channel.
func (d *HTTP) stallServer(t *testing.T) (model.HTTPOptions, <-chan struct{}) {
	gone := make(chan struct{}, 16)
	o := d.server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, d.Head)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		gone <- struct{}{}
	}))
	return o, gone
}

func (d *HTTP) stalled(t *testing.T) Stalled {
	o, gone := d.stallServer(t)
	return Stalled{Backend: d.New(o), Request: d.Request, Text: "Hel", Released: func(t *testing.T) { <-gone }}
}

func (d *HTTP) testFixtures(t *testing.T) {
	files, err := filepath.Glob(d.Fixtures)
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures %s: %v", d.Fixtures, err)
	}
	for i, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".sse")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			b := d.New(d.server(t, Handler(data, uint64(i))))
			got := Collect(t, b.Stream(t.Context(), d.Request))
			Golden(t, strings.TrimSuffix(file, ".sse")+".golden.json", got, d.Update)
		})
	}
}

// testIdle runs in a synctest bubble on an in-memory network: the idle
// timeout elapses in fake time.
func (d *HTTP) testIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gone := make(chan struct{})
		client := PipeClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, d.Head)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			close(gone)
		}))
		o := model.HTTPOptions{BaseURL: "http://pipe" + d.BasePath, HTTPClient: client, IdleTimeout: 30 * time.Second}
		start := time.Now()
		res := Collect(t, d.New(o).Stream(t.Context(), d.Request))
		if len(res.Events) != 1 || res.Error == nil || res.Error.Kind != model.ErrNetwork || !strings.Contains(res.Error.Message, "no data from server") {
			t.Fatalf("result = %+v", res)
		}
		if waited := time.Since(start); waited != o.IdleTimeout {
			t.Errorf("idle error after %v, want %v", waited, o.IdleTimeout)
		}
		<-gone
	})
}

// testReuse checks that a completed answer leaves its connection to the
// next request, and that a server keeping an answer's stream open after
// its last event (see [HTTP.Last]) does not hold the answer up until the
// idle timeout (in a synctest bubble, on an in-memory
// network).
func (d *HTTP) testReuse(t *testing.T) {
	files, err := filepath.Glob(d.Fixtures)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for i, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var conns atomic.Int32
		srv := httptest.NewUnstartedServer(Handler(data, uint64(i)))
		srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		}
		srv.Start()
		b := d.New(model.HTTPOptions{BaseURL: srv.URL + d.BasePath, HTTPClient: srv.Client()})
		first := Collect(t, b.Stream(t.Context(), d.Request))
		if first.Error != nil {
			srv.Close()
			continue // a failed answer's connection is not worth keeping
		}
		second := Collect(t, b.Stream(t.Context(), d.Request))
		srv.Close()
		if second.Error != nil {
			t.Fatalf("%s: the second answer failed: %+v", file, second.Error)
		}
		if n := conns.Load(); n != 1 {
			t.Errorf("%s: two complete answers took %d connections, want 1", file, n)
		}
		checked++

		if d.Last == "" || !bytes.Contains(data, []byte(d.Last)) {
			continue
		}
		synctest.Test(t, func(t *testing.T) {
			client := PipeClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				WriteChunked(w, data, uint64(i))
				w.(http.Flusher).Flush()
				<-r.Context().Done()
			}))
			o := model.HTTPOptions{BaseURL: "http://pipe" + d.BasePath, HTTPClient: client, IdleTimeout: time.Minute}
			b := d.New(o)
			start := time.Now()
			held := Collect(t, b.Stream(t.Context(), d.Request))
			if held.Error != nil || len(held.Events) != len(first.Events) {
				t.Fatalf("%s: an answer whose stream stays open = %+v, want %+v", file, held, first)
			}
			if waited := time.Since(start); waited > time.Second {
				t.Errorf("%s: an answer whose stream stays open took %v", file, waited)
			}
		})
	}
	if checked == 0 {
		t.Fatalf("no fixture of %s is a complete answer", d.Fixtures)
	}
}

func (d *HTTP) testErrors(t *testing.T) {
	const key = "secret-test-key-42"
	for _, tt := range append(append([]HTTPError(nil), d.Errors...), commonErrors...) {
		t.Run(tt.Name, func(t *testing.T) {
			var requests atomic.Int32
			o := d.server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				for k, v := range tt.Header {
					w.Header().Set(k, v)
				}
				ct := cmp.Or(tt.ContentType, d.ErrorContentType, "application/json")
				w.Header().Set("Content-Type", ct)
				w.WriteHeader(tt.Status)
				io.WriteString(w, tt.Body)
			}))
			o.APIKey = key
			res := Collect(t, d.New(o).Stream(t.Context(), d.Request))
			if len(res.Events) != 0 || res.Error == nil {
				t.Fatalf("result = %+v", res)
			}
			e := res.Error
			if e.Kind != tt.Kind || time.Duration(e.RetryAfterMS)*time.Millisecond != tt.RetryAfter {
				t.Errorf("error = %+v, want kind %s retryAfter %v", e, tt.Kind, tt.RetryAfter)
			}
			if want := tt.Status; !tt.InBand && e.Status != want || tt.InBand && e.Status != 0 {
				t.Errorf("status = %d, want %d (in band %v)", e.Status, want, tt.InBand)
			}
			if tt.Message != "" && e.Message != tt.Message {
				t.Errorf("message = %q, want %q", e.Message, tt.Message)
			}
			if e.Message == "" || len(e.Message) > d.MaxMessage+3 || strings.Contains(e.Message, key) {
				t.Errorf("message empty, too long or leaking the key: %q", e.Message)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("requests = %d", n)
			}
		})
	}
}

// testOptions checks that the request carries what model.HTTPOptions
// configures.
func (d *HTTP) testOptions(t *testing.T) {
	type seen struct {
		path   string
		query  map[string][]string
		header http.Header
	}
	got := make(chan seen, 1)
	o := d.server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.URL.Path, r.URL.Query(), r.Header.Clone()}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, d.Head)
	}))
	o.BaseURL += "/?base=1&over=base"
	o.Query = map[string]string{"q": "v w", "over": "query"}
	o.APIKey = "test-key"
	o.Headers = map[string]string{"X-Test": "1", "user-agent": "suite"}
	for range d.New(o).Stream(t.Context(), d.Request) {
	}
	s := <-got
	if s.path != d.Path {
		t.Errorf("path %q, want %q", s.path, d.Path)
	}
	for k, want := range map[string]string{"base": "1", "q": "v w", "over": "query"} {
		if v := s.query[k]; len(v) != 1 || v[0] != want {
			t.Errorf("query %s = %q, want %q", k, v, want)
		}
	}
	for k, want := range map[string]string{
		d.KeyHeader:    d.KeyPrefix + "test-key",
		"X-Test":       "1",
		"User-Agent":   "suite",
		"Content-Type": "application/json",
		"Accept":       "text/event-stream",
	} {
		if v := s.header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
}
