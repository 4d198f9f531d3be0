package config

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"acpd/internal/lazy"
	"acpd/permissions"
)

var (
	logLevels = []string{"debug", "info", "warn", "error"}
	// projectModes are the modes a project file may choose: the ones that
	// allow no more than "ask".
	projectModes = []string{string(permissions.ModeAsk), string(permissions.ModePlan)}
	// sandboxModes are the sandbox.mode values, strictest first.
	sandboxModes = []string{"read-only", "workspace-write", "off"}
	// escalateValues are the sandbox.escalate values.
	escalateValues = []string{"ask", "allow"}
	actions        = []string{"allow", "ask", "deny"}
	dialects       = []string{"openai", "openai-responses", "anthropic", "gemini", "exec"}

	// projectForbidden are the tables a project file may not set.
	projectForbidden = []string{"log", "state", "env", "providers", "protocol", "mcp_servers"}
	mcpTransports    = []string{"stdio", "http", "sse"}
	// hookEvents are the events acpd runs hooks for (agent/internal/hooks).
	hookEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}

	providerNameRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) }}
	envNameRE      = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) }}
	headerNameRE   = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") }}
	typeMismatchRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^cannot decode TOML (\S+) into .* of type (\S+)$`) }}
)

// fileError is an error at a position of a configuration file.
type fileError struct {
	file      string
	line, col int // 1-based; 0 when unknown
	msg       string
}

func (e *fileError) Error() string {
	if e.line == 0 {
		return e.file + ": " + e.msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.file, e.line, e.col, e.msg)
}

// loadUser decodes and validates the user file name (contents data) over c.
// Relative paths in the file are resolved against the file's directory.
func loadUser(c *Config, name string, data []byte, getenv func(string) string) error {
	fc := c.clone()
	idx, err := decode(name, data, &fc)
	if err != nil {
		return err
	}
	errs := validate(name, &fc, idx)
	for _, p := range []struct {
		key string
		v   *string
	}{{"log.file", &fc.Log.File}, {"state.dir", &fc.State.Dir}} {
		if *p.v == "" {
			continue
		}
		v, err := expandHome(*p.v, getenv)
		if err != nil {
			errs = append(errs, idx.errAt(name, p.key, "%s: %v", p.key, err))
			continue
		}
		switch {
		case filepath.IsAbs(v):
		case filepath.Separator == '\\' && filepath.VolumeName(v) == "" && (strings.HasPrefix(v, "/") || strings.HasPrefix(v, `\`)):
			// Rooted without a drive (Windows): on the file's drive, as
			// Windows takes it on the current one.
			v = filepath.VolumeName(name) + v
		default:
			v = filepath.Join(filepath.Dir(name), v)
		}
		*p.v = filepath.Clean(v)
	}
	if err := joinErrors(errs); err != nil {
		return err
	}
	for e, hs := range fc.Hooks {
		for i := range hs {
			hs[i].Source = name
		}
		fc.Hooks[e] = hs
	}
	*c = fc
	return nil
}

// loadProject decodes, checks and validates the project file name
// (contents data) and merges what it may set into c.
func loadProject(c *Config, name string, data []byte) error {
	var p Config
	idx, err := decode(name, data, &p)
	if err != nil {
		return err
	}
	errs := restrictProject(name, &p, idx)
	errs = append(errs, validate(name, &p, idx)...)
	if err := joinErrors(errs); err != nil {
		return err
	}
	if idx.has("model") {
		c.Model = p.Model
	}
	switch {
	case p.Instructions == "":
	case c.Instructions == "":
		c.Instructions = p.Instructions
	default:
		c.Instructions += "\n\n" + p.Instructions
	}
	c.Permissions.Rules = append(c.Permissions.Rules, p.Permissions.Rules...)
	// A project's hooks are added, marked: they run only once the user
	// trusts them.
	for _, e := range hookEvents {
		for _, h := range p.Hooks[e] {
			h.Source, h.Project = name, true
			if c.Hooks == nil {
				c.Hooks = map[string][]Hook{}
			}
			c.Hooks[e] = append(c.Hooks[e], h)
		}
	}
	if idx.has("agent.max_turn_requests") {
		c.Agent.MaxTurnRequests = p.Agent.MaxTurnRequests
	}
	if idx.has("agent.default_mode") {
		c.Agent.DefaultMode = p.Agent.DefaultMode
	}
	// The sandbox only tightens; what would loosen it is ignored and said.
	c.Warnings = append(c.Warnings, loosening(name, c, &p, idx)...)
	if idx.has("sandbox.mode") && sandboxRank(p.Sandbox.Mode) < sandboxRank(c.Sandbox.Mode) {
		c.Sandbox.Mode = p.Sandbox.Mode
	}
	if idx.has("sandbox.network") && !p.Sandbox.Network {
		c.Sandbox.Network = false
	}
	if idx.has("sandbox.escalate") {
		c.Sandbox.Escalate = p.Sandbox.Escalate // "ask" only (restrictProject)
	}
	if idx.has("sandbox.writable") {
		c.Sandbox.Writable = slices.DeleteFunc(c.Sandbox.Writable, func(w string) bool {
			return !slices.Contains(p.Sandbox.Writable, w)
		})
	}
	return nil
}

// loosening reports the sandbox settings of the project file p that would
// loosen what c (the user's configuration) sets: a project may only
// tighten the sandbox, so they are ignored (what tightens still applies),
// but said, with file and line, as a project's "allow" rule is.
func loosening(name string, c, p *Config, idx *posIndex) []error {
	var errs []error
	if idx.has("sandbox.mode") && sandboxRank(p.Sandbox.Mode) > sandboxRank(c.Sandbox.Mode) {
		errs = append(errs, idx.errAt(name, "sandbox.mode",
			`ignored: sandbox.mode = %q would loosen the sandbox (the user configuration has %q; a project may only tighten it)`, p.Sandbox.Mode, c.Sandbox.Mode))
	}
	if idx.has("sandbox.network") && p.Sandbox.Network && !c.Sandbox.Network {
		errs = append(errs, idx.errAt(name, "sandbox.network",
			`ignored: sandbox.network = true would turn the network on (the user configuration keeps it off; a project may only tighten the sandbox)`))
	}
	if idx.has("sandbox.writable") {
		for _, w := range p.Sandbox.Writable {
			if !slices.Contains(c.Sandbox.Writable, w) {
				errs = append(errs, idx.errAt(name, "sandbox.writable",
					`ignored: sandbox.writable would add %q (a project may only remove writable paths)`, w))
			}
		}
	}
	return errs
}

// sandboxRank orders sandbox modes from the strictest.
func sandboxRank(mode string) int { return slices.Index(sandboxModes, mode) }

// restrictProject reports what the project file p sets that a project file
// may not set.
func restrictProject(name string, p *Config, idx *posIndex) []error {
	var errs []error
	v := reflect.ValueOf(p).Elem()
	for _, key := range projectForbidden {
		pos, ok := idx.under(key)
		if !ok && v.FieldByName(fieldForKey(key)).IsZero() {
			continue
		}
		errs = append(errs, &fileError{name, pos.line, pos.col,
			fmt.Sprintf("not allowed in a project file: %s (only the user configuration file may set it)", key)})
	}
	for i, r := range p.Permissions.Rules {
		if r.Action == "allow" {
			key := pathOf("permissions", "rules", i, "action")
			errs = append(errs, idx.errAt(name, key,
				`not allowed in a project file: %s = "allow" (a project may only add "ask" and "deny" rules)`, key))
		}
	}
	if idx.has("sandbox.escalate") && p.Sandbox.Escalate != "ask" {
		errs = append(errs, idx.errAt(name, "sandbox.escalate",
			`not allowed in a project file: sandbox.escalate = %q (a project may only set "ask")`, p.Sandbox.Escalate))
	}
	if idx.has("agent.default_mode") && !slices.Contains(projectModes, p.Agent.DefaultMode) {
		errs = append(errs, idx.errAt(name, "agent.default_mode",
			`not allowed in a project file: agent.default_mode = %q (a project may only choose "ask" or "plan")`, p.Agent.DefaultMode))
	}
	return errs
}

// fieldForKey returns the name of the Config field whose toml tag is key.
func fieldForKey(key string) string {
	t := reflect.TypeFor[Config]()
	for i := range t.NumField() {
		if tagName(t.Field(i)) == key {
			return t.Field(i).Name
		}
	}
	panic("config: no field for key " + key)
}

// decode strictly decodes data, the contents of file name, over c and
// returns the positions of its keys. Model entries without a tools key get
// Tools = true. On error c is unchanged.
func decode(name string, data []byte, c *Config) (*posIndex, error) {
	tmp := c.clone()
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&tmp); err != nil {
		var idx *posIndex
		var se *toml.StrictMissingError
		if errors.As(err, &se) {
			// Only unknown keys: the document is valid TOML, whose keys
			// the index names as the file spells them.
			idx, _ = buildIndex(data)
		}
		return nil, decodeError(name, err, idx)
	}
	idx, err := buildIndex(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := idx.checkCase(name); err != nil {
		return nil, err
	}
	for pname, p := range tmp.Providers {
		for i := range p.Models {
			if !idx.has(pathOf("providers", pname, "models", i, "tools")) {
				p.Models[i].Tools = true
			}
		}
	}
	*c = tmp
	return idx, nil
}

// decodeError turns a go-toml error into errors naming file, line and
// column.
func decodeError(name string, err error, idx *posIndex) error {
	var se *toml.StrictMissingError
	if errors.As(err, &se) {
		errs := make([]error, 0, len(se.Errors))
		for i := range se.Errors {
			e := &se.Errors[i]
			line, col := e.Position()
			key := idx.keyAt(line, col)
			if key == "" {
				key = joinKey(e.Key())
			}
			errs = append(errs, &fileError{name, line, col, "unknown key " + key})
		}
		return joinErrors(errs)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, col := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if m := typeMismatchRE.Get().FindStringSubmatch(msg); m != nil {
			msg = fmt.Sprintf("%s: want %s, got a TOML %s", joinKey(de.Key()), describeGoType(m[2]), m[1])
		}
		return &fileError{name, line, col, msg}
	}
	return fmt.Errorf("%s: %w", name, err)
}

// describeGoType names a Go type, as go-toml prints it, in TOML terms.
func describeGoType(t string) string {
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "[]string":
		return "an array of strings"
	case strings.HasPrefix(t, "[]"):
		return "an array of tables"
	case t == "map[string]string":
		return "a table of strings"
	default:
		return "a table"
	}
}

// validate checks the values the file name sets in c (as recorded by idx).
func validate(name string, c *Config, idx *posIndex) []error {
	var errs []error
	add := func(key, format string, args ...any) {
		errs = append(errs, idx.errAt(name, key, format, args...))
	}
	if idx.has("model") {
		if err := checkModelRef(c.Model); err != nil {
			add("model", "model: %v", err)
		}
	}
	if idx.has("log.level") {
		if err := checkOneOf("log.level", c.Log.Level, logLevels); err != nil {
			add("log.level", "%v", err)
		}
	}
	if idx.has("agent.default_mode") {
		if err := checkOneOf("agent.default_mode", c.Agent.DefaultMode, modeNames()); err != nil {
			add("agent.default_mode", "%v", err)
		}
	}
	if idx.has("agent.mcp_grace_ms") && c.Agent.MCPGraceMs < 0 {
		add("agent.mcp_grace_ms", "agent.mcp_grace_ms: must not be negative")
	}
	if idx.has("agent.mcp_start_timeout_ms") && c.Agent.MCPStartTimeoutMs < 0 {
		add("agent.mcp_start_timeout_ms", "agent.mcp_start_timeout_ms: must not be negative")
	}
	if idx.has("agent.ask_timeout_ms") && c.Agent.AskTimeoutMs < 0 {
		add("agent.ask_timeout_ms", "agent.ask_timeout_ms: must not be negative")
	}
	if idx.has("sandbox.mode") {
		if err := checkOneOf("sandbox.mode", c.Sandbox.Mode, sandboxModes); err != nil {
			add("sandbox.mode", "%v", err)
		}
	}
	if idx.has("sandbox.escalate") {
		if err := checkOneOf("sandbox.escalate", c.Sandbox.Escalate, escalateValues); err != nil {
			add("sandbox.escalate", "%v", err)
		}
	}
	for i, w := range c.Sandbox.Writable {
		if key := pathOf("sandbox", "writable", i); !filepath.IsAbs(w) {
			add(key, "%s: %q is not an absolute path", key, w)
		}
	}
	if idx.has("agent.max_turn_requests") && c.Agent.MaxTurnRequests < 1 {
		add("agent.max_turn_requests", "agent.max_turn_requests must be at least 1, not %d", c.Agent.MaxTurnRequests)
	}
	if idx.has("protocol.max_line_bytes") && c.Protocol.MaxLineBytes < minMaxLineBytes {
		add("protocol.max_line_bytes", "protocol.max_line_bytes must be at least %d, not %d", minMaxLineBytes, c.Protocol.MaxLineBytes)
	}
	for i, pat := range c.Env.Allow {
		key := pathOf("env", "allow", i)
		if pat == "" {
			add(key, "%s: empty pattern", key)
		} else if _, err := path.Match(pat, ""); err != nil {
			add(key, "%s: invalid pattern %q: %v", key, pat, err)
		}
	}
	for i, r := range c.Permissions.Rules {
		key := pathOf("permissions", "rules", i)
		if err := checkOneOf(key+".action", r.Action, actions); err != nil {
			add(key+".action", "%v", err)
		}
		if r.Tool == "" {
			add(key, "%s: tool is required", key)
		}
	}
	for e, hs := range c.Hooks {
		if err := checkOneOf("hooks", e, hookEvents); err != nil {
			add(pathOf("hooks", e), "hooks.%s: unknown event (acpd runs %s)", e, strings.Join(hookEvents, ", "))
		}
		for i, h := range hs {
			key := pathOf("hooks", e, i)
			if strings.TrimSpace(h.Command) == "" {
				add(key, "%s: command is required", key)
			}
			if h.Timeout < 0 {
				add(key+".timeout", "%s.timeout: must not be negative", key)
			}
		}
	}
	names := make([]string, 0, len(c.Providers))
	for n := range c.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		errs = append(errs, validateProvider(name, n, c.Providers[n], idx)...)
	}
	names = names[:0]
	for n := range c.MCPServers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		errs = append(errs, validateMCPServer(name, n, c.MCPServers[n], idx)...)
	}
	return errs
}

// validateMCPServer checks one [mcp_servers.NAME] table.
func validateMCPServer(name, sname string, m MCPServer, idx *posIndex) []error {
	var errs []error
	key := pathOf("mcp_servers", sname)
	add := func(format string, args ...any) {
		errs = append(errs, idx.errAt(name, key, format, args...))
	}
	if !providerNameRE.Get().MatchString(sname) {
		add("%s: the name may only use letters, digits, '.', '_' and '-'", key)
	}
	transport := m.Transport
	if transport == "" {
		transport = "stdio"
		if m.URL != "" {
			transport = "http"
		}
	}
	if err := checkOneOf(key+".transport", transport, mcpTransports); err != nil {
		add("%v", err)
		return errs
	}
	switch m.ProtocolVersion {
	case "", "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05":
	default:
		add("%s.protocol_version: unknown MCP protocol version %q", key, m.ProtocolVersion)
	}
	if m.StartupTimeoutSec < 0 || m.ToolTimeoutSec < 0 {
		add("%s: timeouts must not be negative", key)
	}
	switch transport {
	case "stdio":
		if len(m.Command) == 0 || m.Command[0] == "" {
			add("%s: a stdio server needs a command", key)
		}
		if m.URL != "" || len(m.Headers) > 0 {
			add("%s: url and headers are for http and sse servers", key)
		}
		for k := range m.Env {
			if !envNameRE.Get().MatchString(k) {
				add("%s.env: invalid variable name %q", key, k)
			}
		}
	default:
		if err := checkBaseURL(m.URL); err != nil {
			add("%s.url: %v", key, err)
		}
		if len(m.Command) > 0 || len(m.Env) > 0 {
			add("%s: command and env are for stdio servers", key)
		}
		for h, v := range m.Headers {
			if !headerNameRE.Get().MatchString(h) || strings.ContainsAny(v, "\r\n\x00") {
				add("%s.headers: invalid header %q", key, h)
			}
		}
	}
	if o := m.OAuth; o != nil {
		okey := key + ".oauth"
		switch {
		case transport != "http":
			add("%s: OAuth is for http servers", okey)
		case o.Grant == "client_credentials":
			if o.ClientID == "" || (o.ClientSecretEnv == "") == (o.PrivateKeyFile == "") {
				add("%s: the client_credentials grant needs client_id and one of client_secret_env and private_key_file", okey)
			}
		case o.Grant == "jwt_bearer":
			if (o.AssertionFile == "") == (o.IDTokenFile == "") || (o.IDTokenFile != "") != (o.IdPTokenURL != "") {
				add("%s: the jwt_bearer grant needs assertion_file, or id_token_file with idp_token_url", okey)
			}
			if o.IdPTokenURL != "" {
				if err := checkBaseURL(o.IdPTokenURL); err != nil {
					add("%s.idp_token_url: %v", okey, err)
				}
			}
		default:
			add("%s.grant: %q is not one of client_credentials, jwt_bearer", okey, o.Grant)
		}
		for k, v := range map[string]string{"client_secret_env": o.ClientSecretEnv, "idp_client_secret_env": o.IdPClientSecretEnv} {
			if v != "" && !envNameRE.Get().MatchString(v) {
				add("%s.%s: invalid variable name %q", okey, k, v)
			}
		}
	}
	return errs
}

// validateProvider checks provider pname of file name.
func validateProvider(name, pname string, p Provider, idx *posIndex) []error {
	var errs []error
	key := pathOf("providers", pname)
	add := func(k, format string, args ...any) {
		errs = append(errs, idx.errAt(name, k, format, args...))
	}
	if !providerNameRE.Get().MatchString(pname) {
		add(key, "%s: invalid provider name %q: use letters, digits, '.', '_' and '-'", key, pname)
	}
	if p.Dialect == "" {
		add(key, "%s: dialect is required (one of %s)", key, strings.Join(dialects, ", "))
	} else if err := checkOneOf(key+".dialect", p.Dialect, dialects); err != nil {
		add(key+".dialect", "%v", err)
	}
	if p.Dialect == "exec" {
		if len(p.Command) == 0 || p.Command[0] == "" {
			add(key, "%s: the exec dialect requires command (the plug-in's argv)", key)
		}
		for _, k := range []string{"base_url", "headers", "query"} {
			if idx.has(key + "." + k) {
				add(key+"."+k, "%s.%s is not used by the exec dialect", key, k)
			}
		}
	} else if len(p.Command) > 0 {
		add(key+".command", "%s.command is only used by the exec dialect", key)
	}
	if p.BaseURL != "" {
		if err := checkBaseURL(p.BaseURL); err != nil {
			add(key+".base_url", "%s.base_url: %v", key, err)
		}
	}
	if p.APIKeyEnv != "" && !envNameRE.Get().MatchString(p.APIKeyEnv) {
		add(key+".api_key_env", "%s.api_key_env: %q is not an environment variable name", key, p.APIKeyEnv)
	}
	for _, h := range sortedKeys(p.Headers) {
		k := pathOf("providers", pname, "headers", h)
		if !headerNameRE.Get().MatchString(h) {
			add(k, "%s: invalid HTTP header name %q", k, h)
		}
		if strings.ContainsAny(p.Headers[h], "\r\n\x00") {
			add(k, "%s: header value contains a line break or NUL", k)
		}
	}
	for _, q := range sortedKeys(p.Query) {
		if q == "" {
			add(key+".query", "%s.query: empty parameter name", key)
		}
	}
	seen := map[string]int{}
	for i, m := range p.Models {
		mk := pathOf("providers", pname, "models", i)
		switch j, dup := seen[m.ID]; {
		case m.ID == "":
			add(mk, "%s: id is required", mk)
		case dup:
			add(mk+".id", "%s.id: model %q is already defined by models[%d]", mk, m.ID, j)
		default:
			seen[m.ID] = i
		}
		for _, f := range []struct {
			k string
			v float64
		}{
			{"context_window", float64(m.ContextWindow)}, {"max_output", float64(m.MaxOutput)},
			{"input_price", m.InputPrice}, {"output_price", m.OutputPrice},
		} {
			if !(f.v >= 0) || math.IsInf(f.v, 0) {
				add(mk+"."+f.k, "%s.%s must be a finite number >= 0", mk, f.k)
			}
		}
	}
	return errs
}

func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: want an http or https URL", s)
	}
	if u.Host == "" {
		return fmt.Errorf("%q: no host", s)
	}
	if u.User != nil {
		return fmt.Errorf("%q: credentials do not belong in the URL (use api_key_env)", s)
	}
	return nil
}

func checkOneOf(what, v string, allowed []string) error {
	if slices.Contains(allowed, v) {
		return nil
	}
	return fmt.Errorf("invalid %s %q: want one of %s", what, v, strings.Join(allowed, ", "))
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// A seg is one step of a key path: a key, or an index into an array.
type seg struct {
	key string
	idx int // array index when key == "" (arrays only); -1 for keys
}

type pos struct{ line, col int }

type entry struct {
	path []seg
	str  string
	pos  pos
}

// posIndex records where each key of a TOML document is, by key path
// ("a.b", `providers."x.y".models[2].id`), in document order.
type posIndex struct {
	entries []entry
	at      map[string]pos
	// lines holds the offset of each line's first byte.
	lines []int
}

// pathOf builds a key path string from keys (string) and indices (int).
func pathOf(parts ...any) string {
	segs := make([]seg, len(parts))
	for i, p := range parts {
		switch p := p.(type) {
		case string:
			segs[i] = seg{key: p, idx: -1}
		case int:
			segs[i] = seg{idx: p}
		default:
			panic(fmt.Sprintf("config: bad path part %T", p))
		}
	}
	return segString(segs)
}

func segString(segs []seg) string {
	var b strings.Builder
	for i, s := range segs {
		if s.idx >= 0 {
			fmt.Fprintf(&b, "[%d]", s.idx)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(quoteKey(s.key))
	}
	return b.String()
}

func joinKey(k toml.Key) string {
	var b strings.Builder
	for i, s := range k {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(quoteKey(s))
	}
	return b.String()
}

// quoteKey returns k as a TOML key: bare when possible, quoted otherwise.
func quoteKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, c := range []byte(k) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return strconv.Quote(k)
		}
	}
	return k
}

// has reports whether the document sets key exactly.
func (x *posIndex) has(key string) bool {
	_, ok := x.at[key]
	return ok
}

// under returns the position of the first key at or below prefix.
func (x *posIndex) under(prefix string) (pos, bool) {
	for _, e := range x.entries {
		if e.str == prefix || strings.HasPrefix(e.str, prefix+".") || strings.HasPrefix(e.str, prefix+"[") {
			return e.pos, true
		}
	}
	return pos{}, false
}

// keyAt returns the path of the key at line:col, or "".
func (x *posIndex) keyAt(line, col int) string {
	if x == nil {
		return ""
	}
	for _, e := range x.entries {
		if e.pos == (pos{line, col}) {
			return e.str
		}
	}
	return ""
}

// errAt returns an error of file name at key (or the first key below it).
func (x *posIndex) errAt(name, key, format string, args ...any) error {
	p, ok := x.at[key]
	if !ok {
		p, _ = x.under(key)
	}
	return &fileError{name, p.line, p.col, fmt.Sprintf(format, args...)}
}

func (x *posIndex) add(path []seg, p pos) {
	s := segString(path)
	x.entries = append(x.entries, entry{path: slices.Clone(path), str: s, pos: p})
	if _, ok := x.at[s]; !ok {
		x.at[s] = p
	}
}

// checkCase rejects keys that go-toml matched to a field case-insensitively
// ("MODEL" for "model"): keys must be spelled exactly as documented, so
// that no check can be bypassed by spelling a key differently.
func (x *posIndex) checkCase(name string) error {
	var errs []error
	for _, e := range x.entries {
		t := reflect.TypeFor[Config]()
		for _, s := range e.path {
			for t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			switch {
			case t.Kind() == reflect.Struct && s.idx < 0:
				f, ok := fieldByTag(t, s.key)
				if !ok {
					if f, ok := fieldByTagFold(t, s.key); ok {
						errs = append(errs, &fileError{name, e.pos.line, e.pos.col,
							fmt.Sprintf("unknown key %s (did you mean %q?)", e.str, tagName(f))})
					}
					t = nil
					break
				}
				t = f.Type
			case t.Kind() == reflect.Map && s.idx < 0:
				t = t.Elem()
			case t.Kind() == reflect.Slice && s.idx >= 0:
				t = t.Elem()
			default:
				t = nil
			}
			if t == nil {
				break
			}
		}
	}
	return joinErrors(errs)
}

// maxErrors bounds the errors reported for one file.
const maxErrors = 20

// joinErrors joins errs, in document order, of which at most maxErrors are
// reported.
func joinErrors(errs []error) error {
	slices.SortStableFunc(errs, func(a, b error) int {
		var fa, fb *fileError
		if !errors.As(a, &fa) || !errors.As(b, &fb) || fa.file != fb.file {
			return 0
		}
		if fa.line != fb.line {
			return fa.line - fb.line
		}
		return fa.col - fb.col
	})
	if len(errs) > maxErrors {
		more := fmt.Errorf("... and %d more errors", len(errs)-maxErrors)
		errs = append(errs[:maxErrors:maxErrors], more)
	}
	return errors.Join(errs...)
}

func tagName(f reflect.StructField) string {
	n, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	return n
}

func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); tagName(f) == key && key != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func fieldByTagFold(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); tagName(f) != "-" && strings.EqualFold(tagName(f), key) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// modeNames lists the permission modes' names.
func modeNames() []string {
	var out []string
	for _, m := range permissions.Modes() {
		out = append(out, string(m.Mode))
	}
	return out
}
