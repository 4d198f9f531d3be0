package provider

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/log"
	"go.uber.org/goleak"

	"acpd/config"
	"acpd/internal/syncbuf"
	"acpd/model"
)

func TestMain(m *testing.M) {
	if os.Getenv(pluginEnv) == "1" {
		runPlugin()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// pluginEnv makes the test binary act as an exec plug-in.
const pluginEnv = "ACPD_PROVIDER_TEST_PLUGIN"

// runPlugin is a minimal exec plug-in (protocol: package model/exec). It
// serves "plug-1" and answers every request with the acpd version of the
// hello and whether PLUGIN_API_KEY holds the expected key (never the key
// itself).
func runPlugin() {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		os.Exit(0)
	}()
	out := json.NewEncoder(os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 64<<20)
	version := ""
	for in.Scan() {
		var msg struct {
			Type string `json:"type"`
			ID   string `json:"id"`
			Acpd string `json:"acpd"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil {
			return
		}
		switch msg.Type {
		case "hello":
			version = msg.Acpd
			out.Encode(map[string]any{"v": 1, "type": "hello",
				"models": []any{map[string]any{"id": "plug-1", "name": "Plug", "contextWindow": 4242, "tools": true}}})
		case "request":
			key := "missing"
			switch os.Getenv("PLUGIN_API_KEY") {
			case "plugin-key-1":
				key = "1"
			case "plugin-key-2":
				key = "2"
			}
			text := "version=" + version + " key=" + key + " leaked=" + strconv.FormatBool(os.Getenv("OPENAI_API_KEY") != "")
			out.Encode(map[string]any{"v": 1, "id": msg.ID, "event": map[string]any{"type": "text", "text": text}})
			out.Encode(map[string]any{"v": 1, "id": msg.ID, "event": map[string]any{"type": "finish", "finish": "end_turn"}})
		}
	}
}

// env is a concurrency-safe fake environment.
type env struct {
	mu sync.Mutex
	m  map[string]string
}

func newEnv(kv ...string) *env {
	e := &env{m: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		e.m[kv[i]] = kv[i+1]
	}
	return e
}

func (e *env) get(k string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.m[k]
}

func (e *env) set(k, v string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[k] = v
}

// debugLogger returns a logger writing everything to a buffer.
func debugLogger() (*slog.Logger, *syncbuf.Buffer) {
	buf := &syncbuf.Buffer{}
	l := log.New(buf)
	l.SetLevel(log.DebugLevel)
	return slog.New(l), buf
}

// seen is one request received by a fakeServer.
type seen struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   string
}

// fakeServer answers as any of the HTTP dialects, by path, and records
// the requests.
type fakeServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
	// status, when not zero, is the status of the next responses (and is
	// consumed by each one while fail > 0).
	fail   int
	status int
	// models is the body of GET .../models.
	models string
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	f := &fakeServer{models: `{"object":"list","data":[{"id":"m1","object":"model"},{"id":"m2","object":"model"}]}`}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.reqs...)
}

func (f *fakeServer) last(t *testing.T) seen {
	t.Helper()
	reqs := f.requests()
	if len(reqs) == 0 {
		t.Fatal("the server received no request")
	}
	return reqs[len(reqs)-1]
}

const (
	openaiSSE = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":null}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: [DONE]\n\n"
	anthropicSSE = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	geminiSSE    = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hi\"}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}]}\n\n"
	responsesSSE = "data: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"hi\"}\n\n" +
		"data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"output\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n"
)

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.reqs = append(f.reqs, seen{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header.Clone(), Body: string(body)})
	status := 0
	if f.fail > 0 {
		f.fail--
		status = f.status
	}
	models := f.models
	f.mu.Unlock()
	if status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, `{"error":{"message":"try later","type":"server_error"}}`)
		return
	}
	var stream string
	switch p := r.URL.Path; {
	case r.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, models)
		return
	case strings.HasSuffix(p, "/chat/completions"):
		stream = openaiSSE
	case strings.HasSuffix(p, "/v1/messages"):
		stream = anthropicSSE
	case strings.HasSuffix(p, ":streamGenerateContent"):
		stream = geminiSSE
	case strings.HasSuffix(p, "/responses"):
		stream = responsesSSE
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, stream)
}

// streamText streams a one-message request with b and returns the text,
// failing the test on an error.
func streamText(t *testing.T, b model.Backend, modelID string) string {
	t.Helper()
	text, err := tryStream(b, modelID)
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	return text
}

func tryStream(b model.Backend, modelID string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := &model.Request{Model: modelID, MaxOutputTokens: 100, Messages: []model.Message{
		{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "hello"}}}}}
	var text strings.Builder
	for ev, err := range b.Stream(ctx, req) {
		if err != nil {
			return text.String(), err
		}
		if ev.Type == model.EventText {
			text.WriteString(ev.Text)
		}
	}
	return text.String(), nil
}

// newRegistry returns a Registry closed at the end of the test.
func newRegistry(t *testing.T, o Options) *Registry {
	t.Helper()
	if o.probes == nil {
		o.probes = []probe{} // never probe the real loopback ports
	}
	if o.Logger == nil {
		o.Logger, _ = debugLogger()
	}
	r := New(o)
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}

// redirectClient sends every request to srv, whatever its URL's host (to
// test endpoints with real host names without leaving the loopback).
func redirectClient(srv *httptest.Server) *http.Client {
	u, _ := url.Parse(srv.URL)
	base := srv.Client().Transport
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = u.Scheme, u.Host
		return base.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// cfg returns a configuration with the given providers.
func cfg(providers map[string]config.Provider) *config.Config {
	return &config.Config{Providers: providers}
}
