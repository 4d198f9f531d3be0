// Package provider turns "provider/model" references into [model.Backend]
// values. It knows the built-in providers, reads the configured ones from
// [config.Config], finds API keys in the environment and in stored
// [Credentials], and, with nothing configured at all, finds a local
// OpenAI-compatible server on the loopback interface.
//
// # Providers
//
// Built-in providers, usable without any configuration:
//
//	name       dialect    endpoint (variable overriding it)              key variable
//	openai     openai     https://api.openai.com/v1 (OPENAI_BASE_URL)     OPENAI_API_KEY
//	anthropic  anthropic  https://api.anthropic.com (ANTHROPIC_BASE_URL)  ANTHROPIC_API_KEY
//	gemini     gemini     https://generativelanguage.googleapis.com       GEMINI_API_KEY or GOOGLE_API_KEY
//	ollama     openai     http://127.0.0.1:11434/v1 (OLLAMA_HOST)         none
//	lmstudio   openai     http://127.0.0.1:1234/v1                        none
//	llamacpp   openai     http://127.0.0.1:8080/v1                        none
//	vllm       openai     http://127.0.0.1:8000/v1                        none
//	replay     -          the model part is a script path (package replay)
//
// A [providers.NAME] table of the configuration adds a provider or
// overrides a built-in one (replay cannot be overridden). Its base_url wins
// over the environment's, its api_key_env replaces the built-in key
// variable, its headers and query are sent with every request, and its
// models describe the models. Configuring a built-in with a dialect of
// another family drops the built-in's endpoint and key variable. Dialects:
// openai (Chat Completions), openai-responses, anthropic, gemini, and exec
// (a plug-in process, package exec), plus those added with [Register].
//
// Azure OpenAI is the openai (or openai-responses) dialect with base_url
// ending in the deployment (or /openai/v1) and query api-version; the key
// of api_key_env goes into Azure's api-key header when the host is an
// Azure one, or the configuration sets the api-key header itself. The
// openai dialect sends max_completion_tokens to OpenAI and Azure and
// max_tokens to every other server; DeepSeek's API also gets the
// reasoning_content its thinking mode needs.
//
// # Keys
//
// A provider's key is read when its backend is built: from the first
// non-empty environment variable of the provider (the configured
// api_key_env, else the built-in one), else from [Credentials]. The
// built-in cloud providers and every provider with an api_key_env require
// a key; without one [Registry.Resolve] fails with an error wrapping
// [ErrUnavailable] that names the variables to set. Keys, and the user
// information and query of endpoint URLs, never appear in errors or logs.
// An exec plug-in gets its key explicitly, in the variable named by
// api_key_env, since plug-ins inherit no credential-like variables.
//
// # Backends
//
// Backends are built once per provider name and cached (the model id
// travels in [model.Request]); replay backends are cached per script.
// HTTP and exec backends are wrapped with [retry.Wrap] (default policy),
// and, when [Options.Record] is set, every backend with
// [replay.NewRecorder].
package provider

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"acpd/config"
	"acpd/model"
	"acpd/model/replay"
	"acpd/model/retry"
)

// ErrUnavailable is wrapped by the errors of [Registry.Resolve] and
// [Registry.Default] when a model cannot be used as configured: an unknown
// provider, a missing API key, no model found. The message says what to
// set.
var ErrUnavailable = errors.New("model unavailable")

// errClosed is returned by Resolve after Close.
var errClosed = errors.New("provider: registry closed")

// Options configures a [Registry]. The Registry keeps Config and never
// modifies it; the caller must not modify it either while the Registry is
// in use.
type Options struct {
	// Config supplies the providers and the default model; nil means an
	// empty configuration.
	Config *config.Config
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Credentials holds keys stored by `acpd login`; may be nil.
	Credentials *Credentials
	// HTTPClient sends every HTTP request; nil means a client with dial
	// and TLS handshake timeouts but no overall timeout (streams are
	// long; the backends time out idle streams themselves), closed by
	// [Registry.Close].
	HTTPClient *http.Client
	// Discover lets [Registry.Default] probe the loopback interface for
	// local OpenAI-compatible servers when nothing else is configured.
	Discover bool
	// Record, when set, receives a replay script of every response of
	// every backend (see [replay.NewRecorder]). The caller closes it after
	// [Registry.Close].
	Record io.Writer
	// Logger receives diagnostics (never keys); nil means slog.Default().
	Logger *slog.Logger
	// Version is acpd's version, announced to exec plug-ins.
	Version string

	// probes replaces the loopback servers Default probes (tests).
	probes []probe
	// sleep replaces the retry policy's wait (tests).
	sleep func(context.Context, time.Duration) error
}

// Registry resolves model references. It is safe for concurrent use.
// Close it to stop exec plug-ins and release idle connections.
type Registry struct {
	cfg         *config.Config
	getenv      func(string) string
	creds       *Credentials
	client      *http.Client
	discover    bool
	record      io.Writer
	logger      *slog.Logger
	version     string
	probes      []probe
	probeWait   time.Duration
	ollamaWait  time.Duration
	closeClient func()
	sleep       func(context.Context, time.Duration) error

	mu      sync.Mutex
	closed  bool
	cache   map[string]*entry // by provider name, or "replay/" + absolute path
	closers []io.Closer       // backends to close on Close, oldest first
	found   *discovery        // the last successful discovery, until Reload
	// listed holds the models exec plug-ins announced, by provider.
	listed map[string][]model.ModelInfo
}

// entry is a cached backend.
type entry struct {
	b model.Backend
	// closer, when set, must be closed after the last use of b (exec
	// plug-ins, factory backends); such entries survive Reload, marked
	// stale, and are only replaced when inputs changed.
	closer io.Closer
	// lister lists the models of an exec plug-in.
	lister interface {
		Models(context.Context) ([]model.ModelInfo, error)
	}
	// inputs is a digest of everything the backend was built from.
	inputs [sha256.Size]byte
	stale  bool
}

// New returns a Registry for o.
func New(o Options) *Registry {
	r := &Registry{
		cfg:        o.Config,
		getenv:     o.Getenv,
		creds:      o.Credentials,
		client:     o.HTTPClient,
		discover:   o.Discover,
		record:     o.Record,
		logger:     o.Logger,
		version:    o.Version,
		probes:     o.probes,
		sleep:      o.sleep,
		probeWait:  probeTimeout,
		ollamaWait: ollamaTimeout,
		cache:      map[string]*entry{},
		listed:     map[string][]model.ModelInfo{},
	}
	if r.cfg == nil {
		r.cfg = &config.Config{}
	}
	if r.getenv == nil {
		r.getenv = osGetenv
	}
	if r.logger == nil {
		r.logger = slog.Default()
	}
	if r.probes == nil {
		r.probes = defaultProbes
	}
	if r.client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		t.TLSHandshakeTimeout = 10 * time.Second
		t.IdleConnTimeout = 90 * time.Second
		r.client = &http.Client{Transport: t}
		r.closeClient = t.CloseIdleConnections
	}
	if _, ok := r.cfg.Providers[replayProvider]; ok {
		r.logger.Warn("provider: the configured provider \"replay\" is ignored: the name is reserved for replay scripts")
	}
	return r
}

// Resolve returns the backend and model information for ref
// ("provider/model"). The backend is shared: it is built on the first
// Resolve of its provider and kept until [Registry.Reload] or
// [Registry.Close]. Errors about configuration (unknown provider, missing
// key) wrap [ErrUnavailable]. Resolve sends no network requests and
// starts no process (exec plug-ins start at their first request).
func (r *Registry) Resolve(ref string) (model.Backend, model.ModelInfo, error) {
	name, id, err := model.ParseRef(ref)
	if err != nil {
		return nil, model.ModelInfo{}, err
	}
	if name == replayProvider {
		return r.resolveReplay(id)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, model.ModelInfo{}, errClosed
	}
	s, ok := r.spec(name)
	if !ok {
		return nil, model.ModelInfo{}, fmt.Errorf("%w: %s: unknown provider %q (built-in: %s; add [providers.%s] to the configuration)",
			ErrUnavailable, ref, name, strings.Join(builtinNames(), ", "), name)
	}
	e, err := r.backend(s)
	if err != nil {
		return nil, model.ModelInfo{}, fmt.Errorf("%s: %w", ref, err)
	}
	return e.b, r.info(s, id), nil
}

// Describe returns what is known of the model ref (provider/model) from
// the configuration, the catalog and model lists already fetched, without
// building a backend or asking a server; ok is false for an unknown
// provider.
func (r *Registry) Describe(ref string) (info model.ModelInfo, ok bool) {
	name, id, err := model.ParseRef(ref)
	if err != nil || name == replayProvider {
		return model.ModelInfo{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.spec(name)
	if !ok {
		return model.ModelInfo{}, false
	}
	return r.info(s, id), true
}

// backend returns the cached backend of s, building it when there is none
// or the inputs of a stale one changed. r.mu is held.
func (r *Registry) backend(s *spec) (*entry, error) {
	e, ok := r.cache[s.name]
	if ok && !e.stale {
		return e, nil
	}
	inputs := r.inputs(s)
	if ok && inputs == e.inputs {
		e.stale = false
		return e, nil
	}
	n, err := r.build(s)
	if err != nil {
		return nil, err
	}
	n.inputs = inputs
	if r.record != nil {
		n.b = replay.NewRecorder(n.b, r.record)
	}
	if n.closer != nil {
		// A replaced backend may still be streaming: it is closed by Close.
		r.closers = append(r.closers, n.closer)
	}
	delete(r.listed, s.name)
	r.cache[s.name] = n
	endpoint := s.endpoint()
	if s.dialect != dialectExec {
		// The endpoint used: OPENAI_BASE_URL and the like, or a discovered
		// server, rather than the built-in default.
		if b, err := r.base(s, r.found); err == nil {
			endpoint = redactURL(b)
		}
	}
	r.logger.Debug("provider: backend ready", "provider", s.name, "dialect", s.dialect, "endpoint", endpoint)
	return n, nil
}

// inputs digests what the backend of s is built from: its settings, the
// environment variables and stored key it reads, and the Version.
func (r *Registry) inputs(s *spec) [sha256.Size]byte {
	h := sha256.New()
	cfgJSON, _ := json.Marshal(s.config())
	h.Write(cfgJSON)
	env := r.factoryEnv(s)
	for _, k := range append(slices.Clone(s.keyEnv), s.baseEnv) {
		fmt.Fprintf(h, "\x00%s=%s", k, env(k))
	}
	fmt.Fprintf(h, "\x00%s", r.version)
	return [sha256.Size]byte(h.Sum(nil))
}

// info returns what is known about model id of s: the configuration's
// entry, else what an exec plug-in announced, else the catalog's, else
// conservative defaults. r.mu is held.
func (r *Registry) info(s *spec, id string) model.ModelInfo {
	if !s.configures(id) {
		for _, m := range r.listed[s.name] {
			if m.ID == id {
				if m.Name == "" {
					m.Name = id
				}
				if m.ContextWindow <= 0 {
					m.ContextWindow = defaultContextWindow
				}
				return m
			}
		}
	}
	return s.info(id)
}

// resolveReplay returns the replay backend for the script at path.
func (r *Registry) resolveReplay(path string) (model.Backend, model.ModelInfo, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, model.ModelInfo{}, fmt.Errorf("replay script %s: %w", path, err)
	}
	info := model.ModelInfo{ID: path, Name: "replay " + filepath.Base(path), ContextWindow: defaultContextWindow,
		Tools: true, Images: true, Reasoning: true}
	key := replayProvider + "/" + abs
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, model.ModelInfo{}, errClosed
	}
	if e, ok := r.cache[key]; ok {
		return e.b, info, nil
	}
	var b model.Backend
	b, err = replay.New(abs)
	if err != nil {
		return nil, model.ModelInfo{}, err
	}
	if r.record != nil {
		b = replay.NewRecorder(b, r.record)
	}
	r.cache[key] = &entry{b: b}
	return b, info, nil
}

// build makes the backend of s.
func (r *Registry) build(s *spec) (*entry, error) {
	if f, ok := lookupFactory(s.dialect); ok {
		b, err := f(s.name, s.config(), r.factoryEnv(s))
		if err != nil {
			return nil, err
		}
		if b == nil {
			return nil, fmt.Errorf("provider %s: the %s factory returned no backend", s.name, s.dialect)
		}
		c, _ := b.(io.Closer)
		return &entry{b: b, closer: c}, nil
	}
	d, ok := dialects[s.dialect]
	if !ok {
		return nil, fmt.Errorf("%w: provider %s: dialect %q is not available in this build (known: %s)",
			ErrUnavailable, s.name, s.dialect, strings.Join(dialectNames(), ", "))
	}
	return d(r, s)
}

// requireKey returns the key of s, failing when s needs one and none is
// set.
func (r *Registry) requireKey(s *spec) (string, error) {
	key, err := r.key(s)
	if err != nil {
		return "", err
	}
	if key == "" && s.needKey {
		return "", r.missingKey(s)
	}
	return key, nil
}

// retrying wraps a backend with the default retry policy, logging each
// retry.
func (r *Registry) retrying(name string, b model.Backend) model.Backend {
	return retry.Wrap(b, retry.Policy{Sleep: r.sleep, OnRetry: func(attempt int, err error, delay time.Duration) {
		r.logger.Warn("provider: retrying a failed model request", "provider", name, "attempt", attempt, "delay", delay, "err", err)
	}})
}

// Reload makes the next Resolve of every provider read the environment
// and the credentials again (after `acpd login` or ACP authenticate), and
// forgets discovery results. HTTP backends are rebuilt; a backend that
// must be closed (an exec plug-in, a factory's io.Closer) is kept when
// nothing it was built from changed, else replaced, the old one being
// closed by Close since streams may still use it. Streams already running
// are not affected.
func (r *Registry) Reload() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, e := range r.cache {
		if e.closer == nil {
			delete(r.cache, k)
		} else {
			e.stale = true
		}
	}
	r.found = nil
}

// Close stops the exec plug-ins started by the Registry and closes the
// other backends that are io.Closers (in parallel, waiting for them), then
// the idle connections of the default HTTP client. Streams still running
// on those backends fail. Resolve fails afterwards; Close is idempotent.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	closers := r.closers
	r.closers = nil
	clear(r.cache)
	r.mu.Unlock()

	errs := make([]error, len(closers))
	var wg sync.WaitGroup
	for i, c := range closers {
		wg.Go(func() { errs[i] = c.Close() })
	}
	wg.Wait()
	if r.closeClient != nil {
		r.closeClient()
	}
	return errors.Join(errs...)
}

// Factory builds the backend of provider name, configured by p, for a
// dialect added with [Register]. env reads the environment; for
// p.APIKeyEnv it falls back to the key stored in [Credentials] for name.
// The factory must not log or return the key. A backend that implements
// io.Closer is closed by [Registry.Close]. The registry does not wrap the
// backend with retries: the factory does, if it wants them. The factory
// runs with the Registry's lock held, so it must not call the Registry.
type Factory func(name string, p config.Provider, env func(string) string) (model.Backend, error)

var (
	factoriesMu sync.RWMutex
	factories   = map[string]Factory{}
)

// Register makes dialect available to providers whose configuration
// names it. It is meant to be called from init functions or before any
// Registry is used; it is safe for concurrent use. It panics when f is
// nil, when dialect is empty, is a built-in dialect or was registered
// before.
func Register(dialect string, f Factory) {
	if f == nil || dialect == "" {
		panic("provider: Register with an empty dialect or a nil factory")
	}
	if _, ok := dialects[dialect]; ok {
		panic("provider: Register of the built-in dialect " + dialect)
	}
	factoriesMu.Lock()
	defer factoriesMu.Unlock()
	if _, dup := factories[dialect]; dup {
		panic("provider: Register called twice for dialect " + dialect)
	}
	factories[dialect] = f
}

func lookupFactory(dialect string) (Factory, bool) {
	factoriesMu.RLock()
	defer factoriesMu.RUnlock()
	f, ok := factories[dialect]
	return f, ok
}

// factoryEnv is the env function given to a Factory for s.
func (r *Registry) factoryEnv(s *spec) func(string) string {
	return func(k string) string {
		v := r.getenv(k)
		if v == "" && k != "" && slices.Contains(s.keyEnv, k) && r.creds != nil {
			v, _ = r.creds.Get(s.name)
		}
		return v
	}
}

func dialectNames() []string {
	names := make([]string, 0, len(dialects))
	for d := range dialects {
		names = append(names, d)
	}
	factoriesMu.RLock()
	for d := range factories {
		names = append(names, d)
	}
	factoriesMu.RUnlock()
	slices.Sort(names)
	return names
}
