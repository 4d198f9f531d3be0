package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"acpd/model"
)

const (
	// probeTimeout bounds one discovery probe of a loopback server.
	probeTimeout = 400 * time.Millisecond
	// probeDialTimeout bounds the TCP connect of one probe.
	probeDialTimeout = 100 * time.Millisecond
	// ollamaTimeout bounds listing the models of the server OLLAMA_HOST
	// names, which may be remote.
	ollamaTimeout = 3 * time.Second
	// maxListBytes bounds a model list response.
	maxListBytes = 4 << 20
	// maxListedModels bounds the discovered models offered by Models.
	maxListedModels = 50
	// maxModelID bounds a discovered model id.
	maxModelID = 256
	// pluginListTimeout bounds starting an exec plug-in to list its models.
	pluginListTimeout = 10 * time.Second
)

// probe is a local server Default may find: the built-in provider it is
// and its OpenAI-compatible endpoint.
type probe struct {
	provider string
	baseURL  string
}

// defaultProbes are probed in parallel; the first that answers, in this
// order, wins.
var defaultProbes = []probe{
	{"ollama", builtins["ollama"].baseURL},
	{"lmstudio", builtins["lmstudio"].baseURL},
	{"llamacpp", builtins["llamacpp"].baseURL},
	{"vllm", builtins["vllm"].baseURL},
}

// discovery is a local server found by Default.
type discovery struct {
	provider string
	baseURL  string
	models   []string
}

// Default returns the default model reference: the configuration's model
// when set; else the first of anthropic, openai and gemini whose key is in
// the environment, then the first whose key is stored in the credentials
// (with the provider's default model); else, when OLLAMA_HOST is set, the
// first model that Ollama server lists; else, when discovery is on, the
// first model of the first local OpenAI-compatible server answering on
// the loopback interface (Ollama 11434, LM Studio 1234, llama.cpp 8080,
// vLLM 8000, probed in parallel for at most 400ms each). Otherwise it
// fails with an error wrapping [ErrUnavailable] that lists the variables
// to set. A successful discovery is remembered until [Registry.Reload].
// Default blocks at most a few seconds; ctx cancels it.
func (r *Registry) Default(ctx context.Context) (string, error) {
	if r.cfg.Model != "" {
		return r.cfg.Model, nil
	}
	specs := make([]*spec, 0, len(cloudProviders))
	for _, name := range cloudProviders {
		if s, ok := r.spec(name); ok && family(s.dialect) == family(builtins[name].dialect) && s.defaultModel != "" {
			specs = append(specs, s)
		}
	}
	for _, s := range specs {
		if env, _ := r.hasKey(s); env {
			return s.name + "/" + s.defaultModel, nil
		}
	}
	for _, s := range specs {
		if _, stored := r.hasKey(s); stored {
			return s.name + "/" + s.defaultModel, nil
		}
	}

	r.mu.Lock()
	found := r.found
	r.mu.Unlock()
	if found != nil {
		return found.provider + "/" + found.models[0], nil
	}

	var notes []string
	// A compatible server named by its base URL variable alone (no key,
	// e.g. OPENAI_BASE_URL=http://localhost:8080/v1): its first model.
	for _, s := range specs {
		if s.baseEnv == "" || s.dialect != dialectOpenAI || strings.TrimSpace(r.getenv(s.baseEnv)) == "" {
			continue
		}
		base, err := r.base(s, nil)
		if err != nil || !elsewhere(s, base) {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, r.ollamaWait)
		ids, err := r.listModels(lctx, base, s.headers)
		cancel()
		if err == nil {
			r.remember(&discovery{provider: s.name, baseURL: base, models: ids})
			return s.name + "/" + ids[0], nil
		}
		r.logger.Warn("provider: a base URL is set but its models cannot be listed", "variable", s.baseEnv, "err", err)
		notes = append(notes, fmt.Sprintf("%s is set but listing its models failed: %v", s.baseEnv, err))
	}

	if host := strings.TrimSpace(r.getenv("OLLAMA_HOST")); host != "" {
		if s, ok := r.spec("ollama"); ok && s.dialect == dialectOpenAI {
			base, err := r.base(s, nil)
			if err == nil {
				ctx, cancel := context.WithTimeout(ctx, r.ollamaWait)
				var ids []string
				ids, err = r.listModels(ctx, base, s.headers)
				cancel()
				if err == nil {
					r.remember(&discovery{provider: "ollama", baseURL: base, models: ids})
					return "ollama/" + ids[0], nil
				}
			}
			r.logger.Warn("provider: OLLAMA_HOST is set but its models cannot be listed", "err", err)
			notes = append(notes, fmt.Sprintf("OLLAMA_HOST is set but listing its models failed: %v", err))
		}
	}
	if r.discover {
		if d := r.probe(ctx); d != nil {
			r.logger.Info("provider: found a local model server", "provider", d.provider, "endpoint", redactURL(d.baseURL), "model", d.models[0])
			r.remember(d)
			return d.provider + "/" + d.models[0], nil
		}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}

	var keys []string
	for _, s := range specs {
		keys = append(keys, strings.Join(s.keyEnv, " or "))
	}
	local := ""
	if r.discover {
		local = "start a local OpenAI-compatible server (Ollama, LM Studio, llama.cpp, vLLM), "
	}
	msg := fmt.Sprintf("no model is configured: set %s, store a key with `acpd login PROVIDER`, set OLLAMA_HOST, %s"+
		"or set ACPD_MODEL or model in config.toml", strings.Join(keys, ", "), local)
	if len(notes) > 0 {
		msg += " (" + strings.Join(notes, "; ") + ")"
	}
	return "", fmt.Errorf("%w: %s", ErrUnavailable, msg)
}

// remember records d as the discovered server, unless closed.
func (r *Registry) remember(d *discovery) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.found = d
	}
}

// probe asks every loopback server of r.probes whose provider has no
// configured endpoint for its models and returns the first in list order
// that answered with an OpenAI model list, or nil. The ports are dialled
// one after another on the calling goroutine: a loopback connect is
// answered by the kernel at once (refused, or accepted into the listen
// queue however busy the server is), so dialling in parallel would save
// nothing, and goroutines of their own would each grow a stack through
// the dialer's frames. The servers that accept are asked in parallel, a
// server's answer being what may take time.
func (r *Registry) probe(ctx context.Context) *discovery {
	var targets []probe
	for _, p := range r.probes {
		// A provider with a configured endpoint, or one from its
		// variable, is not served by the probed one.
		s, ok := r.spec(p.provider)
		if ok && s.dialect == dialectOpenAI && !s.baseFromConfig && (s.baseEnv == "" || r.getenv(s.baseEnv) == "") {
			targets = append(targets, p)
		}
	}
	results := make([][]string, len(targets))
	ctx, cancel := context.WithTimeout(ctx, r.probeWait)
	defer cancel()
	var wg sync.WaitGroup
	for i, p := range targets {
		if err := dialable(ctx, p.baseURL); err != nil {
			r.logger.Debug("provider: no local model server", "provider", p.provider, "endpoint", redactURL(p.baseURL), "err", err)
			continue
		}
		wg.Go(func() {
			ids, err := r.listModels(ctx, p.baseURL, nil)
			if err != nil {
				r.logger.Debug("provider: no local model server", "provider", p.provider, "endpoint", redactURL(p.baseURL), "err", err)
				return
			}
			results[i] = ids
		})
	}
	wg.Wait()
	for i, ids := range results {
		if ids != nil {
			return &discovery{provider: targets[i].provider, baseURL: targets[i].baseURL, models: ids}
		}
	}
	return nil
}

// dialable connects to the host of base over TCP and hangs up: where
// nothing listens (the usual case for all but one of the probed ports, or
// all of them) the probe ends there, without building an HTTP request or
// running the HTTP client, whose code a process without a local server
// then never loads.
func dialable(ctx context.Context, base string) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	hosts := []string{u.Hostname()}
	if strings.EqualFold(hosts[0], "localhost") {
		// localhost is the loopback interface (RFC 6761): dialled as its
		// two addresses, the probe neither reads the hosts file and the
		// resolver's configuration nor loads the resolver's code.
		hosts = []string{"127.0.0.1", "::1"}
	}
	// A port that does not answer at once is filtered: it is given
	// probeDialTimeout, so that it cannot use up the others' time.
	d := net.Dialer{Timeout: probeDialTimeout}
	for _, h := range hosts {
		var c net.Conn
		if c, err = d.DialContext(ctx, "tcp", net.JoinHostPort(h, port)); err == nil {
			return c.Close()
		}
	}
	return err
}

// listModels returns the model ids of the OpenAI-compatible server at
// base (GET base/models). It fails unless the server answers 200 with an
// OpenAI model list holding at least one model.
func (r *Registry) listModels(ctx context.Context, base string, headers map[string]string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/models", nil)
	if err != nil {
		return nil, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
		return nil, fmt.Errorf("GET %s/models: HTTP %d", redactURL(base), resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxListBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxListBytes {
		return nil, fmt.Errorf("GET %s/models: response larger than %d bytes", redactURL(base), maxListBytes)
	}
	return parseModelList(raw)
}

// parseModelList decodes an OpenAI model list,
// {"object":"list","data":[{"id":"..."},...]} ("object" optional), into
// its ids. Anything else is an error: an HTML page, JSON of another shape,
// an entry without a string id, an empty list.
func parseModelList(raw []byte) ([]string, error) {
	var list struct {
		Object *string           `json:"object"`
		Data   []json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, errors.New("not an OpenAI model list: not a JSON object")
	}
	if list.Object != nil && *list.Object != "list" {
		return nil, errors.New(`not an OpenAI model list: "object" is not "list"`)
	}
	if len(list.Data) == 0 {
		return nil, errors.New(`not an OpenAI model list, or an empty one: no "data" entries`)
	}
	ids := make([]string, 0, len(list.Data))
	for i, entry := range list.Data {
		var m struct {
			ID *string `json:"id"`
		}
		if json.Unmarshal(entry, &m) != nil || m.ID == nil || !validID(*m.ID) {
			return nil, fmt.Errorf("not an OpenAI model list: entry %d has no valid string id", i)
		}
		ids = append(ids, *m.ID)
	}
	return ids, nil
}

// validID reports whether id can be used in a model reference.
func validID(id string) bool {
	if id == "" || len(id) > maxModelID || strings.TrimSpace(id) != id {
		return false
	}
	for _, c := range id {
		if c < 0x20 || c == 0x7f || c == '\uFFFD' {
			return false
		}
	}
	_, _, err := model.ParseRef("p/" + id)
	return err == nil
}

// Models returns the references offered in the model picker, without
// duplicates: the default (when [Registry.Default] finds one), the models
// of every configured provider (for an exec provider whose configuration
// lists none, the models its plug-in announces: the plug-in is started),
// the catalog models of the built-in cloud providers whose key is
// available, and the models of a discovered local server. It may probe
// like Default; each plug-in gets at most 10 seconds to start.
func (r *Registry) Models(ctx context.Context) []string {
	var refs []string
	seen := map[string]bool{}
	add := func(ref string) {
		if !seen[ref] {
			seen[ref] = true
			refs = append(refs, ref)
		}
	}
	if d, err := r.Default(ctx); err == nil {
		add(d)
	}
	names := make([]string, 0, len(r.cfg.Providers))
	for name := range r.cfg.Providers {
		if name != replayProvider {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		p := r.cfg.Providers[name]
		for _, m := range p.Models {
			add(name + "/" + m.ID)
		}
		if len(p.Models) == 0 && p.Dialect == dialectExec {
			for _, m := range r.pluginModels(ctx, name) {
				add(name + "/" + m.ID)
			}
		}
	}
	for _, name := range cloudProviders {
		s, ok := r.spec(name)
		if !ok || family(s.dialect) != family(builtins[name].dialect) {
			continue
		}
		if env, stored := r.hasKey(s); env || stored {
			for _, e := range catalog {
				if e.provider == name {
					add(name + "/" + e.info.ID)
				}
			}
		}
	}
	r.mu.Lock()
	found := r.found
	r.mu.Unlock()
	if found != nil {
		for _, id := range found.models[:min(len(found.models), maxListedModels)] {
			add(found.provider + "/" + id)
		}
	}
	return refs
}

// pluginModels returns the models the exec plug-in of provider name
// announces, starting it, and remembers them for Resolve's model
// information. Failures are logged and yield none.
func (r *Registry) pluginModels(ctx context.Context, name string) []model.ModelInfo {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	var e *entry
	s, ok := r.spec(name)
	var err error
	if ok {
		e, err = r.backend(s)
	}
	r.mu.Unlock()
	if err != nil {
		r.logger.Warn("provider: cannot list the models of a plug-in", "provider", name, "err", err)
		return nil
	}
	if e == nil || e.lister == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, pluginListTimeout)
	defer cancel()
	ms, err := e.lister.Models(ctx)
	if err != nil {
		r.logger.Warn("provider: cannot list the models of a plug-in", "provider", name, "err", err)
		return nil
	}
	ms = slices.DeleteFunc(ms, func(m model.ModelInfo) bool { return !validID(m.ID) })
	r.mu.Lock()
	if r.cache[name] == e {
		r.listed[name] = ms
	}
	r.mu.Unlock()
	return ms
}
