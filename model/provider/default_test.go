package provider

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"acpd/config"
)

func TestDefaultFromConfigAndKeys(t *testing.T) {
	dir := t.TempDir()
	stored := OpenCredentials(filepath.Join(dir, "c.json"))
	if err := stored.Set("gemini", "g"); err != nil {
		t.Fatal(err)
	}
	if err := stored.Set("openai", "o"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		config *config.Config
		env    []string
		creds  *Credentials
		want   string
	}{
		{"config model wins", &config.Config{Model: "x/y"}, []string{"ANTHROPIC_API_KEY", "k"}, stored, "x/y"},
		{"anthropic first", nil, []string{"GEMINI_API_KEY", "k", "OPENAI_API_KEY", "k", "ANTHROPIC_API_KEY", "k"}, nil, "anthropic/claude-sonnet-4-5"},
		{"then openai", nil, []string{"GEMINI_API_KEY", "k", "OPENAI_API_KEY", "k"}, nil, "openai/gpt-5"},
		{"google key", nil, []string{"GOOGLE_API_KEY", "k"}, nil, "gemini/gemini-2.5-pro"},
		{"env before stored", nil, []string{"GEMINI_API_KEY", "k"}, stored, "gemini/gemini-2.5-pro"},
		{"stored in provider order", nil, nil, stored, "openai/gpt-5"},
		{"blank key ignored", nil, []string{"ANTHROPIC_API_KEY", "  ", "GEMINI_API_KEY", "k"}, nil, "gemini/gemini-2.5-pro"},
		{"configured key variable", cfg(map[string]config.Provider{"anthropic": {Dialect: "anthropic", APIKeyEnv: "WORK_KEY"}}),
			[]string{"ANTHROPIC_API_KEY", "k", "OPENAI_API_KEY", "k"}, nil, "openai/gpt-5"},
		{"configured first model", cfg(map[string]config.Provider{"anthropic": {Dialect: "anthropic",
			Models: []config.ModelConfig{{ID: "claude-haiku-4-5"}, {ID: "claude-opus-4-5"}}}}),
			[]string{"ANTHROPIC_API_KEY", "k"}, nil, "anthropic/claude-haiku-4-5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRegistry(t, Options{Config: tc.config, Getenv: newEnv(tc.env...).get, Credentials: tc.creds, Discover: true})
			got, err := r.Default(context.Background())
			if err != nil || got != tc.want {
				t.Errorf("Default = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestDefaultOllamaHost(t *testing.T) {
	srv := newFakeServer(t)
	srv.models = `{"object":"list","data":[{"id":"qwen3:8b","object":"model","owned_by":"library"},{"id":"llama3.2","object":"model"}]}`
	r := newRegistry(t, Options{Getenv: newEnv("OLLAMA_HOST", srv.Listener.Addr().String()).get})
	got, err := r.Default(context.Background())
	if err != nil || got != "ollama/qwen3:8b" {
		t.Fatalf("Default = %q, %v", got, err)
	}
	if req := srv.last(t); req.Method != http.MethodGet || req.Path != "/v1/models" {
		t.Errorf("request = %s %s", req.Method, req.Path)
	}
	b, _, err := r.Resolve(got)
	if err != nil {
		t.Fatal(err)
	}
	streamText(t, b, "qwen3:8b")
	if req := srv.last(t); req.Path != "/v1/chat/completions" {
		t.Errorf("path = %q", req.Path)
	}
	if models := r.Models(context.Background()); !slices.Equal(models, []string{"ollama/qwen3:8b", "ollama/llama3.2"}) {
		t.Errorf("Models = %q", models)
	}

	// An OLLAMA_HOST that does not answer with a model list is reported.
	srv.models = `<html>Ollama is running</html>`
	r2 := newRegistry(t, Options{Getenv: newEnv("OLLAMA_HOST", srv.Listener.Addr().String()).get})
	if _, err := r2.Default(context.Background()); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "OLLAMA_HOST is set") {
		t.Errorf("bad OLLAMA_HOST server: err = %v", err)
	}
}

// probeServer serves GET /v1/models with status and body, counting hits.
func probeServer(t *testing.T, status int, contentType, body string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestDiscovery(t *testing.T) {
	html, _ := probeServer(t, 200, "text/html", "<!doctype html><title>Router admin</title>")
	other, _ := probeServer(t, 200, "application/json", `{"models":[{"name":"x"}]}`)
	missing, _ := probeServer(t, 404, "text/plain", "404 page not found")
	valid, _ := probeServer(t, 200, "application/json", `{"data":[{"id":"local-model"}]}`)
	second, _ := probeServer(t, 200, "application/json", `{"object":"list","data":[{"id":"other"}]}`)

	logger, logs := debugLogger()
	r := newRegistry(t, Options{Getenv: newEnv().get, Discover: true, Logger: logger, probes: []probe{
		{"ollama", html.URL + "/v1"},
		{"lmstudio", other.URL + "/v1"},
		{"llamacpp", missing.URL + "/v1"},
		{"vllm", valid.URL + "/v1"},
		{"lmstudio", second.URL + "/v1"},
	}})
	got, err := r.Default(context.Background())
	if err != nil || got != "vllm/local-model" {
		t.Fatalf("Default = %q, %v; want the first OpenAI-shaped answer", got, err)
	}
	if !strings.Contains(logs.String(), "found a local model server") {
		t.Errorf("discovery not logged: %s", logs)
	}
	// The discovered endpoint serves the provider's requests.
	b, _, err := r.Resolve(got)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tryStream(b, "local-model"); err == nil {
		t.Error("the probe server cannot stream: want an error")
	}
	if models := r.Models(context.Background()); !slices.Equal(models, []string{"vllm/local-model"}) {
		t.Errorf("Models = %q", models)
	}

	// Nothing acceptable: ErrUnavailable naming what to set.
	r2 := newRegistry(t, Options{Getenv: newEnv().get, Discover: true, probes: []probe{
		{"ollama", html.URL + "/v1"}, {"lmstudio", other.URL + "/v1"}, {"llamacpp", missing.URL + "/v1"}}})
	_, err = r2.Default(context.Background())
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	for _, v := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY or GOOGLE_API_KEY", "OLLAMA_HOST", "acpd login", "ACPD_MODEL"} {
		if !strings.Contains(err.Error(), v) {
			t.Errorf("error %q does not mention %s", err, v)
		}
	}
}

func TestDiscoveryServesResolve(t *testing.T) {
	srv := newFakeServer(t)
	r := newRegistry(t, Options{Getenv: newEnv().get, Discover: true, probes: []probe{{"llamacpp", srv.URL + "/v1"}}})
	got, err := r.Default(context.Background())
	if err != nil || got != "llamacpp/m1" {
		t.Fatalf("Default = %q, %v", got, err)
	}
	b, _, err := r.Resolve(got)
	if err != nil {
		t.Fatal(err)
	}
	if text := streamText(t, b, "m1"); text != "hi" {
		t.Errorf("text = %q", text)
	}
	// Reload forgets the discovery; a second Default probes again.
	n := len(srv.requests())
	r.Reload()
	if _, err := r.Default(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(srv.requests()) != n+1 {
		t.Errorf("Reload did not forget the discovery")
	}
}

func TestDiscoveryOff(t *testing.T) {
	srv, hits := probeServer(t, 200, "application/json", `{"object":"list","data":[{"id":"m"}]}`)
	r := newRegistry(t, Options{Getenv: newEnv().get, Discover: false, probes: []probe{{"ollama", srv.URL + "/v1"}}})
	if _, err := r.Default(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("err = %v", err)
	}
	r.Models(context.Background())
	if hits.Load() != 0 {
		t.Errorf("discovery off, yet the server was probed %d times", hits.Load())
	}
}

func TestDiscoverySkipsConfiguredEndpoints(t *testing.T) {
	srv, hits := probeServer(t, 200, "application/json", `{"object":"list","data":[{"id":"m"}]}`)
	r := newRegistry(t, Options{Getenv: newEnv().get, Discover: true, probes: []probe{{"ollama", srv.URL + "/v1"}},
		Config: cfg(map[string]config.Provider{"ollama": {Dialect: "openai", BaseURL: "http://127.0.0.1:1/v1"}})})
	if _, err := r.Default(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("err = %v", err)
	}
	if hits.Load() != 0 {
		t.Error("probed a provider whose endpoint is configured")
	}
}

func TestDiscoveryTimeout(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	r := newRegistry(t, Options{Getenv: newEnv().get, Discover: true, probes: []probe{{"ollama", slow.URL + "/v1"}}})
	r.probeWait = 20 * time.Millisecond
	if _, err := r.Default(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("err = %v", err)
	}
	// A cancelled context ends Default with its error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Default(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

func TestParseModelList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{`{"object":"list","data":[{"id":"a","object":"model"},{"id":"b"}]}`, []string{"a", "b"}},
		{`{"data":[{"id":"org/model:tag"}]}`, []string{"org/model:tag"}},
		{`<!DOCTYPE html><html></html>`, nil},
		{`{"models":[{"name":"a"}]}`, nil},
		{`{"object":"page","data":[{"id":"a"}]}`, nil},
		{`{"object":"list","data":[]}`, nil},
		{`{"object":"list","data":{"id":"a"}}`, nil},
		{`{"data":[{"id":1}]}`, nil},
		{`{"data":[{"id":""}]}`, nil},
		{`{"data":[{"name":"a"}]}`, nil},
		{`{"data":["a"]}`, nil},
		{`{"data":[{"id":"a\nb"}]}`, nil},
		{`{"data":[{"id":" a"}]}`, nil},
		{`[{"id":"a"}]`, nil},
		{`null`, nil},
		{``, nil},
	} {
		got, err := parseModelList([]byte(tc.in))
		if tc.want == nil {
			if err == nil {
				t.Errorf("%s: accepted as %q", tc.in, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestModels(t *testing.T) {
	dir := t.TempDir()
	creds := OpenCredentials(filepath.Join(dir, "c.json"))
	if err := creds.Set("gemini", "g"); err != nil {
		t.Fatal(err)
	}
	r := newRegistry(t, Options{Getenv: newEnv("ANTHROPIC_API_KEY", "k").get, Credentials: creds,
		Config: &config.Config{Model: "local/b", Providers: map[string]config.Provider{
			"local": {Dialect: "openai", BaseURL: "http://127.0.0.1:1/v1", Models: []config.ModelConfig{{ID: "a"}, {ID: "b"}}},
			"alpha": {Dialect: "openai", BaseURL: "http://127.0.0.1:1/v1", Models: []config.ModelConfig{{ID: "z"}}},
		}}})
	got := r.Models(context.Background())
	want := []string{"local/b", "alpha/z", "local/a"}
	for _, e := range catalog {
		if e.provider != "openai" {
			want = append(want, e.provider+"/"+e.info.ID)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("Models:\n got %q\nwant %q", got, want)
	}
}

// countingTransport counts the requests it is asked to send.
type countingTransport struct {
	n    atomic.Int32
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

// A probed port where nothing listens ends the probe at the TCP dial: the
// HTTP client is not asked for a request. A listening one still is.
func TestDiscoveryDialsFirst(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	ct := &countingTransport{next: http.DefaultTransport}
	r := newRegistry(t, Options{Getenv: newEnv().get, Discover: true, HTTPClient: &http.Client{Transport: ct},
		probes: []probe{{"ollama", closed}, {"lmstudio", closed}}})
	if _, err := r.Default(context.Background()); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Default with nothing listening: %v", err)
	}
	if n := ct.n.Load(); n != 0 {
		t.Fatalf("%d HTTP requests to ports where nothing listens, want 0", n)
	}
	valid, _ := probeServer(t, 200, "application/json", `{"data":[{"id":"local-model"}]}`)
	r2 := newRegistry(t, Options{Getenv: newEnv().get, Discover: true, HTTPClient: &http.Client{Transport: ct},
		probes: []probe{{"ollama", closed}, {"vllm", valid.URL + "/v1"}}})
	if got, err := r2.Default(context.Background()); err != nil || got != "vllm/local-model" {
		t.Fatalf("Default = %q, %v", got, err)
	}
	if n := ct.n.Load(); n != 1 {
		t.Fatalf("%d HTTP requests, want 1 (the listening server)", n)
	}
}

// A probed localhost is dialled at both loopback addresses, without the
// resolver: a server listening on either is found, and a port where
// neither answers is not.
func TestDialableLocalhost(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Logf("%s: %v (skipped)", addr, err)
			continue
		}
		_, port, _ := net.SplitHostPort(l.Addr().String())
		accepted := make(chan struct{})
		go func() {
			if c, err := l.Accept(); err == nil {
				c.Close()
			}
			close(accepted)
		}()
		if err := dialable(context.Background(), "http://localhost:"+port+"/v1"); err != nil {
			t.Errorf("server on %s: %v", l.Addr(), err)
		}
		l.Close()
		<-accepted
		if err := dialable(context.Background(), "http://LOCALHOST:"+port+"/v1"); err == nil {
			t.Errorf("closed port %s dialable", port)
		}
	}
}
