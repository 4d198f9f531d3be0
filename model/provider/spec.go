package provider

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"

	"acpd/config"
	"acpd/model"
	"acpd/model/anthropic"
	"acpd/model/exec"
	"acpd/model/gemini"
	"acpd/model/openai"
	"acpd/model/responses"
)

const (
	replayProvider = "replay"
	// defaultContextWindow is assumed for models nothing describes.
	defaultContextWindow = 128_000
	// maxKeyBytes bounds an API key.
	maxKeyBytes = 8 << 10
)

// osGetenv is os.Getenv (a variable so the default is visible in one place).
var osGetenv = os.Getenv

// Dialect names.
const (
	dialectOpenAI    = "openai"
	dialectResponses = "openai-responses"
	dialectAnthropic = "anthropic"
	dialectGemini    = "gemini"
	dialectExec      = "exec"
)

// spec is one provider's effective settings: a built-in merged with its
// configuration.
type spec struct {
	name    string
	dialect string
	// baseURL is the endpoint; baseEnv names an environment variable that
	// overrides it (empty once the configuration set base_url).
	baseURL string
	baseEnv string
	// keyEnv lists the variables holding the key, in order; needKey says
	// a key is required.
	keyEnv  []string
	needKey bool
	// maxTokens is the openai dialect's max tokens field, "" for the
	// dialect's default (or the endpoint heuristic, see maxTokensField).
	maxTokens string
	// defaultModel is the model Default picks for this provider.
	defaultModel string
	headers      map[string]string
	query        map[string]string
	command      []string
	models       []config.ModelConfig
	// baseFromConfig is set when the configuration gave base_url.
	baseFromConfig bool
}

// builtins are the providers usable without configuration, by name.
var builtins = map[string]spec{
	"openai": {name: "openai", dialect: dialectOpenAI, baseURL: openai.DefaultBaseURL, baseEnv: "OPENAI_BASE_URL",
		keyEnv: []string{"OPENAI_API_KEY"}, needKey: true, maxTokens: "max_completion_tokens", defaultModel: "gpt-5"},
	"anthropic": {name: "anthropic", dialect: dialectAnthropic, baseURL: anthropic.DefaultBaseURL, baseEnv: "ANTHROPIC_BASE_URL",
		keyEnv: []string{"ANTHROPIC_API_KEY"}, needKey: true, defaultModel: "claude-sonnet-4-5"},
	"gemini": {name: "gemini", dialect: dialectGemini, baseURL: gemini.DefaultBaseURL,
		keyEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, needKey: true, defaultModel: "gemini-2.5-pro"},
	"ollama": {name: "ollama", dialect: dialectOpenAI, baseURL: "http://127.0.0.1:11434/v1", baseEnv: "OLLAMA_HOST",
		maxTokens: "max_tokens"},
	"lmstudio": {name: "lmstudio", dialect: dialectOpenAI, baseURL: "http://127.0.0.1:1234/v1", maxTokens: "max_tokens"},
	"llamacpp": {name: "llamacpp", dialect: dialectOpenAI, baseURL: "http://127.0.0.1:8080/v1", maxTokens: "max_tokens"},
	"vllm":     {name: "vllm", dialect: dialectOpenAI, baseURL: "http://127.0.0.1:8000/v1", maxTokens: "max_tokens"},
}

// cloudProviders are the built-ins Default picks from by key, in order.
var cloudProviders = []string{"anthropic", "openai", "gemini"}

func builtinNames() []string {
	names := slices.Sorted(maps.Keys(builtins))
	return append(names, replayProvider)
}

// family groups dialects that share endpoints and model ids.
func family(dialect string) string {
	if dialect == dialectResponses {
		return dialectOpenAI
	}
	return dialect
}

// spec returns the effective settings of provider name. It reads the
// configuration but not the environment.
func (r *Registry) spec(name string) (*spec, bool) {
	b, isBuiltin := builtins[name]
	p, isConfigured := r.cfg.Providers[name]
	if !isBuiltin && !isConfigured {
		return nil, false
	}
	s := b
	s.keyEnv = slices.Clone(b.keyEnv)
	if !isConfigured {
		return &s, true
	}
	s.name = name
	if isBuiltin && family(p.Dialect) != family(b.dialect) {
		// Another protocol: the built-in's endpoint and key do not apply.
		s = spec{name: name}
	}
	s.dialect = p.Dialect
	if p.BaseURL != "" {
		s.baseURL, s.baseEnv, s.baseFromConfig = p.BaseURL, "", true
	}
	if p.APIKeyEnv != "" {
		s.keyEnv, s.needKey = []string{p.APIKeyEnv}, true
	}
	s.headers = maps.Clone(p.Headers)
	s.query = maps.Clone(p.Query)
	s.command = slices.Clone(p.Command)
	s.models = slices.Clone(p.Models)
	if len(s.models) > 0 {
		s.defaultModel = s.models[0].ID
	}
	return &s, true
}

// config returns s as a config.Provider (for factories).
func (s *spec) config() config.Provider {
	p := config.Provider{Dialect: s.dialect, BaseURL: s.baseURL, Command: slices.Clone(s.command),
		Headers: maps.Clone(s.headers), Query: maps.Clone(s.query), Models: slices.Clone(s.models)}
	if len(s.keyEnv) > 0 {
		p.APIKeyEnv = s.keyEnv[0]
	}
	return p
}

// endpoint describes where s sends requests, for logs.
func (s *spec) endpoint() string {
	if s.dialect == dialectExec && len(s.command) > 0 {
		return s.command[0]
	}
	return redactURL(s.baseURL)
}

// redactURL returns u without user information, query and fragment, which
// may hold credentials.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(invalid URL)"
	}
	p.User, p.RawQuery, p.Fragment = nil, "", ""
	return p.String()
}

// configures reports whether the configuration describes model id of s.
func (s *spec) configures(id string) bool {
	return slices.ContainsFunc(s.models, func(m config.ModelConfig) bool { return m.ID == id })
}

// info returns what is known about model id of s: the configuration's
// entry, else the catalog's, else conservative defaults.
func (s *spec) info(id string) model.ModelInfo {
	info := s.catalogInfo(id)
	// The dialects whose API has a web search of the provider's own.
	switch s.dialect {
	case "anthropic", "openai-responses", "gemini":
		info.WebSearch = true
	}
	return info
}

// catalogInfo is info without the dialect's capabilities: the
// configuration's entry, else the catalog's, else defaults.
func (s *spec) catalogInfo(id string) model.ModelInfo {
	for _, m := range s.models {
		if m.ID == id {
			info := model.ModelInfo{ID: id, Name: id, ContextWindow: m.ContextWindow, MaxOutputTokens: m.MaxOutput,
				Tools: m.Tools, Images: m.Images, Audio: m.Audio, Reasoning: m.Reasoning,
				InputPrice: m.InputPrice, OutputPrice: m.OutputPrice}
			if info.ContextWindow == 0 {
				info.ContextWindow = defaultContextWindow
			}
			return info
		}
	}
	if info, ok := lookupCatalog(family(s.dialect), id); ok {
		info.ID = id
		return info
	}
	return model.ModelInfo{ID: id, Name: id, ContextWindow: defaultContextWindow, Tools: true}
}

// base returns the endpoint of s: the configuration's base_url, else the
// environment's, else a discovered server's, else the built-in default.
// found is the remembered discovery (read under r.mu), or nil.
func (r *Registry) base(s *spec, found *discovery) (string, error) {
	if s.baseEnv != "" {
		if v := strings.TrimSpace(r.getenv(s.baseEnv)); v != "" {
			if s.baseEnv == "OLLAMA_HOST" {
				return ollamaBase(v)
			}
			if err := checkURL(v); err != nil {
				return "", fmt.Errorf("%w: %s: %v", ErrUnavailable, s.baseEnv, err)
			}
			return v, nil
		}
	}
	if !s.baseFromConfig {
		if found != nil && found.provider == s.name {
			return found.baseURL, nil
		}
	}
	return s.baseURL, nil
}

// elsewhere reports whether s is a built-in provider pointed at another
// server than its own (a compatible server speaking its dialect).
// Providers of the configuration need the key they name.
func elsewhere(s *spec, base string) bool {
	b, ok := builtins[s.name]
	if !ok {
		return false
	}
	u, err1 := url.Parse(base)
	d, err2 := url.Parse(b.baseURL)
	return err1 == nil && err2 == nil && !strings.EqualFold(u.Host, d.Host)
}

// checkURL fails unless s is an absolute http or https URL. The error does
// not quote s, which may hold credentials.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an http or https URL")
	}
	return nil
}

// ollamaBase turns an OLLAMA_HOST value ("host", "host:port",
// "scheme://host:port/path") into the OpenAI-compatible endpoint, as the
// Ollama client reads it: the port defaults to 11434 without a scheme, to
// 80 or 443 with one; an unspecified address (0.0.0.0, ::) means loopback.
func ollamaBase(v string) (string, error) {
	scheme, hostport, ok := strings.Cut(v, "://")
	defaultPort := "11434"
	switch {
	case !ok:
		scheme, hostport = "http", v
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	default:
		return "", fmt.Errorf("%w: OLLAMA_HOST: unsupported scheme %q (want http or https)", ErrUnavailable, scheme)
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.Trim(hostport, "[]"), defaultPort
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port), Path: "/" + path}
	base := strings.TrimRight(u.String(), "/") + "/v1"
	if err := checkURL(base); err != nil {
		return "", fmt.Errorf("%w: OLLAMA_HOST: %v", ErrUnavailable, err)
	}
	return base, nil
}

// key returns the key of s: the first non-empty variable of s.keyEnv,
// else the stored credential, else "". It fails when the key found is
// malformed; the error names its source, never the key.
func (r *Registry) key(s *spec) (string, error) {
	for _, env := range s.keyEnv {
		if v := strings.TrimSpace(r.getenv(env)); v != "" {
			if err := checkKey(v); err != nil {
				return "", fmt.Errorf("%w: the key in %s %v", ErrUnavailable, env, err)
			}
			return v, nil
		}
	}
	if r.creds != nil {
		if v, ok := r.creds.Get(s.name); ok {
			if err := checkKey(v); err != nil {
				return "", fmt.Errorf("%w: the stored key of %s %v", ErrUnavailable, s.name, err)
			}
			return v, nil
		}
	}
	return "", nil
}

// hasKey reports whether a key of s is set in the environment (env) or
// in the credentials (stored).
func (r *Registry) hasKey(s *spec) (env, stored bool) {
	for _, e := range s.keyEnv {
		if strings.TrimSpace(r.getenv(e)) != "" {
			return true, false
		}
	}
	if r.creds != nil {
		_, stored = r.creds.Get(s.name)
	}
	return false, stored
}

// checkKey rejects keys that cannot be sent in an HTTP header.
func checkKey(k string) error {
	if len(k) > maxKeyBytes {
		return fmt.Errorf("is longer than %d bytes", maxKeyBytes)
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("contains a control character")
		}
	}
	return nil
}

// missingKey is the error for s without a key.
func (r *Registry) missingKey(s *spec) error {
	vars := strings.Join(s.keyEnv, " or ")
	msg := fmt.Sprintf("%s needs an API key: set %s, or store one with `acpd login %s`", s.name, vars, s.name)
	if r.creds != nil {
		if err := r.creds.check(); err != nil {
			msg += fmt.Sprintf(" (stored credentials not used: %v)", err)
		}
	}
	return fmt.Errorf("%w: %s", ErrUnavailable, msg)
}

// dialects builds the backends of the built-in dialects.
var dialects = map[string]func(r *Registry, s *spec) (*entry, error){
	dialectOpenAI:    buildOpenAI,
	dialectResponses: buildResponses,
	dialectAnthropic: buildAnthropic,
	dialectGemini:    buildGemini,
	dialectExec:      buildExec,
}

// azureHost reports whether u is an Azure OpenAI endpoint, which takes its
// key in the api-key header.
func azureHost(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := strings.ToLower(p.Hostname())
	return strings.HasSuffix(h, ".openai.azure.com") || strings.HasSuffix(h, ".cognitiveservices.azure.com") ||
		strings.HasSuffix(h, ".services.ai.azure.com")
}

// hasHeader reports whether h sets name (case-insensitively).
func hasHeader(h map[string]string, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// maxTokensField is the openai dialect's max tokens field for s at base:
// the built-in's choice, else max_completion_tokens for OpenAI and Azure
// (their reasoning models reject max_tokens), else max_tokens, which every
// compatible server understands.
func maxTokensField(s *spec, base string) string {
	if s.maxTokens != "" {
		return s.maxTokens
	}
	if base == "" || azureHost(base) || hostIs(base, "api.openai.com") {
		return "max_completion_tokens"
	}
	return "max_tokens"
}

// hostIs reports whether the host of URL u is host.
func hostIs(u, host string) bool {
	p, err := url.Parse(u)
	return err == nil && strings.EqualFold(p.Hostname(), host)
}

// openaiParams returns the endpoint, key and headers of an openai-family
// provider. Azure endpoints get the key in the api-key header.
func openaiParams(r *Registry, s *spec) (base, key string, headers map[string]string, err error) {
	if base, err = r.base(s, r.found); err != nil {
		return "", "", nil, err
	}
	if key, err = r.key(s); err != nil {
		return "", "", nil, err
	}
	if key == "" && s.needKey && !elsewhere(s, base) {
		// OpenAI's own API needs a key; a compatible server the user
		// pointed at (OPENAI_BASE_URL, base_url) may need none, and then
		// gets no Authorization header.
		return "", "", nil, r.missingKey(s)
	}
	headers = maps.Clone(s.headers)
	if key != "" && azureHost(base) && !hasHeader(headers, "api-key") && !hasHeader(headers, "Authorization") {
		if headers == nil {
			headers = map[string]string{}
		}
		headers["api-key"], key = key, ""
	}
	return base, key, headers, nil
}

func buildOpenAI(r *Registry, s *spec) (*entry, error) {
	base, key, headers, err := openaiParams(r, s)
	if err != nil {
		return nil, err
	}
	b := openai.New(openai.Options{HTTPOptions: model.HTTPOptions{BaseURL: base, APIKey: key, Headers: headers, Query: s.query,
		HTTPClient: r.client},
		// DeepSeek's thinking mode needs reasoning_content sent back.
		MaxTokensField: maxTokensField(s, base), ReasoningContent: hostIs(base, "api.deepseek.com")})
	return &entry{b: r.retrying(s.name, b)}, nil
}

func buildResponses(r *Registry, s *spec) (*entry, error) {
	base, key, headers, err := openaiParams(r, s)
	if err != nil {
		return nil, err
	}
	b := responses.New(responses.Options{HTTPOptions: model.HTTPOptions{BaseURL: base, APIKey: key, Headers: headers, Query: s.query, HTTPClient: r.client}})
	return &entry{b: r.retrying(s.name, b)}, nil
}

func buildAnthropic(r *Registry, s *spec) (*entry, error) {
	return buildKeyed(r, s, "anthropic", func(o model.HTTPOptions) model.Backend {
		return anthropic.New(anthropic.Options{HTTPOptions: o})
	})
}

func buildGemini(r *Registry, s *spec) (*entry, error) {
	return buildKeyed(r, s, "gemini", func(o model.HTTPOptions) model.Backend {
		return gemini.New(gemini.Options{HTTPOptions: o})
	})
}

// buildKeyed makes a backend of a dialect that needs an API key and takes
// no query parameters (dialect names it in the error).
func buildKeyed(r *Registry, s *spec, dialect string, build func(model.HTTPOptions) model.Backend) (*entry, error) {
	if len(s.query) > 0 {
		return nil, fmt.Errorf("%w: provider %s: the %s dialect does not support query", ErrUnavailable, s.name, dialect)
	}
	base, err := r.base(s, r.found)
	if err != nil {
		return nil, err
	}
	key, err := r.requireKey(s)
	if err != nil {
		return nil, err
	}
	b := build(model.HTTPOptions{BaseURL: base, APIKey: key, Headers: s.headers, HTTPClient: r.client})
	return &entry{b: r.retrying(s.name, b)}, nil
}

// buildExec makes an exec plug-in backend. The plug-in does not inherit
// credential-like variables (see package exec); the key of the provider's
// api_key_env, from the environment or the credentials, is passed to it
// explicitly under that name.
func buildExec(r *Registry, s *spec) (*entry, error) {
	if len(s.command) == 0 || s.command[0] == "" {
		return nil, fmt.Errorf("%w: provider %s: the exec dialect needs command (the plug-in's argv)", ErrUnavailable, s.name)
	}
	key, err := r.requireKey(s)
	if err != nil {
		return nil, err
	}
	var env []string
	if key != "" && len(s.keyEnv) > 0 {
		env = []string{s.keyEnv[0] + "=" + key}
	}
	b := exec.New(exec.Options{Command: s.command, Env: env, Allow: r.envAllow(), Hide: r.keyVariables(), Logger: r.logger, Version: r.version})
	return &entry{b: r.retrying(s.name, b), closer: b, lister: b}, nil
}

// envAllow is the `[env] allow` list: secret-looking variables every child
// inherits anyway.
func (r *Registry) envAllow() []string {
	if r.cfg == nil {
		return nil
	}
	return r.cfg.Env.Allow
}

// keyVariables lists every configured provider's api_key_env: a plug-in
// inherits none of them, whatever their names (it gets its own key
// explicitly).
func (r *Registry) keyVariables() []string {
	var names []string
	if r.cfg == nil {
		return nil
	}
	for _, p := range r.cfg.Providers {
		if p.APIKeyEnv != "" {
			names = append(names, p.APIKeyEnv)
		}
	}
	return names
}
