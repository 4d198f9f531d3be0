// Package config loads acpd's configuration from TOML files, the
// environment and command-line flags, in one place.
//
// Layers, lowest precedence first:
//
//  1. built-in defaults;
//  2. the user file, $XDG_CONFIG_HOME/acpd/config.toml (default
//     ~/.config/acpd/config.toml), or the file named by --config or
//     ACPD_CONFIG;
//  3. the project file, .acpd/config.toml at the git root of the session's
//     working directory (the nearest ancestor holding .git), or in the
//     working directory itself when it is not inside a git work tree;
//  4. the environment (ACPD_MODEL, ACPD_LOG_FILE, ACPD_LOG_LEVEL,
//     ACPD_STATE_DIR);
//  5. flags ([Overrides]).
//
// Missing default files are fine; a file named explicitly by --config or
// ACPD_CONFIG must exist. Files are decoded strictly: unknown keys, keys
// spelled in the wrong case, values of the wrong type and invalid values are
// errors that name the file, line and column ("path:line:col: message").
//
// A project file comes with the repository and is not trusted: it can never
// loosen permissions or change where secrets and logs go. In a project file,
// permission rules with action "allow", agent.default_mode other than "ask"
// or "plan", and the tables env, providers, state, log and protocol are
// errors ("not allowed in a project file: ..."). A project file may set the
// model, add instructions (appended after the user's), add ask and deny
// rules (appended after the user's), and set agent.max_turn_requests and
// agent.default_mode ("ask" or "plan").
//
// example.toml in this directory documents every key.
package config

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"acpd/internal/childenv"
	"acpd/model"
	"acpd/permissions"
	"acpd/sandbox"
)

// Environment variables read by the loader.
const (
	envConfig   = "ACPD_CONFIG"
	envModel    = "ACPD_MODEL"
	envLogFile  = "ACPD_LOG_FILE"
	envLogLevel = "ACPD_LOG_LEVEL"
	envStateDir = "ACPD_STATE_DIR"
)

// Built-in defaults.
const (
	defaultLogLevel        = "info"
	defaultMaxLineBytes    = 32 << 20
	defaultMaxTurnRequests = 100
	defaultMode            = string(permissions.ModeAsk)
	defaultSandboxMode     = "workspace-write"

	// minMaxLineBytes is the smallest accepted protocol.max_line_bytes: a
	// smaller limit would reject ordinary protocol messages.
	minMaxLineBytes = 4 << 10
	// maxFileBytes bounds the size of a configuration file.
	maxFileBytes = 1 << 20
)

// Config is acpd's effective configuration. Values returned by [Loader] are
// fully resolved and validated: Model is a valid provider/model reference,
// Log.Level, Agent.DefaultMode and every rule's Action hold one of their
// documented values, State.Dir is an absolute path, and Log.File is empty or
// absolute. Each call returns a fresh deep copy that the caller owns.
type Config struct {
	// Model is the default model as "provider/model".
	Model string `toml:"model"`
	// Instructions is extra system-prompt text: the user file's, then the
	// project file's, separated by a blank line.
	Instructions string            `toml:"instructions"`
	Log          LogConfig         `toml:"log"`
	State        StateConfig       `toml:"state"`
	Protocol     ProtocolConfig    `toml:"protocol"`
	Agent        AgentConfig       `toml:"agent"`
	Env          EnvConfig         `toml:"env"`
	Permissions  PermissionsConfig `toml:"permissions"`
	Sandbox      SandboxConfig     `toml:"sandbox"`
	// Providers are the configured model providers by name.
	Providers map[string]Provider `toml:"providers"`
	// MCPServers are MCP servers every session starts, by name, besides
	// those the editor names (the editor's win on a name clash).
	MCPServers map[string]MCPServer `toml:"mcp_servers"`
	// Hooks are commands run at points of the agent loop with Claude
	// Code's hook protocol, by event (SessionStart, UserPromptSubmit,
	// PreToolUse, PostToolUse, Stop): the user file's, then the project
	// file's (which run only once the user trusts them).
	Hooks map[string][]Hook `toml:"hooks"`
	// Files lists the configuration files that were loaded, user file first.
	Files []string `toml:"-"`
	// Root is the project root (ProjectRoot of the session's cwd) of a
	// configuration from ForProject or ForSession; "" for User's.
	Root string `toml:"-"`
	// Warnings are settings of a project file that were ignored, each
	// naming file, line and key (a project may only tighten the sandbox).
	Warnings []error `toml:"-"`
}

// Hook is one [[hooks.EVENT]] entry.
type Hook struct {
	// Matcher selects tool names (PreToolUse, PostToolUse: acpd's names or
	// Claude Code's, a regular expression) or the start source
	// (SessionStart); empty matches all.
	Matcher string `toml:"matcher"`
	// Command is a shell command line; it gets the event as JSON on stdin.
	Command string `toml:"command"`
	// Timeout is in seconds (0: 60).
	Timeout float64 `toml:"timeout"`
	// Source is the file the hook came from, Project whether that is a
	// project file (set by the loader).
	Source  string `toml:"-"`
	Project bool   `toml:"-"`
}

// LogConfig says where acpd logs.
type LogConfig struct {
	// File is the log file; empty means standard error.
	File string `toml:"file"`
	// Level is one of debug, info, warn, error.
	Level string `toml:"level"`
}

// StateConfig says where acpd keeps sessions and other state.
type StateConfig struct {
	// Dir is the state directory (default $XDG_STATE_HOME/acpd).
	Dir string `toml:"dir"`
}

// ProtocolConfig tunes the ACP connection.
type ProtocolConfig struct {
	// MaxLineBytes is the largest accepted protocol message, in bytes.
	MaxLineBytes int `toml:"max_line_bytes"`
}

// AgentConfig tunes the agent loop.
type AgentConfig struct {
	// MaxTurnRequests caps the model requests of one prompt turn.
	MaxTurnRequests int `toml:"max_turn_requests"`
	// DefaultMode is the session mode new sessions start in: ask,
	// auto-edit, plan or full.
	DefaultMode string `toml:"default_mode"`
	// MCPGraceMs is how long a prompt waits for MCP servers still starting
	// before it goes ahead without them, in milliseconds (0: 2000).
	MCPGraceMs int `toml:"mcp_grace_ms"`
	// MCPStartTimeoutMs bounds how long an MCP server of the editor's may
	// take to start before it is marked unavailable, in milliseconds (0:
	// 30000; a configured server's startup_timeout_sec wins).
	MCPStartTimeoutMs int `toml:"mcp_start_timeout_ms"`
	// AskTimeoutMs is how long ask_user waits for the user's answer to a
	// form, in milliseconds (0: 600000, ten minutes).
	AskTimeoutMs int `toml:"ask_timeout_ms"`
}

// EnvConfig controls the environment passed to child processes.
type EnvConfig struct {
	// Allow lists secret-looking environment variable names or path.Match
	// globs that are nevertheless passed through to child processes.
	Allow []string `toml:"allow"`
}

// SandboxConfig confines the commands acpd runs (package sandbox). A
// project file may only tighten it: the stricter mode, the network only if
// both files allow it, and only those writable paths both name.
type SandboxConfig struct {
	// Mode is workspace-write (the default), read-only or off.
	Mode string `toml:"mode"`
	// Network lets commands use the network (default false).
	Network bool `toml:"network"`
	// Writable are extra absolute paths commands may write to.
	Writable []string `toml:"writable"`
	// Escalate is what `acpd run --approve all` does with a request to run
	// a command outside the sandbox: "ask" (the default: ask on the
	// terminal, refuse without one) or "allow" (as --allow-escalation).
	// Editors always ask. A project file may only set "ask".
	Escalate string `toml:"escalate"`
}

// ChildEnv is the base environment of a session's children (commands and
// stdio MCP servers): base (nil: os.Environ filtered by childenv.Filter
// without exceptions) without the variables the configured providers read
// their API keys from (api_key_env), whatever their names, unless [env]
// allow names them. base is not modified.
func (c *Config) ChildEnv(base []string) []string {
	if base == nil {
		base = childenv.Filter(os.Environ(), nil)
	}
	var keys []string
	for _, p := range c.Providers {
		keys = append(keys, p.APIKeyEnv)
	}
	return childenv.Without(base, keys, c.Env.Allow)
}

// SandboxPolicy is the policy of the commands of a session with the given
// roots: c's sandbox mode (workspace-write when unset), network and
// writable paths, the roots writable, the temp directory os.TempDir, the
// user's git configuration read-only (sandbox.UserGitConfig), and
// hidden (a copy) plus the user file when it is not in a .acpd directory
// (wherever --config put it) unreadable.
func (c *Config) SandboxPolicy(roots, hidden []string) sandbox.Policy {
	p := sandbox.Policy{
		Mode:     sandbox.Mode(c.Sandbox.Mode),
		Roots:    roots,
		Writable: c.Sandbox.Writable,
		TempDir:  os.TempDir(),
		Network:  c.Sandbox.Network,
		ReadOnly: sandbox.UserGitConfig(),
		Hidden:   slices.Clone(hidden),
	}
	if p.Mode == "" {
		p.Mode = sandbox.WorkspaceWrite
	}
	if len(c.Files) > 0 && filepath.Base(filepath.Dir(c.Files[0])) != ".acpd" {
		p.Hidden = append(p.Hidden, c.Files[0])
	}
	return p
}

// PermissionsConfig holds the permission rules, user rules first.
type PermissionsConfig struct {
	Rules []Rule `toml:"rules"`
}

// Rule is one permission rule. Action is allow, ask or deny; Tool names the
// tool it applies to; Match is a pattern on the tool call, interpreted by
// the permissions package.
type Rule struct {
	Action string `toml:"action"`
	Tool   string `toml:"tool"`
	Match  string `toml:"match"`
}

// Provider configures one model provider.
type Provider struct {
	// Dialect is the wire protocol: openai, openai-responses, anthropic,
	// gemini or exec.
	Dialect string `toml:"dialect"`
	// BaseURL overrides the dialect's default endpoint (http and https
	// dialects only).
	BaseURL string `toml:"base_url"`
	// APIKeyEnv names the environment variable that holds the API key.
	APIKeyEnv string `toml:"api_key_env"`
	// Command is the plug-in's argv (exec dialect only).
	Command []string `toml:"command"`
	// Headers are extra HTTP headers; Query extra URL query parameters.
	Headers map[string]string `toml:"headers"`
	Query   map[string]string `toml:"query"`
	// Models is the provider's model catalog.
	Models []ModelConfig `toml:"models"`
}

// MCPServer configures one MCP server: a stdio command, or a URL for
// streamable HTTP (transport "http", the default with a URL) or SSE.
type MCPServer struct {
	// Command is the server's argv (stdio).
	Command []string `toml:"command"`
	// Env are extra environment variables for a stdio server; it otherwise
	// gets acpd's environment minus secrets.
	Env map[string]string `toml:"env"`
	// URL is the endpoint of an HTTP or SSE server.
	URL string `toml:"url"`
	// Transport is "stdio", "http" or "sse"; empty means stdio with a
	// command and http with a URL.
	Transport string `toml:"transport"`
	// Headers are sent with every HTTP request to the server's origin.
	Headers map[string]string `toml:"headers"`
	// ProtocolVersion pins the MCP revision: "2026-07-28" (server/discover)
	// or an initialize-era version such as "2025-11-25"; empty means
	// automatic.
	ProtocolVersion string `toml:"protocol_version"`
	// TrustAnnotations lets the server's tool hints (readOnlyHint) decide
	// that a tool runs without asking in ask mode too.
	TrustAnnotations bool `toml:"trust_annotations"`
	// StartupTimeoutSec bounds connecting (0: 30); ToolTimeoutSec bounds one
	// tool call (0: 120, or 600 once the tool reports progress).
	StartupTimeoutSec int `toml:"startup_timeout_sec"`
	ToolTimeoutSec    int `toml:"tool_timeout_sec"`
	// OAuth ([mcp_servers.NAME.oauth]) has an http server authorize acpd
	// with a grant that needs no person; absent means the authorization
	// code flow of `acpd mcp login`.
	OAuth *MCPOAuth `toml:"oauth"`
}

// MCPOAuth is an MCP server's OAuth grant without a person.
type MCPOAuth struct {
	// Grant is "client_credentials" (a service account: ClientID with a
	// secret or a private key) or "jwt_bearer" (a workload identity token
	// read from AssertionFile).
	Grant string `toml:"grant"`
	// ClientID is acpd's client at the authorization server.
	ClientID string `toml:"client_id"`
	// ClientSecretEnv names the environment variable that holds the
	// client secret (client_secret_basic, or client_secret_post).
	ClientSecretEnv string `toml:"client_secret_env"`
	// PrivateKeyFile is a PEM private key (P-256 or RSA) that signs a JWT
	// instead of a secret (private_key_jwt); absolute or "~/".
	PrivateKeyFile string `toml:"private_key_file"`
	// AssertionFile holds the JWT of the jwt_bearer grant, read again for
	// every grant (platforms rotate such tokens); absolute or "~/".
	AssertionFile string `toml:"assertion_file"`
	// IDTokenFile, with IdPTokenURL, makes the jwt_bearer grant's
	// assertion an ID-JAG instead (enterprise-managed authorization): the
	// user's ID token in this file is exchanged at the enterprise IdP's
	// token endpoint, as IdPClientID (secret from IdPClientSecretEnv).
	IDTokenFile        string `toml:"id_token_file"`
	IdPTokenURL        string `toml:"idp_token_url"`
	IdPClientID        string `toml:"idp_client_id"`
	IdPClientSecretEnv string `toml:"idp_client_secret_env"`
	// Scopes are requested (empty: those the server names).
	Scopes []string `toml:"scopes"`
}

// ModelConfig describes one model of a provider. Prices are USD per million
// tokens. Tools defaults to true when the key is absent.
type ModelConfig struct {
	ID            string  `toml:"id"`
	ContextWindow int     `toml:"context_window"`
	MaxOutput     int     `toml:"max_output"`
	InputPrice    float64 `toml:"input_price"`
	OutputPrice   float64 `toml:"output_price"`
	Images        bool    `toml:"images"`
	Audio         bool    `toml:"audio"`
	Reasoning     bool    `toml:"reasoning"`
	Tools         bool    `toml:"tools"`
}

// Overrides are configuration values given as command-line flags. Empty
// fields are unset.
type Overrides struct {
	ConfigFile string // --config: the user configuration file
	Model      string // --model
	LogFile    string // --log-file
	LogLevel   string // --log-level
	StateDir   string // --state-dir
}

// Loader loads configuration. It reads and validates the user file once,
// in [NewLoader]; [Loader.ForProject] reads the project file on every call.
// A Loader is immutable and safe for concurrent use.
type Loader struct {
	getenv func(string) string
	// base is defaults + user file.
	base Config
	// userFile is the loaded user file's FileInfo, nil when none was loaded.
	userFile os.FileInfo
	// top holds the environment values overridden by flags.
	top scalars
	// user is base + top.
	user Config
	// maxTurnRequests, when positive, overrides agent.max_turn_requests.
	maxTurnRequests int
	// userErr is why the user file was not loaded (Fallback), nil when it
	// was or there is none.
	userErr error
	// userPath is the user file Fallback skipped.
	userPath string
}

// scalars are the values the environment and flags can set; empty is unset.
type scalars struct {
	model, logFile, logLevel, stateDir string
}

// NewLoader reads and validates the user configuration file and the
// environment (through getenv; nil means os.Getenv) and returns a Loader for
// them and the flags o. It fails when a file or value is invalid, when a
// file named by o.ConfigFile or ACPD_CONFIG does not exist, or when no state
// directory can be determined (no ACPD_STATE_DIR, XDG_STATE_HOME or HOME).
func NewLoader(o Overrides, getenv func(string) string) (*Loader, error) {
	return newLoader(o, getenv, nil)
}

// Fallback is the Loader of a process that must go on serving although
// NewLoader failed with cause (a broken user file): defaults, environment
// and flags, without the user file. [Loader.ForSession] then warns every
// session with what is wrong (file, line, key) until the file is fixed,
// and [Loader.UserError] says it. It fails when the environment or flags
// themselves are invalid.
func Fallback(o Overrides, getenv func(string) string, cause error) (*Loader, error) {
	return newLoader(o, getenv, cause)
}

// UserError is why the user configuration file is not in use (see
// Fallback), or nil.
func (l *Loader) UserError() error { return l.userErr }

func newLoader(o Overrides, getenv func(string) string, skip error) (*Loader, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	l := &Loader{getenv: getenv, base: defaults(), userErr: skip}

	file, explicit := o.ConfigFile, true
	if file == "" {
		file = getenv(envConfig)
	}
	if file == "" {
		explicit = false
		if dir := UserDir(getenv); dir != "" {
			file = filepath.Join(dir, "config.toml")
		}
	}
	if file != "" && skip != nil {
		l.userPath, _ = absPath(file, getenv)
	}
	if file != "" && skip == nil {
		abs, err := absPath(file, getenv)
		if err != nil {
			return nil, fmt.Errorf("config file %s: %w", file, err)
		}
		data, fi, err := readFile(abs)
		switch {
		case errors.Is(err, os.ErrNotExist) && !explicit:
		case err != nil:
			return nil, err
		default:
			if err := loadUser(&l.base, abs, data, getenv); err != nil {
				return nil, err
			}
			l.userFile = fi
			l.base.Files = []string{abs}
		}
	}

	env := scalars{
		model:    getenv(envModel),
		logFile:  getenv(envLogFile),
		logLevel: getenv(envLogLevel),
		stateDir: getenv(envStateDir),
	}
	flags := scalars{model: o.Model, logFile: o.LogFile, logLevel: o.LogLevel, stateDir: o.StateDir}
	var errs []error
	errs = append(errs, env.resolve(getenv, envModel, envLogFile, envLogLevel, envStateDir)...)
	errs = append(errs, flags.resolve(getenv, "--model", "--log-file", "--log-level", "--state-dir")...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	l.top = env.over(flags)

	l.user = l.base.clone()
	if err := l.finish(&l.user); err != nil {
		return nil, err
	}
	return l, nil
}

// User returns the configuration without any project file: defaults, user
// file, environment and flags. Use it for process-wide settings (log, state
// directory, protocol). The result is a fresh copy owned by the caller.
func (l *Loader) User() *Config {
	c := l.user.clone()
	return &c
}

// ForProject returns the configuration for a session whose working
// directory is cwd (absolute): defaults, user file, the project file of
// ProjectRoot(cwd) if it exists, environment and flags. It fails, naming
// file and line, when the project file is invalid or sets something a
// project may not set. The result is a fresh copy owned by the caller.
func (l *Loader) ForProject(cwd string) (*Config, error) {
	if !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("config: project directory %q is not absolute", cwd)
	}
	c := l.base.clone()
	c.Root = ProjectRoot(cwd)
	file := filepath.Join(c.Root, ".acpd", "config.toml")
	data, fi, err := readFile(file)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	case l.userFile != nil && os.SameFile(fi, l.userFile):
		// The user file is this project's file (--config points into the
		// project): it was loaded, with user trust, already.
	default:
		if err := loadProject(&c, file, data); err != nil {
			return nil, err
		}
		c.Files = append(c.Files, file)
	}
	if err := l.finish(&c); err != nil {
		return nil, err
	}
	return &c, nil
}

// ForSession is ForProject for starting a session: a project file that
// cannot be read or is invalid does not stop the session. It then returns
// the configuration without the project file and, as warning, why the file
// was ignored; a hostile file thus cannot lock people out of a project
// until someone deletes it. err is non-nil only when cwd is not absolute.
func (l *Loader) ForSession(cwd string) (c *Config, warning error, err error) {
	c, warning = l.ForProject(cwd)
	if warning != nil {
		if !filepath.IsAbs(cwd) {
			return nil, nil, warning
		}
		c, warning = l.User(), fmt.Errorf("project configuration ignored: %w", warning)
		c.Root = ProjectRoot(cwd)
	}
	if len(c.Warnings) > 0 {
		warning = errors.Join(append([]error{warning}, c.Warnings...)...)
	}
	if uw := l.userWarning(); uw != nil {
		warning = errors.Join(uw, warning)
	}
	return c, warning, nil
}

// userWarning is what a session says while the user file is not in use
// (Fallback): why, read anew so a fixed file stops the complaint's cause
// and says that a restart applies it.
func (l *Loader) userWarning() error {
	if l.userErr == nil {
		return nil
	}
	if l.userPath != "" {
		if data, _, err := readFile(l.userPath); err == nil {
			var c Config = defaults()
			if err := loadUser(&c, l.userPath, data, l.getenv); err == nil {
				return fmt.Errorf("user configuration %s is fixed but not in use yet: restart acpd (start a new agent) to apply it", l.userPath)
			} else {
				return fmt.Errorf("user configuration ignored (acpd runs with its defaults): %w", err)
			}
		}
	}
	return fmt.Errorf("user configuration ignored (acpd runs with its defaults): %w", l.userErr)
}

// WithMaxTurnRequests returns a Loader like l whose configurations cap a
// turn at n model requests whatever the files say (acpd run
// --max-turn-requests). n must be positive.
func (l *Loader) WithMaxTurnRequests(n int) *Loader {
	c := *l
	c.maxTurnRequests = n
	c.user = l.user.clone()
	c.user.Agent.MaxTurnRequests = n
	return &c
}

// finish applies the environment and flags to c and resolves defaults that
// depend on the environment.
func (l *Loader) finish(c *Config) error {
	t := l.top
	if t.model != "" {
		c.Model = t.model
	}
	if t.logFile != "" {
		c.Log.File = t.logFile
	}
	if t.logLevel != "" {
		c.Log.Level = t.logLevel
	}
	if t.stateDir != "" {
		c.State.Dir = t.stateDir
	}
	if l.maxTurnRequests > 0 {
		c.Agent.MaxTurnRequests = l.maxTurnRequests
	}
	if c.State.Dir == "" {
		c.State.Dir = DefaultStateDir(l.getenv)
	}
	if c.State.Dir == "" {
		return errors.New("config: cannot determine the state directory: set state.dir, ACPD_STATE_DIR, XDG_STATE_HOME or HOME")
	}
	return nil
}

// resolve validates s, whose fields come from the named sources, and makes
// its paths absolute.
func (s *scalars) resolve(getenv func(string) string, model, logFile, logLevel, stateDir string) []error {
	var errs []error
	if s.model != "" {
		if err := checkModelRef(s.model); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", model, err))
		}
	}
	if s.logLevel != "" {
		if err := checkOneOf("log level", s.logLevel, logLevels); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", logLevel, err))
		}
	}
	for _, p := range []struct {
		name string
		v    *string
	}{{logFile, &s.logFile}, {stateDir, &s.stateDir}} {
		if *p.v == "" {
			continue
		}
		abs, err := absPath(*p.v, getenv)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
			continue
		}
		*p.v = abs
	}
	return errs
}

// over returns s with the fields set in o replaced.
func (s scalars) over(o scalars) scalars {
	for _, p := range []struct{ dst, src *string }{
		{&s.model, &o.model}, {&s.logFile, &o.logFile}, {&s.logLevel, &o.logLevel}, {&s.stateDir, &o.stateDir},
	} {
		if *p.src != "" {
			*p.dst = *p.src
		}
	}
	return s
}

func defaults() Config {
	return Config{
		// No default model: when none is configured, the provider registry
		// picks one from the API keys present or a local server it finds.
		Log:      LogConfig{Level: defaultLogLevel},
		Protocol: ProtocolConfig{MaxLineBytes: defaultMaxLineBytes},
		Agent:    AgentConfig{MaxTurnRequests: defaultMaxTurnRequests, DefaultMode: defaultMode},
		Sandbox:  SandboxConfig{Mode: defaultSandboxMode},
	}
}

// clone returns a deep copy of c.
func (c *Config) clone() Config {
	d := *c
	d.Env.Allow = slices.Clone(c.Env.Allow)
	d.Permissions.Rules = slices.Clone(c.Permissions.Rules)
	d.Sandbox.Writable = slices.Clone(c.Sandbox.Writable)
	d.Files = slices.Clone(c.Files)
	d.Warnings = slices.Clone(c.Warnings)
	d.Providers = cloneValues(c.Providers, func(p Provider) Provider {
		p.Command = slices.Clone(p.Command)
		p.Headers = maps.Clone(p.Headers)
		p.Query = maps.Clone(p.Query)
		p.Models = slices.Clone(p.Models)
		return p
	})
	d.Hooks = cloneValues(c.Hooks, slices.Clone[[]Hook])
	d.MCPServers = cloneValues(c.MCPServers, func(m MCPServer) MCPServer {
		m.Command = slices.Clone(m.Command)
		m.Env = maps.Clone(m.Env)
		m.Headers = maps.Clone(m.Headers)
		if m.OAuth != nil {
			o := *m.OAuth
			o.Scopes = slices.Clone(o.Scopes)
			m.OAuth = &o
		}
		return m
	})
	return d
}

// cloneValues returns a copy of m (nil for nil) holding clone of each value.
func cloneValues[V any](m map[string]V, clone func(V) V) map[string]V {
	if m == nil {
		return nil
	}
	d := make(map[string]V, len(m))
	for k, v := range m {
		d[k] = clone(v)
	}
	return d
}

// readFile reads a regular file of at most maxFileBytes. A missing file
// yields an error satisfying errors.Is(err, os.ErrNotExist).
func readFile(name string) ([]byte, os.FileInfo, error) {
	// O_NONBLOCK: opening a FIFO planted as a project file must not block;
	// the regular-file check below then rejects it.
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("config: %s is not a regular file", name)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	if len(data) > maxFileBytes {
		return nil, nil, fmt.Errorf("config: %s is larger than %d bytes", name, maxFileBytes)
	}
	return data, fi, nil
}

// absPath expands a leading "~/" to $HOME and makes p absolute relative to
// the process's working directory.
func absPath(p string, getenv func(string) string) (string, error) {
	p, err := expandHome(p, getenv)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// expandHome expands a leading "~/" (or a lone "~") to $HOME (on Windows,
// where HOME is rarely set, else %USERPROFILE%).
func expandHome(p string, getenv func(string) string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, unset := getenv("HOME"), "HOME is not set"
	if home == "" && runtime.GOOS == "windows" {
		home, unset = getenv("USERPROFILE"), "HOME is not set, nor USERPROFILE"
	}
	if home == "" {
		return "", fmt.Errorf("cannot expand %q: %s", p, unset)
	}
	return filepath.Join(home, p[1:]), nil
}

// checkModelRef validates a provider/model reference.
func checkModelRef(ref string) error {
	_, _, err := model.ParseRef(ref)
	return err
}
