package provider

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"acpd/config"
	"acpd/internal/syncbuf"
	"acpd/model"
)

func TestResolveBuiltins(t *testing.T) {
	srv := newFakeServer(t)
	e := newEnv(
		"OPENAI_API_KEY", "sk-openai", "OPENAI_BASE_URL", srv.URL+"/v1",
		"ANTHROPIC_API_KEY", "sk-ant", "ANTHROPIC_BASE_URL", srv.URL,
		"GOOGLE_API_KEY", "g-key",
		"OLLAMA_HOST", srv.Listener.Addr().String(),
	)
	// Gemini has no base URL variable: the client carries its requests
	// to the fake server instead.
	r := newRegistry(t, Options{Getenv: e.get, HTTPClient: redirectClient(srv.Server)})
	for _, tc := range []struct {
		ref, path, header, value, maxField string
	}{
		{"openai/gpt-5", "/v1/chat/completions", "Authorization", "Bearer sk-openai", "max_completion_tokens"},
		{"anthropic/claude-sonnet-4-5", "/v1/messages", "X-Api-Key", "sk-ant", ""},
		{"gemini/gemini-2.5-pro", "/v1beta/models/gemini-2.5-pro:streamGenerateContent", "X-Goog-Api-Key", "g-key", ""},
		{"ollama/qwen3", "/v1/chat/completions", "Authorization", "", "max_tokens"},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			b, info, err := r.Resolve(tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			_, id, _ := model.ParseRef(tc.ref)
			if info.ID != id {
				t.Errorf("info.ID = %q, want %q", info.ID, id)
			}
			if got := streamText(t, b, id); got != "hi" {
				t.Errorf("text = %q", got)
			}
			req := srv.last(t)
			if req.Path != tc.path {
				t.Errorf("path = %q, want %q", req.Path, tc.path)
			}
			if got := req.Header.Get(tc.header); got != tc.value {
				t.Errorf("%s = %q, want %q", tc.header, got, tc.value)
			}
			if tc.maxField != "" && !strings.Contains(req.Body, `"`+tc.maxField+`":100`) {
				t.Errorf("body does not carry %s: %s", tc.maxField, req.Body)
			}
		})
	}
}

func TestPrecedence(t *testing.T) {
	cfgSrv, envSrv := newFakeServer(t), newFakeServer(t)
	creds := OpenCredentials(filepath.Join(t.TempDir(), "credentials.json"))
	if err := creds.Set("openai", "sk-stored"); err != nil {
		t.Fatal(err)
	}
	configured := cfg(map[string]config.Provider{"openai": {Dialect: "openai", BaseURL: cfgSrv.URL + "/v1", APIKeyEnv: "MY_OPENAI_KEY"}})

	for _, tc := range []struct {
		name   string
		config *config.Config
		env    []string
		srv    *fakeServer
		auth   string
	}{
		{"config wins", configured,
			[]string{"MY_OPENAI_KEY", "sk-config", "OPENAI_API_KEY", "sk-env", "OPENAI_BASE_URL", envSrv.URL + "/v1"},
			cfgSrv, "Bearer sk-config"},
		{"configured variable unset: credentials, not the built-in variable", configured,
			[]string{"OPENAI_API_KEY", "sk-env"}, cfgSrv, "Bearer sk-stored"},
		{"env over credentials", nil,
			[]string{"OPENAI_API_KEY", "sk-env", "OPENAI_BASE_URL", envSrv.URL + "/v1"}, envSrv, "Bearer sk-env"},
		{"credentials", nil,
			[]string{"OPENAI_BASE_URL", envSrv.URL + "/v1"}, envSrv, "Bearer sk-stored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRegistry(t, Options{Config: tc.config, Getenv: newEnv(tc.env...).get, Credentials: creds})
			b, _, err := r.Resolve("openai/gpt-5")
			if err != nil {
				t.Fatal(err)
			}
			n := len(tc.srv.requests())
			streamText(t, b, "gpt-5")
			if len(tc.srv.requests()) != n+1 {
				t.Fatalf("the request did not go to the expected server")
			}
			if got := tc.srv.last(t).Header.Get("Authorization"); got != tc.auth {
				t.Errorf("Authorization = %q, want %q", got, tc.auth)
			}
		})
	}
}

func TestMissingKey(t *testing.T) {
	for _, tc := range []struct {
		ref    string
		config *config.Config
		want   []string
	}{
		{"anthropic/claude-sonnet-4-5", nil, []string{"ANTHROPIC_API_KEY", "acpd login anthropic"}},
		{"openai/gpt-5", nil, []string{"OPENAI_API_KEY", "acpd login openai"}},
		{"gemini/gemini-2.5-pro", nil, []string{"GEMINI_API_KEY or GOOGLE_API_KEY"}},
		{"corp/m", cfg(map[string]config.Provider{"corp": {Dialect: "openai", BaseURL: "https://llm.example/v1", APIKeyEnv: "CORP_TOKEN"}}),
			[]string{"CORP_TOKEN", "acpd login corp"}},
		{"anthropic/x", cfg(map[string]config.Provider{"anthropic": {Dialect: "anthropic", APIKeyEnv: "WORK_ANTHROPIC"}}),
			[]string{"WORK_ANTHROPIC"}},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			r := newRegistry(t, Options{Config: tc.config, Getenv: newEnv().get,
				Credentials: OpenCredentials(filepath.Join(t.TempDir(), "none.json"))})
			_, _, err := r.Resolve(tc.ref)
			if !errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v, want ErrUnavailable", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestUnknownProvider(t *testing.T) {
	r := newRegistry(t, Options{Getenv: newEnv().get})
	_, _, err := r.Resolve("nope/m")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "[providers.nope]") {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := r.Resolve("no-slash"); err == nil || errors.Is(err, ErrUnavailable) {
		t.Fatalf("bad reference: err = %v", err)
	}
}

func TestLocalProvidersNeedNoKey(t *testing.T) {
	r := newRegistry(t, Options{Getenv: newEnv().get})
	for _, name := range []string{"ollama", "lmstudio", "llamacpp", "vllm"} {
		if _, _, err := r.Resolve(name + "/m"); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestSecretsNeverLeak checks errors and logs for keys in every path that
// handles them: a malformed key, a retried request, a failing request,
// a broken credentials file.
func TestSecretsNeverLeak(t *testing.T) {
	const secret = "sk-SECRET-1234567890abcdef"
	srv := newFakeServer(t)
	logger, logs := debugLogger()
	dir := t.TempDir()
	credPath := filepath.Join(dir, "credentials.json")
	if err := os.WriteFile(credPath, []byte(`{"version":1,"providers":{"anthropic":{"apiKey":"`+secret+`"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e := newEnv("OPENAI_API_KEY", secret, "OPENAI_BASE_URL", srv.URL+"/v1", "GEMINI_API_KEY", secret+"\n\x01")
	var sleeps int
	r := newRegistry(t, Options{Getenv: e.get, Logger: logger, Credentials: OpenCredentials(credPath),
		sleep: func(context.Context, time.Duration) error { sleeps++; return nil }})

	var errs []error
	// A key with a control character.
	_, _, err := r.Resolve("gemini/gemini-2.5-pro")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "GEMINI_API_KEY") {
		t.Errorf("malformed key: err = %v", err)
	}
	errs = append(errs, err)
	// A stored key in a file others can read is not used.
	_, _, err = r.Resolve("anthropic/claude-sonnet-4-5")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("public credentials: err = %v", err)
	}
	errs = append(errs, err)
	// A retried request, then one that fails.
	b, _, err := r.Resolve("openai/gpt-5")
	if err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	srv.fail, srv.status = 1, 503
	srv.mu.Unlock()
	streamText(t, b, "gpt-5")
	if sleeps != 1 || len(srv.requests()) != 2 {
		t.Errorf("retries: %d sleeps, %d requests; want 1 and 2 (HTTP backends are wrapped with retry)", sleeps, len(srv.requests()))
	}
	srv.mu.Lock()
	srv.fail, srv.status = 1, 401
	srv.mu.Unlock()
	_, err = tryStream(b, "gpt-5")
	if model.KindOf(err) != model.ErrAuth {
		t.Errorf("401: err = %v", err)
	}
	errs = append(errs, err)
	// No model at all.
	_, err = newRegistry(t, Options{Getenv: newEnv().get, Logger: logger}).Default(context.Background())
	errs = append(errs, err)

	for _, err := range errs {
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("error leaks the key: %v", err)
		}
	}
	if !strings.Contains(logs.String(), "retrying") {
		t.Errorf("the retry was not logged: %s", logs)
	}
	if strings.Contains(logs.String(), "SECRET") {
		t.Errorf("logs leak the key:\n%s", logs)
	}
}

func TestCacheAndReload(t *testing.T) {
	srv := newFakeServer(t)
	e := newEnv("ANTHROPIC_BASE_URL", srv.URL)
	r := newRegistry(t, Options{Getenv: e.get})

	if _, _, err := r.Resolve("anthropic/claude-sonnet-4-5"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("without a key: err = %v", err)
	}
	e.set("ANTHROPIC_API_KEY", "key-1")
	b1, _, err := r.Resolve("anthropic/claude-sonnet-4-5")
	if err != nil {
		t.Fatalf("a failure must not be cached: %v", err)
	}
	b2, info, err := r.Resolve("anthropic/claude-haiku-4-5")
	if err != nil {
		t.Fatal(err)
	}
	if b1 != b2 {
		t.Error("backends are not cached per provider")
	}
	if info.ID != "claude-haiku-4-5" {
		t.Errorf("info.ID = %q", info.ID)
	}
	e.set("ANTHROPIC_API_KEY", "key-2")
	streamText(t, b2, "claude-haiku-4-5")
	if got := srv.last(t).Header.Get("X-Api-Key"); got != "key-1" {
		t.Errorf("cached backend sent %q", got)
	}
	r.Reload()
	b3, _, err := r.Resolve("anthropic/claude-haiku-4-5")
	if err != nil {
		t.Fatal(err)
	}
	if b3 == b1 {
		t.Error("Reload kept the cached backend")
	}
	streamText(t, b3, "claude-haiku-4-5")
	if got := srv.last(t).Header.Get("X-Api-Key"); got != "key-2" {
		t.Errorf("after Reload the backend sent %q, want the new key", got)
	}
}

func TestConcurrentResolve(t *testing.T) {
	r := newRegistry(t, Options{Getenv: newEnv("OPENAI_API_KEY", "k").get})
	var wg sync.WaitGroup
	backends := make([]model.Backend, 8)
	for i := range backends {
		wg.Go(func() {
			b, _, err := r.Resolve("openai/gpt-5")
			if err != nil {
				t.Error(err)
			}
			backends[i] = b
			if i%3 == 0 {
				r.Reload()
			}
			r.Models(context.Background())
		})
	}
	wg.Wait()
}

func TestAzureHeadersAndQuery(t *testing.T) {
	srv := newFakeServer(t)
	const base = "https://myres.openai.azure.com/openai/deployments/dep"
	for _, tc := range []struct {
		name    string
		p       config.Provider
		env     []string
		apiKey  string
		bearer  string
		dialect string
	}{
		{"literal header", config.Provider{Dialect: "openai", BaseURL: base,
			Query: map[string]string{"api-version": "2025-01-01"}, Headers: map[string]string{"api-key": "hdr", "X-Team": "tools"}},
			nil, "hdr", "", "openai"},
		{"key from api_key_env", config.Provider{Dialect: "openai", BaseURL: base, APIKeyEnv: "AZURE_OPENAI_API_KEY",
			Query: map[string]string{"api-version": "2025-01-01"}, Headers: map[string]string{"X-Team": "tools"}},
			[]string{"AZURE_OPENAI_API_KEY", "env-key"}, "env-key", "", "openai"},
		{"responses dialect", config.Provider{Dialect: "openai-responses", BaseURL: "https://myres.openai.azure.com/openai/v1",
			APIKeyEnv: "AZURE_OPENAI_API_KEY", Query: map[string]string{"api-version": "preview"}, Headers: map[string]string{"X-Team": "tools"}},
			[]string{"AZURE_OPENAI_API_KEY", "env-key"}, "env-key", "", "openai-responses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRegistry(t, Options{Config: cfg(map[string]config.Provider{"azure": tc.p}), Getenv: newEnv(tc.env...).get,
				HTTPClient: redirectClient(srv.Server)})
			b, info, err := r.Resolve("azure/gpt-5")
			if err != nil {
				t.Fatal(err)
			}
			if info.ContextWindow != 400_000 {
				t.Errorf("catalog info not used for an openai-dialect provider: %+v", info)
			}
			streamText(t, b, "gpt-5")
			req := srv.last(t)
			if got := req.Header.Get("Api-Key"); got != tc.apiKey {
				t.Errorf("api-key = %q, want %q", got, tc.apiKey)
			}
			if got := req.Header.Get("Authorization"); got != tc.bearer {
				t.Errorf("Authorization = %q, want %q", got, tc.bearer)
			}
			if req.Header.Get("X-Team") != "tools" || req.Query.Get("api-version") != tc.p.Query["api-version"] {
				t.Errorf("headers/query not passed through: %v %v", req.Header, req.Query)
			}
			if tc.dialect == "openai" {
				if req.Path != "/openai/deployments/dep/chat/completions" {
					t.Errorf("path = %q", req.Path)
				}
				if !strings.Contains(req.Body, `"max_completion_tokens":100`) {
					t.Errorf("Azure must get max_completion_tokens: %s", req.Body)
				}
			} else if req.Path != "/openai/v1/responses" {
				t.Errorf("path = %q", req.Path)
			}
		})
	}
}

func TestCompatibleServerDefaults(t *testing.T) {
	srv := newFakeServer(t)
	r := newRegistry(t, Options{Config: cfg(map[string]config.Provider{
		"groq":     {Dialect: "openai", BaseURL: "https://api.groq.example/openai/v1", APIKeyEnv: "GROQ_API_KEY"},
		"deepseek": {Dialect: "openai", BaseURL: "https://api.deepseek.com", APIKeyEnv: "DEEPSEEK_API_KEY"},
	}), Getenv: newEnv("GROQ_API_KEY", "g", "DEEPSEEK_API_KEY", "d").get, HTTPClient: redirectClient(srv.Server)})
	b, _, err := r.Resolve("groq/llama")
	if err != nil {
		t.Fatal(err)
	}
	streamText(t, b, "llama")
	if req := srv.last(t); !strings.Contains(req.Body, `"max_tokens":100`) || req.Header.Get("Authorization") != "Bearer g" {
		t.Errorf("compatible server: %s %v", req.Body, req.Header)
	}
	b, _, err = r.Resolve("deepseek/deepseek-reasoner")
	if err != nil {
		t.Fatal(err)
	}
	streamText(t, b, "deepseek-reasoner")
	if req := srv.last(t); req.Path != "/chat/completions" {
		t.Errorf("path = %q", req.Path)
	}
}

func TestDialectRestrictions(t *testing.T) {
	r := newRegistry(t, Options{Config: cfg(map[string]config.Provider{
		"a": {Dialect: "anthropic", Query: map[string]string{"x": "y"}},
		"g": {Dialect: "gemini", Query: map[string]string{"x": "y"}},
		"z": {Dialect: "zeta"},
	}), Getenv: newEnv("ANTHROPIC_API_KEY", "k").get})
	for _, ref := range []string{"a/m", "g/m", "z/m"} {
		if _, _, err := r.Resolve(ref); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: err = %v", ref, err)
		}
	}
}

func TestOverrideBuiltinWithOtherDialect(t *testing.T) {
	srv := newFakeServer(t)
	// "openai" served by the Responses API keeps the built-in endpoint and
	// key; "ollama" turned into an anthropic proxy drops the Ollama
	// endpoint.
	r := newRegistry(t, Options{Config: cfg(map[string]config.Provider{
		"openai": {Dialect: "openai-responses"},
		"ollama": {Dialect: "anthropic", BaseURL: srv.URL},
	}), Getenv: newEnv("OPENAI_API_KEY", "k", "OLLAMA_HOST", "127.0.0.1:1").get, HTTPClient: redirectClient(srv.Server)})
	b, _, err := r.Resolve("openai/gpt-5")
	if err != nil {
		t.Fatal(err)
	}
	streamText(t, b, "gpt-5")
	if req := srv.last(t); req.Path != "/v1/responses" || req.Header.Get("Authorization") != "Bearer k" {
		t.Errorf("responses: %s %v", req.Path, req.Header)
	}
	b, _, err = r.Resolve("ollama/claude")
	if err != nil {
		t.Fatal(err)
	}
	streamText(t, b, "claude")
	if req := srv.last(t); req.Path != "/v1/messages" {
		t.Errorf("path = %q", req.Path)
	}
}

func TestModelInfo(t *testing.T) {
	r := newRegistry(t, Options{Config: cfg(map[string]config.Provider{
		"local": {Dialect: "openai", BaseURL: "http://127.0.0.1:1/v1", Models: []config.ModelConfig{
			{ID: "qwen3-coder", ContextWindow: 131072, MaxOutput: 16384, Reasoning: true, Tools: true, InputPrice: 0.1},
			{ID: "tiny", Tools: false},
		}},
		"anthropic": {Dialect: "anthropic", Models: []config.ModelConfig{{ID: "claude-opus-4-5", ContextWindow: 1000, Tools: true}}},
	}), Getenv: newEnv("ANTHROPIC_API_KEY", "k", "OPENAI_API_KEY", "k").get})
	for _, tc := range []struct {
		ref  string
		want model.ModelInfo
	}{
		{"local/qwen3-coder", model.ModelInfo{ID: "qwen3-coder", Name: "qwen3-coder", ContextWindow: 131072, MaxOutputTokens: 16384,
			Tools: true, Reasoning: true, InputPrice: 0.1}},
		{"local/tiny", model.ModelInfo{ID: "tiny", Name: "tiny", ContextWindow: defaultContextWindow}},
		{"local/unknown", model.ModelInfo{ID: "unknown", Name: "unknown", ContextWindow: defaultContextWindow, Tools: true}},
		{"anthropic/claude-opus-4-5", model.ModelInfo{ID: "claude-opus-4-5", Name: "claude-opus-4-5", ContextWindow: 1000, Tools: true, WebSearch: true}},
		{"anthropic/claude-sonnet-4-5-20250929", model.ModelInfo{ID: "claude-sonnet-4-5-20250929", Name: "Claude Sonnet 4.5",
			ContextWindow: 200_000, MaxOutputTokens: 64_000, Tools: true, Images: true, Reasoning: true, WebSearch: true, InputPrice: 3, OutputPrice: 15}},
		{"openai/gpt-4.1-2025-04-14", model.ModelInfo{ID: "gpt-4.1-2025-04-14", Name: "GPT-4.1", ContextWindow: 1_047_576,
			MaxOutputTokens: 32_768, Tools: true, Images: true, InputPrice: 2, OutputPrice: 8}},
		{"openai/claude-sonnet-4-5", model.ModelInfo{ID: "claude-sonnet-4-5", Name: "claude-sonnet-4-5", ContextWindow: defaultContextWindow, Tools: true}},
	} {
		_, info, err := r.Resolve(tc.ref)
		if err != nil {
			t.Fatalf("%s: %v", tc.ref, err)
		}
		if info != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.ref, info, tc.want)
		}
	}
}

func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range catalog {
		key := e.provider + "/" + e.info.ID
		if seen[key] {
			t.Errorf("duplicate catalog entry %s", key)
		}
		seen[key] = true
		if _, ok := builtins[e.provider]; !ok {
			t.Errorf("%s: unknown provider", key)
		}
		i := e.info
		if i.Name == "" || i.ContextWindow <= 0 || i.MaxOutputTokens <= 0 || i.MaxOutputTokens > i.ContextWindow ||
			!i.Tools || i.InputPrice <= 0 || i.OutputPrice < i.InputPrice {
			t.Errorf("%s: implausible entry %+v", key, i)
		}
	}
	for _, name := range cloudProviders {
		b := builtins[name]
		if _, ok := lookupCatalog(name, b.defaultModel); !ok {
			t.Errorf("the default model of %s, %s, is not in the catalog", name, b.defaultModel)
		}
	}
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"gpt-5-2025-08-07", true}, {"gpt-5-20250807", true}, {"gpt-5-mini", false}, {"gpt-5-", false},
		{"gpt-5-2025-0807", false}, {"gpt-5-2025x08-07", false}, {"gpt-5", false},
	} {
		if got := datedSnapshot(tc.id, "gpt-5"); got != tc.want {
			t.Errorf("datedSnapshot(%q) = %v", tc.id, got)
		}
	}
}

func TestReplayProvider(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		script := `{"type":"text","text":"` + text + `"}` + "\n" + `{"type":"finish"}` + "\n"
		if err := os.WriteFile(p, []byte(script), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := write("a.jsonl", "from a"), write("b.jsonl", "from b")
	var rec syncbuf.Buffer
	r := newRegistry(t, Options{Getenv: newEnv().get, Record: &rec, Config: cfg(map[string]config.Provider{
		"replay": {Dialect: "openai", BaseURL: "http://127.0.0.1:1/v1"}, // ignored: the name is reserved
	})})
	ba, info, err := r.Resolve("replay/" + a)
	if err != nil {
		t.Fatal(err)
	}
	if info.ID != a || !info.Tools {
		t.Errorf("info = %+v", info)
	}
	bb, _, err := r.Resolve("replay/" + b)
	if err != nil {
		t.Fatal(err)
	}
	if got := streamText(t, ba, a); got != "from a" {
		t.Errorf("a: %q", got)
	}
	if got := streamText(t, bb, b); got != "from b" {
		t.Errorf("b: %q (replay backends are cached per script)", got)
	}
	if again, _, _ := r.Resolve("replay/" + a); again != ba {
		t.Error("replay backend not cached")
	}
	if !strings.Contains(rec.String(), `{"type":"text","text":"from a"}`) {
		t.Errorf("Record did not receive the responses: %q", rec.String())
	}
	// A relative path is relative to the working directory.
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Resolve("replay/" + rel); err != nil {
		t.Errorf("relative path: %v", err)
	}
	if _, _, err := r.Resolve("replay/" + filepath.Join(dir, "missing.jsonl")); err == nil {
		t.Error("missing script: no error")
	}
}

// fixedBackend answers every request with its text.
type fixedBackend struct {
	text   string
	closed chan struct{}
}

func (f *fixedBackend) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		if yield(model.Event{Type: model.EventText, Text: f.text}, nil) {
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
		}
	}
}

func (f *fixedBackend) Close() error {
	close(f.closed)
	return nil
}

var registerOnce sync.Once

func TestRegister(t *testing.T) {
	type call struct {
		name string
		p    config.Provider
		key  string
	}
	calls := make(chan call, 10)
	registerOnce.Do(func() {
		Register("test-fixed", func(name string, p config.Provider, env func(string) string) (model.Backend, error) {
			calls <- call{name, p, env(p.APIKeyEnv)}
			if p.BaseURL == "fail" {
				return nil, errors.New("factory failed")
			}
			return &fixedBackend{text: "fixed " + name, closed: make(chan struct{})}, nil
		})
	})
	creds := OpenCredentials(filepath.Join(t.TempDir(), "c.json"))
	if err := creds.Set("mine", "stored-key"); err != nil {
		t.Fatal(err)
	}
	r := New(Options{Config: cfg(map[string]config.Provider{
		"mine":   {Dialect: "test-fixed", APIKeyEnv: "MINE_KEY", Headers: map[string]string{"h": "v"}},
		"broken": {Dialect: "test-fixed", BaseURL: "fail"},
	}), Getenv: newEnv().get, Credentials: creds, probes: []probe{}})
	b, info, err := r.Resolve("mine/anything")
	if err != nil {
		t.Fatal(err)
	}
	if got := streamText(t, b, "anything"); got != "fixed mine" {
		t.Errorf("text = %q", got)
	}
	c := <-calls
	if c.name != "mine" || c.p.Dialect != "test-fixed" || c.p.Headers["h"] != "v" || c.key != "stored-key" {
		t.Errorf("factory call = %+v", c)
	}
	if info.ID != "anything" || info.ContextWindow != defaultContextWindow {
		t.Errorf("info = %+v", info)
	}
	if _, _, err := r.Resolve("broken/x"); err == nil || !strings.Contains(err.Error(), "factory failed") {
		t.Errorf("failing factory: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.(*fixedBackend).closed:
	default:
		t.Error("Close did not close the factory's backend")
	}
	if _, _, err := r.Resolve("mine/anything"); err == nil {
		t.Error("Resolve after Close succeeded")
	}

	for _, bad := range []string{"", "openai", "test-fixed"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", bad)
				}
			}()
			Register(bad, func(string, config.Provider, func(string) string) (model.Backend, error) { return nil, nil })
		}()
	}
}

func TestOllamaBase(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"127.0.0.1:11434", "http://127.0.0.1:11434/v1"},
		{"0.0.0.0", "http://127.0.0.1:11434/v1"},
		{"0.0.0.0:9999", "http://127.0.0.1:9999/v1"},
		{"[::]:11434", "http://[::1]:11434/v1"},
		{"gpu-box", "http://gpu-box:11434/v1"},
		{"http://gpu-box", "http://gpu-box:80/v1"},
		{"https://ollama.example/proxy", "https://ollama.example:443/proxy/v1"},
		{"http://10.0.0.2:8000", "http://10.0.0.2:8000/v1"},
	} {
		got, err := ollamaBase(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ollamaBase(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if _, err := ollamaBase("ftp://x"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("ftp: %v", err)
	}
}

func TestBadBaseURLEnv(t *testing.T) {
	r := newRegistry(t, Options{Getenv: newEnv("OPENAI_API_KEY", "k", "OPENAI_BASE_URL", "localhost:8080").get})
	if _, _, err := r.Resolve("openai/gpt-5"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("err = %v", err)
	}
}

func TestFactoryConfigJSON(t *testing.T) {
	// spec.config must carry every configured field to a factory.
	r := newRegistry(t, Options{Config: cfg(map[string]config.Provider{"x": {Dialect: "test-x", BaseURL: "https://x.example",
		APIKeyEnv: "X_KEY", Command: []string{"c"}, Headers: map[string]string{"a": "b"}, Query: map[string]string{"q": "1"},
		Models: []config.ModelConfig{{ID: "m", Tools: true}}}})})
	s, ok := r.spec("x")
	if !ok {
		t.Fatal("spec not found")
	}
	got, _ := json.Marshal(s.config())
	want, _ := json.Marshal(r.cfg.Providers["x"])
	if string(got) != string(want) {
		t.Errorf("config() = %s\nwant %s", got, want)
	}
}

var _ io.Closer = (*fixedBackend)(nil)

func TestExecPlugin(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The plug-in inherits the process environment (minus credentials):
	// pluginEnv makes the test binary serve as one.
	t.Setenv(pluginEnv, "1")
	t.Setenv("GORACE", "atexit_sleep_ms=0") // a race-enabled plug-in exits at once
	t.Setenv("OPENAI_API_KEY", "must-not-reach-the-plugin")
	creds := OpenCredentials(filepath.Join(t.TempDir(), "c.json"))
	e := newEnv("PLUGIN_API_KEY", "plugin-key-1")
	r := newRegistry(t, Options{Version: "9.9.9", Getenv: e.get, Credentials: creds, Config: cfg(map[string]config.Provider{
		"plug": {Dialect: "exec", Command: []string{self, "-test.run=^$"}, APIKeyEnv: "PLUGIN_API_KEY"},
	})})

	if got := r.Models(context.Background()); !slices.Contains(got, "plug/plug-1") {
		t.Fatalf("Models = %q, want the plug-in's model", got)
	}
	b, info, err := r.Resolve("plug/plug-1")
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "Plug" || info.ContextWindow != 4242 || !info.Tools {
		t.Errorf("info = %+v, want what the plug-in announced", info)
	}
	if got := streamText(t, b, "plug-1"); got != "version=9.9.9 key=1 leaked=false" {
		t.Errorf("plug-in saw %q", got)
	}

	// Reload keeps the running plug-in when nothing changed...
	r.Reload()
	b2, _, err := r.Resolve("plug/plug-1")
	if err != nil {
		t.Fatal(err)
	}
	if b2 != b {
		t.Error("Reload replaced an unchanged plug-in")
	}
	// ...and replaces it when its key changed.
	e.set("PLUGIN_API_KEY", "")
	if err := creds.Set("plug", "plugin-key-2"); err != nil {
		t.Fatal(err)
	}
	r.Reload()
	b3, _, err := r.Resolve("plug/plug-1")
	if err != nil {
		t.Fatal(err)
	}
	if b3 == b {
		t.Fatal("Reload kept a plug-in whose key changed")
	}
	if got := streamText(t, b3, "plug-1"); got != "version=9.9.9 key=2 leaked=false" {
		t.Errorf("new plug-in saw %q", got)
	}
	// The old plug-in still serves streams until Close.
	if got := streamText(t, b, "plug-1"); got != "version=9.9.9 key=1 leaked=false" {
		t.Errorf("old plug-in saw %q", got)
	}

	// A missing key fails before starting anything.
	if err := creds.Delete("plug"); err != nil {
		t.Fatal(err)
	}
	r.Reload()
	if _, _, err := r.Resolve("plug/plug-1"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "PLUGIN_API_KEY") {
		t.Errorf("missing key: err = %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tryStream(b, "plug-1"); err == nil {
		t.Error("a plug-in still answers after Close")
	}
}

func TestURLCredentialsNotLogged(t *testing.T) {
	srv := newFakeServer(t)
	logger, logs := debugLogger()
	withUser := strings.Replace(srv.URL, "http://", "http://user:SECRETpw@", 1) + "/v1?token=SECRETq"
	r := newRegistry(t, Options{Logger: logger, Getenv: newEnv("OPENAI_API_KEY", "k", "OPENAI_BASE_URL", withUser,
		"ANTHROPIC_API_KEY", "k", "ANTHROPIC_BASE_URL", "SECRET-not-a-url").get})
	b, _, err := r.Resolve("openai/gpt-5")
	if err != nil {
		t.Fatal(err)
	}
	streamText(t, b, "gpt-5")
	if got := srv.last(t).Query.Get("token"); got != "SECRETq" {
		t.Errorf("the base URL's query was not sent: %q", got)
	}
	_, _, err = r.Resolve("anthropic/claude-sonnet-4-5")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "ANTHROPIC_BASE_URL") || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("bad URL: err = %v", err)
	}
	if !strings.Contains(logs.String(), "backend ready") || strings.Contains(logs.String(), "SECRET") {
		t.Errorf("logs:\n%s", logs)
	}
	// The log names the endpoint used (OPENAI_BASE_URL's), not the default.
	if !strings.Contains(logs.String(), srv.URL+"/v1") || strings.Contains(logs.String(), "api.openai.com") {
		t.Errorf("the log does not name the endpoint in use (%s/v1):\n%s", srv.URL, logs)
	}
}

func BenchmarkResolveCached(b *testing.B) {
	r := New(Options{Getenv: newEnv("ANTHROPIC_API_KEY", "k").get, probes: []probe{}})
	defer r.Close()
	for b.Loop() {
		if _, _, err := r.Resolve("anthropic/claude-sonnet-4-5"); err != nil {
			b.Fatal(err)
		}
	}
}

// OPENAI_BASE_URL alone (a local compatible server, no key): the model
// resolves, requests carry no Authorization, and Default picks the
// server's first model. OpenAI's own endpoint still needs the key.
func TestKeylessCompatibleServer(t *testing.T) {
	srv := newFakeServer(t)
	none := OpenCredentials(filepath.Join(t.TempDir(), "none.json"))
	r := newRegistry(t, Options{Getenv: newEnv("OPENAI_BASE_URL", srv.URL+"/v1").get, Credentials: none})
	b, _, err := r.Resolve("openai/m1")
	if err != nil {
		t.Fatalf("Resolve with OPENAI_BASE_URL and no key: %v", err)
	}
	streamText(t, b, "m1")
	if got := srv.last(t).Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none", got)
	}
	if ref, err := r.Default(context.Background()); err != nil || ref != "openai/m1" {
		t.Errorf("Default = %q, %v; want openai/m1 (the server's first model)", ref, err)
	}

	own := newRegistry(t, Options{Getenv: newEnv().get, Credentials: none})
	if _, _, err := own.Resolve("openai/gpt-5"); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("OpenAI's endpoint without a key: %v, want the missing-key error", err)
	}
}
