package retry_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"acpd/model"
	"acpd/model/anthropic"
	"acpd/model/internal/sse/ssetest"
	"acpd/model/openai"
	"acpd/model/retry"
)

// faultServer answers its n-th request with steps[n] (the last step
// repeats).
type faultServer struct {
	steps []http.HandlerFunc
	mu    sync.Mutex
	n     int
}

func (f *faultServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	step := f.steps[min(f.n, len(f.steps)-1)]
	f.n++
	f.mu.Unlock()
	step(w, r)
}

func (f *faultServer) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

func status(code int, header map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

func stream(t *testing.T, fixture string) http.HandlerFunc {
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return ssetest.Handler(data, 7).ServeHTTP
}

// cut sends a 200 event-stream response whose chunked body holds partial,
// then drops the connection without finishing the body; with reset the
// close is abortive (TCP RST).
func cut(partial string, reset bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(rw, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(partial), partial)
		rw.Flush()
		if tc, ok := conn.(*net.TCPConn); ok && reset {
			tc.SetLinger(0)
		}
		conn.Close()
	}
}

// stall sends partial, then sends nothing until the client goes away.
func stall(partial string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, partial)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
}

type dialect struct {
	name    string
	fixture string // a clean text stream
	golden  string // its expected events
	silent  string // a stream prefix that yields no event
	deltas  string // a stream prefix that yields a text event
	backend func(url string, client *http.Client, idle time.Duration) model.Backend
}

var dialects = []dialect{
	{
		name:    "openai",
		fixture: "../openai/testdata/text.sse",
		golden:  "../openai/testdata/text.golden.json",
		silent:  ": ping\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
		deltas:  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n",
		backend: func(url string, client *http.Client, idle time.Duration) model.Backend {
			return openai.New(openai.Options{HTTPOptions: model.HTTPOptions{BaseURL: url, HTTPClient: client, IdleTimeout: idle}})
		},
	},
	{
		name:    "anthropic",
		fixture: "../anthropic/testdata/text.sse",
		golden:  "../anthropic/testdata/text.golden.json",
		silent: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
			"event: ping\ndata: {\"type\": \"ping\"}\n\n",
		deltas: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n",
		backend: func(url string, client *http.Client, idle time.Duration) model.Backend {
			return anthropic.New(anthropic.Options{HTTPOptions: model.HTTPOptions{BaseURL: url, HTTPClient: client, IdleTimeout: idle}})
		},
	},
}

type retryLog struct {
	mu     sync.Mutex
	sleeps []time.Duration
	errs   []error
}

func (l *retryLog) policy() retry.Policy {
	return retry.Policy{
		MaxAttempts: 3,
		Backoff:     func(int) time.Duration { return time.Millisecond },
		Sleep: func(ctx context.Context, d time.Duration) error {
			l.mu.Lock()
			l.sleeps = append(l.sleeps, d)
			l.mu.Unlock()
			return ctx.Err()
		},
		OnRetry: func(attempt int, err error, delay time.Duration) {
			l.mu.Lock()
			l.errs = append(l.errs, err)
			l.mu.Unlock()
		},
	}
}

// run streams one request from d's backend against steps.
func run(t *testing.T, d dialect, idle time.Duration, steps ...http.HandlerFunc) (ssetest.Result, *faultServer, *retryLog) {
	t.Helper()
	fs := &faultServer{steps: steps}
	srv := httptest.NewServer(fs)
	t.Cleanup(srv.Close)
	url := srv.URL
	if d.name == "openai" {
		url += "/v1"
	}
	log := &retryLog{}
	b := retry.Wrap(d.backend(url, srv.Client(), idle), log.policy())
	req := &model.Request{Model: "m", Messages: []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "hi"}}}}}
	res := ssetest.Collect(t, b.Stream(t.Context(), req))
	return res, fs, log
}

// wantClean checks that res is exactly the clean fixture's outcome.
func wantClean(t *testing.T, d dialect, res ssetest.Result) {
	t.Helper()
	ssetest.Golden(t, d.golden, res, false)
}

func TestFaults(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			t.Run("429 retry-after-ms", func(t *testing.T) {
				res, fs, log := run(t, d, 0,
					status(429, map[string]string{"retry-after-ms": "2500", "retry-after": "3"}, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`),
					stream(t, d.fixture))
				wantClean(t, d, res)
				if fs.requests() != 2 || len(log.sleeps) != 1 || log.sleeps[0] != 2500*time.Millisecond {
					t.Errorf("requests %d, sleeps %v; want 2 and [2.5s]", fs.requests(), log.sleeps)
				}
				if model.KindOf(log.errs[0]) != model.ErrRateLimit {
					t.Errorf("retried error %v", log.errs[0])
				}
			})
			t.Run("529 overloaded", func(t *testing.T) {
				res, fs, log := run(t, d, 0,
					status(529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
					stream(t, d.fixture))
				wantClean(t, d, res)
				if fs.requests() != 2 || len(log.sleeps) != 1 || log.sleeps[0] != time.Millisecond || model.KindOf(log.errs[0]) != model.ErrOverloaded {
					t.Errorf("requests %d, sleeps %v, errs %v", fs.requests(), log.sleeps, log.errs)
				}
			})
			t.Run("500 until exhausted", func(t *testing.T) {
				res, fs, log := run(t, d, 0, status(500, nil, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`))
				if res.Error == nil || res.Error.Kind != model.ErrServer || len(res.Events) != 0 {
					t.Errorf("result %+v", res)
				}
				if fs.requests() != 3 || len(log.sleeps) != 2 {
					t.Errorf("requests %d, sleeps %v; want 3 and 2", fs.requests(), log.sleeps)
				}
			})
			t.Run("quota 429 not retried", func(t *testing.T) {
				body := `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
				if d.name == "anthropic" {
					body = `{"type":"error","error":{"type":"billing_error","message":"Your credit balance is too low"}}`
				}
				res, fs, log := run(t, d, 0, status(429, map[string]string{"retry-after": "1"}, body), stream(t, d.fixture))
				if res.Error == nil || res.Error.Kind != model.ErrQuota {
					t.Errorf("result %+v", res)
				}
				if fs.requests() != 1 || len(log.sleeps) != 0 {
					t.Errorf("requests %d, sleeps %v; want one request", fs.requests(), log.sleeps)
				}
			})
			t.Run("reset before any event", func(t *testing.T) {
				res, fs, log := run(t, d, 0, cut(d.silent, true), stream(t, d.fixture))
				wantClean(t, d, res)
				if fs.requests() != 2 || len(log.errs) != 1 || model.KindOf(log.errs[0]) != model.ErrNetwork {
					t.Errorf("requests %d, retried errors %v", fs.requests(), log.errs)
				}
			})
			t.Run("cut after deltas surfaces", func(t *testing.T) {
				res, fs, log := run(t, d, 0, cut(d.deltas, false), stream(t, d.fixture))
				if len(res.Events) != 1 || res.Events[0].Text != "Hello" || res.Error == nil || res.Error.Kind != model.ErrNetwork {
					t.Errorf("result %+v", res)
				}
				if fs.requests() != 1 || len(log.errs) != 0 {
					t.Errorf("requests %d, retries %v; want no retry", fs.requests(), log.errs)
				}
			})
			t.Run("stalled stream", func(t *testing.T) {
				res, fs, log := run(t, d, 50*time.Millisecond, stall(d.silent), stream(t, d.fixture))
				wantClean(t, d, res)
				if fs.requests() != 2 || len(log.errs) != 1 || model.KindOf(log.errs[0]) != model.ErrNetwork ||
					!strings.Contains(log.errs[0].Error(), "no data from server") {
					t.Errorf("requests %d, retried errors %v", fs.requests(), log.errs)
				}
			})
		})
	}
}
