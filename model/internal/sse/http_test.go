package sse

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"acpd/model"
	"acpd/model/internal/body"
	"acpd/model/internal/sse/ssetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After-Ms": {"1500"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"20.5"}}, 20500 * time.Microsecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"7"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"junk"}, "Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{http.Header{"Retry-After": {"0"}}, 0},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Hour).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
	}
	for _, tt := range tests {
		if got := RetryAfter(tt.h, now); got != tt.want {
			t.Errorf("RetryAfter(%v) = %v, want %v", tt.h, got, tt.want)
		}
	}
}

func TestOpenSendsRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != "POST" || r.Header.Get("X-Test") != "1" || string(body) != `{"a":1}` || r.URL.Query().Get("q") != "v" {
			http.Error(w, "bad request", 400)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: ok\n\n")
	}))
	defer srv.Close()
	s, err := Open(t.Context(), Call{Client: srv.Client(), Method: "POST", URL: srv.URL + "/x?q=v",
		Header: http.Header{"X-Test": {"1"}}, Body: body.Raw([]byte(`{"a":1}`))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Response.StatusCode != 200 {
		t.Fatalf("status %d", s.Response.StatusCode)
	}
	ev, err := NewReader(s, 0).Next()
	if err != nil || ev.Data != "ok" {
		t.Fatalf("Next = %v, %v", ev, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// The idle tests run in a synctest bubble on an in-memory network: the
// idle timers and the consumer's pauses use fake time, so the order of
// events does not depend on the machine's speed.

func TestOpenIdleBeforeHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := ssetest.PipeClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}))
		_, err := Open(t.Context(), Call{Client: client, Method: "GET", URL: "http://pipe/", Idle: 20 * time.Millisecond})
		if model.KindOf(err) != model.ErrNetwork || !strings.Contains(err.Error(), "no data from server") {
			t.Fatalf("err = %v, want idle ErrNetwork", err)
		}
	})
}

func TestOpenIdleDuringBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := ssetest.PipeClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "data: first\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		s, err := Open(t.Context(), Call{Client: client, Method: "GET", URL: "http://pipe/", Idle: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		r := NewReader(s, 0)
		if ev, err := r.Next(); err != nil || ev.Data != "first" {
			t.Fatalf("Next = %v, %v", ev, err)
		}
		start := time.Now()
		_, err = r.Next()
		if err = s.Err(err); model.KindOf(err) != model.ErrNetwork || !strings.Contains(err.Error(), "no data from server") {
			t.Fatalf("err = %v, want idle ErrNetwork", err)
		}
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Errorf("idle error after %v, want 20ms", d)
		}
	})
}

// The idle timer runs only while a read waits: a consumer that is slow
// between reads does not trip it.
func TestOpenIdleIgnoresConsumerTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := ssetest.PipeClient(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for range 3 {
				io.WriteString(w, "data: x\n\n")
			}
		}))
		s, err := Open(t.Context(), Call{Client: client, Method: "GET", URL: "http://pipe/", Idle: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		r := NewReader(s, 0)
		for i := range 3 {
			if _, err := r.Next(); err != nil {
				t.Fatalf("event %d: %v", i, s.Err(err))
			}
			time.Sleep(40 * time.Millisecond)
		}
	})
}

func TestOpenParentCancel(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	_, err := Open(ctx, Call{Client: srv.Client(), Method: "GET", URL: srv.URL})
	if err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestOpenErrorsHideURL(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more
	_, err = Open(t.Context(), Call{Method: "GET", URL: "http://" + addr + "/v1?key=SECRET"})
	if model.KindOf(err) != model.ErrNetwork || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("err = %v, want ErrNetwork without the query", err)
	}
	_, err = Open(t.Context(), Call{Method: "GET", URL: "http://[::1/v1?key=SECRET"})
	if model.KindOf(err) != model.ErrInvalidRequest || strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("err = %v, want ErrInvalidRequest without the query", err)
	}
	var me *model.Error
	if !errors.As(err, &me) {
		t.Fatal("not a *model.Error")
	}
}

func TestOpenRefusesCrossHostRedirect(t *testing.T) {
	leaked := make(chan string, 1)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked <- r.Header.Get("X-Api-Key")
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/here", http.StatusTemporaryRedirect)
			return
		}
		if r.URL.Path == "/here" {
			io.WriteString(w, "data: ok\n\n")
			return
		}
		http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	call := Call{Client: srv.Client(), Method: "POST", URL: srv.URL + "/start", Header: http.Header{"X-Api-Key": {"secret"}}, Body: body.Raw([]byte("{}"))}
	s, err := Open(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s.Response.StatusCode != http.StatusTemporaryRedirect {
		t.Errorf("status %d, want the refused 307", s.Response.StatusCode)
	}
	select {
	case k := <-leaked:
		t.Fatalf("request reached the other host with key %q", k)
	default:
	}
	call.URL = srv.URL + "/moved"
	s, err = Open(t.Context(), call)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Response.StatusCode != 200 {
		t.Errorf("same-host redirect: status %d", s.Response.StatusCode)
	}
}
