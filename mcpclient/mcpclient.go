// Package mcpclient connects one session's MCP (Model Context Protocol)
// servers and serves them to acpd: a [Manager] owns the connections of the
// [Server]s its caller describes in plain values (the editor's list and
// the configuration's, converted by their owners: tools/mcptools, config),
// and knows neither ACP nor acpd's configuration.
//
// It is built on the official MCP Go SDK (github.com/modelcontextprotocol/go-sdk),
// which implements the stdio, streamable HTTP and SSE transports, the
// initialize/discover lifecycle, request cancellation and protocol version
// negotiation. On top of it the Manager:
//
//   - connects each server on its own (readiness with a grace, see
//     [Manager.Wait]; restarts with backoff; a stdio server that dies on
//     server/discover reconnected with initialize, a verdict remembered in
//     Options.StateDir), launching stdio servers with a controlled
//     environment and sending per-server HTTP headers to their origin only;
//   - offers their tools under model-safe unique names, tracking
//     tools/list_changed, and calls them with progress and timeouts;
//   - exposes their prompts (slash-command-friendly names, tracking
//     prompts/list_changed), resources (bounded for a model's context),
//     completions and subscriptions, and MCP Apps views;
//   - lists the skills of servers that serve them (extension
//     io.modelcontextprotocol/skills) and reads a skill's files only when
//     it is used, each verified against its listed digest and size, the
//     SKILL.md's frontmatter against the listed one (skills.go);
//   - serves what servers ask back (sampling, elicitation, roots, logging)
//     through the hooks of [Options];
//   - authorizes HTTP servers with OAuth through package
//     acpd/mcpclient/oauth ([Server.OAuth]; [WithStoredOAuth] and
//     [WithSessionOAuth] give servers the stored tokens' setups);
//   - owns every connection, goroutine and child process until
//     [Manager.Close], which waits for them.
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"acpd/internal/childenv"
	"acpd/internal/tailbuf"
	"acpd/mcpclient/internal/deadline"
	"acpd/mcpclient/internal/origin"
	"acpd/mcpclient/oauth"
)

// Transport names accepted in [Server.Transport].
const (
	TransportStdio = "stdio" // a child process speaking newline-delimited JSON-RPC on stdin/stdout
	TransportHTTP  = "http"  // MCP streamable HTTP
	TransportSSE   = "sse"   // the legacy HTTP+SSE transport (protocol 2024-11-05)
)

// Limits and defaults.
const (
	// maxToolsPerServer bounds how many tools one server may contribute;
	// listing stops there (further tools are ignored and a warning logged).
	maxToolsPerServer = 1024
	// refreshTimeout bounds one tools/list refresh after list_changed.
	refreshTimeout = 30 * time.Second
	// terminateGrace is how long a stdio server gets to exit after its
	// stdin closes before it is sent SIGTERM (and as long again before SIGKILL).
	terminateGrace = 2 * time.Second
	// stderrTail is how many trailing bytes of a stdio server's stderr are
	// kept to explain a failed start.
	stderrTail = 1024

	// DefaultGrace is how long a turn should wait for servers still
	// connecting (see [Manager.Wait]).
	DefaultGrace = 2 * time.Second
	// DefaultConnectTimeout bounds one connection attempt of [Manager.Add].
	DefaultConnectTimeout = 30 * time.Second
	// DefaultCallTimeout bounds a tool call that reports no progress.
	DefaultCallTimeout = 2 * time.Minute
	// DefaultProgressCallTimeout bounds a tool call that reports progress.
	DefaultProgressCallTimeout = 10 * time.Minute

	// maxRestarts restarts within restartWindow put a server down for good.
	maxRestarts   = 5
	restartWindow = 5 * time.Minute
	maxBackoff    = 30 * time.Second
)

// restartBase is the delay before the first restart; it doubles with each
// further restart within restartWindow, up to maxBackoff. Tests shorten
// it with Options.restartBase.
const restartBase = 500 * time.Millisecond

// ErrClosed is returned (wrapped) by [Manager.Start] and [Manager.Call]
// after [Manager.Close].
var ErrClosed = errors.New("mcpclient: manager closed")

// ErrUnknownTool is returned (wrapped) by [Manager.Call] for a qualified name
// that [Manager.Tools] does not currently list.
var ErrUnknownTool = errors.New("mcpclient: unknown tool")

// ErrUnavailable is returned (wrapped, with the reason) by calls to a server
// that is down.
var ErrUnavailable = errors.New("mcp server unavailable")

// ErrTimeout is returned (wrapped) by [Manager.Call] when the call outlived
// its timeout; the server was told the request is cancelled.
var ErrTimeout = errors.New("mcp tool call timed out")

// Server describes one MCP server to connect to, as an editor sends it in
// ACP's session/new mcpServers.
type Server struct {
	// Name identifies the server; it must be non-empty and unique within a
	// Manager. It becomes part of every tool's qualified name.
	Name string
	// Command, Args and Env configure a stdio server. Command without a path
	// separator is looked up in the PATH of the server's environment
	// (Options.BaseEnv overridden by Env); relative PATH entries are ignored.
	// A relative Command with a separator is resolved against Options.Dir.
	Command string
	Args    []string
	// Env holds NAME=value entries added to Options.BaseEnv; they win over
	// BaseEnv entries with the same name.
	Env []string
	// URL is the endpoint of an http or sse server (http or https only).
	URL string
	// Headers are sent with every HTTP request to an http or sse server
	// whose origin (scheme, host and port) is URL's: a redirect to another
	// origin is followed without them.
	Headers map[string]string
	// Transport is TransportStdio, TransportHTTP or TransportSSE. Empty means
	// stdio when Command is set.
	Transport string
	// ProtocolVersion pins the protocol revision: ProtocolStateless always
	// starts with server/discover, ProtocolLegacy (or an older version)
	// always uses initialize. Empty means automatic: server/discover first,
	// and a stdio server that dies on it is respawned and connected with
	// initialize, a verdict remembered in Options.StateDir.
	ProtocolVersion string
	// TrustAnnotations records that the user trusts this server's tool
	// hints (see [Tool.TrustHints]).
	TrustAnnotations bool
	// StartupTimeout, if positive, replaces Options.ConnectTimeout for this
	// server; ToolTimeout replaces both call timeouts.
	StartupTimeout, ToolTimeout time.Duration
	// OAuth, if set, authorizes requests to a streamable HTTP server.
	OAuth *oauth.Config
}

// Options configure a [Manager].
type Options struct {
	// ClientName and ClientVersion are sent to servers as clientInfo.
	// Empty ClientName means "acpd"; empty ClientVersion means "dev".
	ClientName, ClientVersion string
	// Logger receives diagnostics (never tool arguments, results, headers or
	// environment values). Nil means slog.Default().
	Logger *slog.Logger
	// BaseEnv is the environment stdio servers start from, as NAME=value
	// entries. The caller filters secrets out of it; nil means an empty
	// environment (the process environment is never inherited implicitly).
	BaseEnv []string
	// Dir is the working directory of stdio servers and, when non-empty, is
	// offered to servers as the client's single root (file:// URI).
	Dir string
	// StateDir, if set, is where the Manager remembers which stdio servers
	// need the legacy initialize handshake (file mcp-eras.json).
	StateDir string
	// ConnectTimeout bounds one connection attempt started by [Manager.Add]
	// or a restart; zero means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Hold, if set, holds the connection attempts [Manager.Add] starts
	// until it is closed: the servers are added (StateStarting, and
	// [Manager.Wait] waits for them) but none is spawned or dialled
	// before. A caller that must answer someone first (acpd's reply to
	// session/new) keeps the spawns from competing with that answer.
	// Close ends the hold: the held servers go down with ErrClosed.
	Hold <-chan struct{}
	// CallTimeout bounds a tool call whose server reports no progress;
	// ProgressCallTimeout bounds one that does (counted from the start of
	// the call). Zero means DefaultCallTimeout and DefaultProgressCallTimeout.
	CallTimeout, ProgressCallTimeout time.Duration
	// OnToolsChanged, if set, is called after [Manager.Tools] changed because
	// a server connected, sent notifications/tools/list_changed or went
	// down. It runs on a goroutine owned by the Manager and must return
	// promptly; it must not call [Manager.Close].
	OnToolsChanged func()
	// OnPromptsChanged, if set, is called after [Manager.Prompts] changed
	// because a server connected, sent notifications/prompts/list_changed or
	// went down. The same rules as for OnToolsChanged apply.
	OnPromptsChanged func()
	// Elicit, if set, answers a server's request for user input
	// (elicitation/create) on behalf of the named server; the Manager then
	// advertises the elicitation capability (form mode). Nil means servers
	// are told the client cannot elicit. It may be called concurrently, from
	// goroutines owned by the SDK; ctx ends when the server withdraws the
	// request, the connection ends or the Manager closes, and Elicit must
	// return promptly then. An error is reported to the server as a failed
	// request.
	Elicit func(ctx context.Context, server string, req ElicitRequest) (ElicitResult, error)
	// ElicitModes are the elicitation modes advertised with Elicit: "form"
	// and "url" (the editor can send the user to a page). Nil means form.
	ElicitModes []string
	// Sample, if set, serves a server's sampling/createMessage on behalf of
	// the named server (the caller asks the user and runs its model); the
	// Manager then advertises sampling. Nil means servers are told the
	// client cannot sample. The same rules as for Elicit apply.
	Sample func(ctx context.Context, server string, req SampleRequest) (SampleResult, error)
	// SampleTools advertises tool use in sampling (sampling.tools): Sample
	// then also serves requests that offer the model the server's tools
	// (SampleRequest.Tools) and answers with the model's calls. Without
	// it, a request with tools fails.
	SampleTools bool
	// Roots are directories offered to servers as roots besides Dir
	// ([Manager.SetRoots] changes them).
	Roots []string
	// OnResourceUpdated, if set, hears of notifications/resources/updated
	// for resources [Manager.Subscribe] subscribed to. The same rules as for
	// OnToolsChanged apply.
	OnResourceUpdated func(server, uri string)
	// Apps advertises the MCP Apps extension ([AppsExtension]) to servers:
	// set it only when the client can render MCP App views.
	Apps bool

	// restartBase replaces the first restart's delay (the package's tests
	// shorten it); zero means restartBase.
	restartBase time.Duration
}

// Tool is one tool a connected server offers.
type Tool struct {
	// Server is the Server.Name that offers the tool; Name is the server's own
	// name for it.
	Server, Name string
	// QualifiedName is "mcp__<server>__<tool>" with every character outside
	// [A-Za-z0-9_-] replaced by '_', at most 64 characters, and unique among
	// the Manager's tools. Names that collide or are too long end in '_'
	// and 8 hex digits derived from the server and tool names.
	QualifiedName string
	// Description is the server's description of the tool (may be empty).
	Description string
	// InputSchema is the tool's JSON Schema for its arguments.
	InputSchema json.RawMessage
	// Title is the tool's display title (its title, else
	// annotations.title); empty when the server gives none.
	Title string
	// ReadOnly reports the server's annotations.readOnlyHint; Destructive,
	// Idempotent and OpenWorld the other hints, with the specification's
	// defaults when absent (destructive and open-world true). They are
	// hints from the server, not guarantees.
	ReadOnly, Destructive, Idempotent, OpenWorld bool
	// Read reports that the tool claims to only read: readOnlyHint true and
	// neither destructiveHint nor openWorldHint explicitly true.
	Read bool
	// TrustHints is the server's Server.TrustAnnotations: the user lets its
	// hints decide permissions.
	TrustHints bool
	// OutputSchema is the tool's JSON Schema for structuredContent, if any.
	OutputSchema json.RawMessage
	// UIResourceURI is the ui:// resource of the tool's MCP App view
	// (_meta.ui.resourceUri, or the earlier _meta["ui/resourceUri"]);
	// empty when the tool has none.
	UIResourceURI string
	// Visibility is the tool's _meta.ui.visibility ("model", "app"); nil
	// means both. See [Tool.ForModel] and [Tool.ForApp].
	Visibility []string
}

// State is a configured server's health, as in [ServerStatus.State].
type State string

// Server states.
const (
	// StateStarting: the first connection attempt is under way.
	StateStarting State = "starting"
	// StateReady: connected; its tools are listed.
	StateReady State = "ready"
	// StateRestarting: the connection was lost; the server is restarted on
	// its next use and its tools stay listed meanwhile.
	StateRestarting State = "restarting"
	// StateDown: the server failed to start, or restarted too often; it
	// stays down for the Manager's lifetime.
	StateDown State = "down"
)

// ServerStatus is one configured server's state, for system prompts, the
// editor and `acpd mcp list`.
type ServerStatus struct {
	Name, Transport string
	State           State
	// ProtocolVersion is the negotiated revision of the latest connection
	// (empty before the first one).
	ProtocolVersion string
	// Era is how that connection was made: EraStateless (server/discover,
	// 2026-07-28), EraInitialize (the initialize handshake), or empty
	// before the first one.
	Era string
	// Tools is how many tools the server lists (kept while restarting).
	Tools int
	// Err says why the server is down or restarting (empty when ready). It
	// names no URL credentials.
	Err string
}

// Manager owns the MCP connections of one session. All methods are safe for
// concurrent use. Close must be called to end the connections and reap the
// stdio children.
type Manager struct {
	opts Options
	log  *slog.Logger
	eras *eraStore

	ctx    context.Context // canceled by Close; bounds background work
	cancel context.CancelFunc
	wg     sync.WaitGroup // Start calls and per-connection goroutines

	mu      sync.Mutex
	closed  bool
	names   map[string]bool // server names added
	servers []*srv          // in the order added
	changed chan struct{}   // closed and replaced whenever a server settles
	tools   []Tool
	lookup  map[string]toolRef
	// toolsGen counts the changes of tools (see ToolsGeneration); stale:
	// tools, lookup, prompts and skills are to be recomputed from the
	// servers (rebuildLocked, freshLocked).
	toolsGen uint64
	stale    bool

	prompts      []Prompt
	promptLookup map[string]toolRef
	roots        []string        // see SetRoots
	subscribed   map[string]bool // "server uri" subscribed to
	updated      []Resource      // subscribed resources that changed, not yet taken

	// skills are every server's skills; skillOwners their servers, at
	// the same index.
	skills      []Skill
	skillOwners []*srv
	// held are the entries of the skills loaded, by server and URI: their
	// files are read against these (see LoadSkill).
	held map[string]Skill

	progress progressTable
	views    viewCache
}

type toolRef struct {
	s    *srv
	name string
}

// srv is one configured server and its current connection, if any. Fields
// after cfg are guarded by Manager.mu.
type srv struct {
	cfg Server

	state      State
	c          *conn // live connection, nil unless StateReady
	tools      []*mcp.Tool
	defs       []Tool // tools converted (toolDefs), without qualified names
	prompts    []*mcp.Prompt
	skills     []Skill
	version    string
	err        error
	restarts   []time.Time   // restart attempts within restartWindow
	connecting chan struct{} // non-nil while a connection attempt runs; closed when it ends
}

// conn is one live server connection.
type conn struct {
	server  Server
	client  *mcp.Client
	session *mcp.ClientSession
	closeFn func() error // closes the session and releases transport resources
	proc    *stdioProc   // the stdio child, nil for HTTP

	refresh        chan struct{} // capacity 1: a pending refresh; further signals coalesce
	refreshPrompts chan struct{} // likewise for prompts
	done           chan struct{} // closed when the session has ended

	// tools, prompts and skills are the lists fetched while connecting;
	// defs are the tools converted.
	tools   []*mcp.Tool
	defs    []Tool
	prompts []*mcp.Prompt
	skills  []Skill
}

// NewManager returns a Manager with no connections.
func NewManager(opts Options) *Manager {
	if opts.ClientName == "" {
		opts.ClientName = "acpd"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	if opts.restartBase <= 0 {
		opts.restartBase = restartBase
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.ProgressCallTimeout <= 0 {
		opts.ProgressCallTimeout = DefaultProgressCallTimeout
	}
	l := opts.Logger
	if l == nil {
		l = slog.Default()
	}
	eras := &eraStore{}
	if opts.StateDir != "" {
		eras.path = filepath.Join(opts.StateDir, eraFile)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{
		opts:    opts,
		log:     l.With("component", "mcp"),
		eras:    eras,
		ctx:     ctx,
		cancel:  cancel,
		names:   map[string]bool{},
		lookup:  map[string]toolRef{},
		changed: make(chan struct{}),

		promptLookup: map[string]toolRef{},
		roots:        append([]string(nil), opts.Roots...),
		progress:     progressTable{calls: map[string]*callState{}},
	}
}

// Add starts connecting to servers in the background (once Options.Hold
// is closed, when set) and returns at once. Each connection attempt is bounded by Options.ConnectTimeout; a server
// that connects later joins [Manager.Tools] then (OnToolsChanged is
// called). The result holds one error per server that could not even be
// started (invalid, duplicate name, Manager closed); the others report
// through [Manager.Status]. Names must stay unique for the Manager's
// lifetime.
func (m *Manager) Add(servers []Server) []error {
	errs, added := m.add(servers)
	if hold := m.opts.Hold; hold != nil && len(added) > 0 {
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			select {
			case <-hold:
			case <-m.ctx.Done():
				m.mu.Lock()
				for _, s := range added {
					s.state, s.err = StateDown, ErrClosed
					m.settleLocked(s)
				}
				m.mu.Unlock()
				return
			}
			for _, s := range added {
				m.launch(m.ctx, s, m.connectTimeout(s))
			}
		}()
		return compact(errs)
	}
	for _, s := range added {
		m.launch(m.ctx, s, m.connectTimeout(s))
	}
	return compact(errs)
}

// Start connects to servers in parallel and lists their tools. It returns
// once every server is connected or has failed, or ctx is done (servers not
// connected by then fail). ctx bounds only the connecting: established
// connections live until Close. The result holds one error per server that
// failed (naming it); failed servers are skipped and never affect the
// others. A stdio server's error ends with the last bytes of its stderr,
// which is the server's own output. Start may be called more than once;
// names must stay unique for the Manager's lifetime.
func (m *Manager) Start(ctx context.Context, servers []Server) []error {
	errs, added := m.add(servers)
	if len(added) == 0 {
		return compact(errs)
	}
	m.wg.Add(1) // keeps Close waiting until this Start has settled
	defer m.wg.Done()
	ctx, stop := m.bound(ctx)
	defer stop()
	var wg sync.WaitGroup
	for _, s := range added {
		wg.Go(func() { m.attempt(ctx, s, 0) })
	}
	wg.Wait()
	m.mu.Lock()
	for i, s := range servers {
		if errs[i] != nil {
			continue
		}
		for _, a := range added {
			if a.cfg.Name == s.Name && a.state == StateDown {
				errs[i] = fmt.Errorf("mcp server %q: %w", s.Name, a.err)
			}
		}
	}
	m.mu.Unlock()
	return compact(errs)
}

// bound returns ctx that also ends when the Manager closes; stop releases
// it.
func (m *Manager) bound(ctx context.Context) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	unlink := context.AfterFunc(m.ctx, cancel)
	return ctx, func() { unlink(); cancel() }
}

// runHook runs a hook of Options (Elicit, Sample) for server under ctx,
// which also ends when m closes; a failure is logged and named as what's.
func runHook[Req, Res any](m *Manager, ctx context.Context, what, server string, hook func(context.Context, string, Req) (Res, error), req Req) (Res, error) {
	ctx, stop := m.bound(ctx)
	defer stop()
	res, err := hook(ctx, server, req)
	if err != nil {
		m.log.Debug(what+" failed", "server", server, "err", err)
		return res, fmt.Errorf("%s failed: %w", what, err)
	}
	return res, nil
}

// add validates servers and registers the valid ones (StateStarting, with
// a connection attempt pending). errs has one entry per server.
func (m *Manager) add(servers []Server) (errs []error, added []*srv) {
	m.mu.Lock()
	defer m.mu.Unlock()
	errs = make([]error, len(servers))
	for i, s := range servers {
		switch err := validate(s); {
		case m.closed:
			errs[i] = fmt.Errorf("mcp server %q: %w", s.Name, ErrClosed)
		case err != nil:
			errs[i] = fmt.Errorf("mcp server %q: %w", s.Name, err)
		case m.names[s.Name]:
			errs[i] = fmt.Errorf("mcp server %q: duplicate server name", s.Name)
		default:
			m.names[s.Name] = true
			x := &srv{cfg: s, state: StateStarting, connecting: make(chan struct{})}
			m.servers = append(m.servers, x)
			added = append(added, x)
		}
	}
	for _, err := range errs {
		if err != nil {
			m.log.Warn("server failed to start", "err", err)
		}
	}
	return errs, added
}

func compact(errs []error) []error {
	var out []error
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

func (m *Manager) connectTimeout(s *srv) time.Duration {
	if s.cfg.StartupTimeout > 0 {
		return s.cfg.StartupTimeout
	}
	return m.opts.ConnectTimeout
}

// launch runs one connection attempt of s in the background, after delay,
// bounded by timeout and m.ctx. s.connecting must be set.
func (m *Manager) launch(parent context.Context, s *srv, timeout time.Duration) {
	m.launchAfter(parent, s, timeout, 0)
}

func (m *Manager) launchAfter(parent context.Context, s *srv, timeout, delay time.Duration) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		ctx, cancel := deadline.WithTimeout(parent, timeout+delay)
		defer cancel()
		m.attempt(ctx, s, delay)
	}()
}

// attempt connects s (after delay) and records the outcome. s.connecting
// must be set; attempt closes it.
func (m *Manager) attempt(ctx context.Context, s *srv, delay time.Duration) {
	var c *conn
	var err error
	if delay > 0 {
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			err = context.Cause(ctx)
		}
		t.Stop()
	}
	if err == nil {
		c, err = m.connect(ctx, s.cfg)
	}
	if err != nil {
		err = scrub(err, s.cfg.URL)
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) && !errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer to the MCP handshake in time: %w", err)
		}
	}

	m.mu.Lock()
	if m.closed {
		s.state, s.err = StateDown, ErrClosed
		m.settleLocked(s)
		m.mu.Unlock()
		if c != nil {
			_ = c.closeFn() // connected, but Close came first
		}
		return
	}
	hadTools, hadPrompts := len(s.tools) > 0, len(s.prompts) > 0
	switch {
	case err == nil:
		s.state, s.c, s.err = StateReady, c, nil
		s.tools, s.defs, s.prompts, s.skills = c.tools, c.defs, c.prompts, c.skills
		s.version = c.session.InitializeResult().ProtocolVersion
		m.wg.Add(2)
		go m.watch(s, c)
		go m.refresher(s, c)
		m.log.Info("connected", "server", s.cfg.Name, "protocol", s.version, "tools", len(c.tools))
	case s.state == StateStarting:
		s.state, s.err = StateDown, err
		m.log.Warn("server failed to start", "server", s.cfg.Name, "err", err)
	default: // a restart failed; the next use tries again (or gives up)
		s.err = err
		m.log.Warn("restarting server failed", "server", s.cfg.Name, "err", err)
		if m.exhaustedLocked(s, time.Now()) {
			m.downLocked(s)
		}
	}
	m.settleLocked(s)
	// Only a server that has (or had) tools changes the tools, and
	// likewise for prompts: twenty servers without prompts connecting
	// announce no twenty unchanged command lists to the editor.
	hasTools, hasPrompts := len(s.tools) > 0, len(s.prompts) > 0
	m.rebuildLocked()
	m.mu.Unlock()
	if (err == nil && (hadTools || hasTools)) || hadTools != hasTools {
		m.notifyChanged()
	}
	if (err == nil && (hadPrompts || hasPrompts)) || hadPrompts != hasPrompts {
		m.notifyPromptsChanged()
	}
}

// settleLocked ends s's connection attempt and wakes waiters.
func (m *Manager) settleLocked(s *srv) {
	if s.connecting != nil {
		close(s.connecting)
		s.connecting = nil
	}
	close(m.changed)
	m.changed = make(chan struct{})
}

// exhaustedLocked prunes s's restart history and reports whether it used
// up its restarts.
func (m *Manager) exhaustedLocked(s *srv, now time.Time) bool {
	kept := s.restarts[:0]
	for _, t := range s.restarts {
		if now.Sub(t) < restartWindow {
			kept = append(kept, t)
		}
	}
	s.restarts = kept
	return len(kept) >= maxRestarts
}

// downLocked puts s down for good after too many restarts; its tools go.
func (m *Manager) downLocked(s *srv) {
	s.state = StateDown
	s.err = fmt.Errorf("stopped after %d restarts within %v; last error: %v", maxRestarts, restartWindow, s.err)
	s.tools, s.defs, s.prompts, s.skills = nil, nil, nil, nil
	m.log.Warn("server is down", "server", s.cfg.Name, "err", s.err)
}

// Wait waits until no server is in its first connection attempt, or grace
// has passed, or ctx is done, whichever comes first. A turn calls it
// before its first model request so that a slow server delays it by at
// most grace.
func (m *Manager) Wait(ctx context.Context, grace time.Duration) {
	t := time.NewTimer(grace)
	defer t.Stop()
	for {
		m.mu.Lock()
		ch := m.changed
		pending := false
		for _, s := range m.servers {
			pending = pending || s.state == StateStarting
		}
		m.mu.Unlock()
		if !pending {
			return
		}
		select {
		case <-ch:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		case <-m.ctx.Done():
			return
		}
	}
}

// Status reports every added server, in the order added.
func (m *Manager) Status() []ServerStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ServerStatus, 0, len(m.servers))
	for _, s := range m.servers {
		st := ServerStatus{Name: s.cfg.Name, Transport: transportOf(s.cfg), State: s.state, ProtocolVersion: s.version, Era: eraOf(s.version), Tools: len(s.tools)}
		if s.err != nil && s.state != StateReady {
			st.Err = s.err.Error()
		}
		out = append(out, st)
	}
	return out
}

// Tools returns a snapshot of every tool of every ready or restarting
// server, ordered by the order servers were added, then in the order the
// server lists them.
func (m *Manager) Tools() []Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.freshLocked()
	out := make([]Tool, len(m.tools))
	copy(out, m.tools)
	return out
}

// ToolsGeneration returns a number that changes whenever [Manager.Tools]
// may have changed, so that a caller can keep what it derives from the
// tools until then.
func (m *Manager) ToolsGeneration() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.toolsGen
}

// live returns s's connection, restarting the server first when it lost
// its connection (waiting within ctx), or an error when it is down.
func (m *Manager) live(ctx context.Context, s *srv) (*conn, error) {
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, ErrClosed
		}
		switch s.state {
		case StateReady:
			c := s.c
			m.mu.Unlock()
			return c, nil
		case StateDown:
			err := s.err
			m.mu.Unlock()
			return nil, fmt.Errorf("%w: %q: %v", ErrUnavailable, s.cfg.Name, err)
		case StateRestarting:
			if s.connecting == nil {
				now := time.Now()
				if m.exhaustedLocked(s, now) {
					m.downLocked(s)
					m.rebuildLocked()
					m.mu.Unlock()
					m.notifyChanged()
					m.notifyPromptsChanged()
					continue
				}
				delay := min(m.opts.restartBase<<len(s.restarts), maxBackoff)
				s.restarts = append(s.restarts, now)
				s.connecting = make(chan struct{})
				m.log.Info("restarting server", "server", s.cfg.Name, "delay", delay)
				m.launchAfter(m.ctx, s, m.connectTimeout(s), delay)
			}
		}
		ch := s.connecting
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// Call invokes the tool with the given qualified name. args must be a JSON
// object (empty or null means {}). Canceling ctx abandons the call and tells
// the server (notifications/cancelled). A tool that fails reports it in
// Result.IsError; protocol and connection failures are returned as errors.
// A server that lost its connection is restarted first (within the call's
// timeout).
func (m *Manager) Call(ctx context.Context, qualified string, args json.RawMessage) (Result, error) {
	return m.CallTool(ctx, qualified, args, CallOptions{})
}

// CallOptions adjust one [Manager.CallTool].
type CallOptions struct {
	// OnProgress, if set, receives the server's progress notifications for
	// this call, at most about ten per second (the last one is never
	// dropped when it reports completion). It runs on a goroutine of the
	// SDK and must return promptly.
	OnProgress func(Progress)
}

// Progress is one progress notification of a tool call.
type Progress struct {
	// Progress increases with every notification; Total is 0 when unknown.
	Progress, Total float64
	// Message is the server's description of the current step (may be empty).
	Message string
}

// CallTool is [Manager.Call] with options. The call fails with ErrTimeout
// after Options.CallTimeout, or Options.ProgressCallTimeout once the server
// reported progress.
func (m *Manager) CallTool(ctx context.Context, qualified string, args json.RawMessage, opts CallOptions) (Result, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return Result{}, ErrClosed
	}
	m.freshLocked()
	ref, ok := m.lookup[qualified]
	m.mu.Unlock()
	if !ok {
		return Result{}, fmt.Errorf("%w: %q", ErrUnknownTool, qualified)
	}
	params := &mcp.CallToolParams{Name: ref.name}
	trimmed := strings.TrimSpace(string(args))
	switch {
	case trimmed == "" || trimmed == "null":
		params.Arguments = map[string]any{}
	case trimmed[0] == '{' && json.Valid(args):
		params.Arguments = json.RawMessage(trimmed)
	default:
		return Result{}, errors.New("mcpclient: tool arguments must be a JSON object")
	}
	short, long := m.opts.CallTimeout, m.opts.ProgressCallTimeout
	if d := ref.s.cfg.ToolTimeout; d > 0 {
		short, long = d, d
	}
	ctx, cs := m.progress.begin(ctx, short, long, opts.OnProgress)
	defer m.progress.end(cs)
	params.SetProgressToken(cs.token)
	name := ref.s.cfg.Name
	c, err := m.live(ctx, ref.s)
	if err != nil {
		return Result{}, m.callErr(ctx, name, ref.name, err, nil)
	}
	if c.session.InitializeResult().ProtocolVersion >= ProtocolStateless {
		meta := params.GetMeta()
		if meta == nil {
			meta = map[string]any{}
		}
		//lint:ignore SA1019 MCP logging is deprecated by SEP-2577 but acpd serves it through the deprecation window
		meta[mcp.MetaKeyLogLevel] = string(m.mcpLevel())
		params.SetMeta(meta)
	}
	res, err := c.session.CallTool(ctx, params)
	if err != nil {
		return Result{}, m.callErr(ctx, name, ref.name, err, c)
	}
	return convertResult(res, m.outputSchema(ref))
}

// outputSchema returns the output schema of ref's tool, or nil.
func (m *Manager) outputSchema(ref toolRef) any {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range ref.s.tools {
		if t.Name == ref.name {
			return t.OutputSchema
		}
	}
	return nil
}

// callErr explains a failed call: timeouts and a server's exit are named.
func (m *Manager) callErr(ctx context.Context, server, tool string, err error, c *conn) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrTimeout) {
		err = cause
	} else if c != nil && c.proc != nil && ctx.Err() == nil {
		select {
		case <-c.done:
		case <-time.After(100 * time.Millisecond):
		}
		if r := c.proc.exitReason(); r != "" {
			err = fmt.Errorf("%w: server %s", err, r)
		}
	}
	if c != nil {
		return fmt.Errorf("mcp server %q: tool %q: %w", server, tool, scrub(err, c.server.URL))
	}
	return fmt.Errorf("mcp server %q: tool %q: %w", server, tool, err)
}

// Close ends every connection: sessions are closed, stdio servers get their
// stdin closed and are terminated if they do not exit, and are reaped. It
// waits for in-flight Start calls and the Manager's goroutines. Close is
// idempotent; it returns the first error closing a session reported.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	var conns []*conn
	for _, s := range m.servers {
		if s.c != nil {
			conns = append(conns, s.c)
			s.c = nil
		}
	}
	m.tools = nil
	m.toolsGen++
	m.stale = false
	m.lookup = map[string]toolRef{}
	m.prompts = nil
	m.promptLookup = map[string]toolRef{}
	m.mu.Unlock()

	m.cancel() // aborts connection attempts and pending refreshes
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() { errs[i] = c.closeFn() })
	}
	wg.Wait()
	m.wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("mcp server %q: close: %w", conns[i].server.Name, err)
		}
	}
	return nil
}

// watch waits for c's session to end. A session that ends before Close
// (the server exited or dropped the connection) leaves s restarting: its
// tools stay listed and its next use reconnects.
func (m *Manager) watch(s *srv, c *conn) {
	defer m.wg.Done()
	err := c.session.Wait()
	close(c.done)
	m.mu.Lock()
	if m.closed || s.c != c {
		m.mu.Unlock()
		return
	}
	s.c = nil
	s.state = StateRestarting
	reason := "the connection ended"
	if err != nil {
		reason += ": " + scrub(err, s.cfg.URL).Error()
	}
	_ = c.closeFn() // reap a stdio child and release HTTP connections
	if c.proc != nil && c.proc.exitedOnItsOwn() {
		reason = "the server " + c.proc.exitReason()
	}
	s.err = errors.New(reason + "; it is restarted on its next use")
	m.mu.Unlock()
	m.log.Warn("server disconnected", "server", s.cfg.Name, "reason", reason)
}

// refresher re-lists c's tools each time the server reports a change.
func (m *Manager) refresher(s *srv, c *conn) {
	defer m.wg.Done()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-c.done:
			return
		case <-c.refreshPrompts:
			m.refreshPromptList(s, c)
			continue
		case <-c.refresh:
		}
		ctx, cancel := context.WithTimeout(m.ctx, refreshTimeout)
		tools, err := m.listTools(ctx, c)
		cancel()
		if err != nil {
			m.log.Warn("refreshing tools failed", "server", c.server.Name, "err", err)
			continue
		}
		defs := toolDefs(c.server, tools)
		m.mu.Lock()
		if m.closed || s.c != c {
			m.mu.Unlock()
			return
		}
		s.tools, s.defs = tools, defs
		m.rebuildLocked()
		m.mu.Unlock()
		m.notifyChanged()
	}
}

func (m *Manager) notifyChanged() {
	if m.opts.OnToolsChanged != nil {
		m.opts.OnToolsChanged()
	}
}

// everyServers collects, in the servers' order, the items of each server
// (tools, prompts): each item, its key (the server's and the item's name)
// and its server, at the same index.
func everyServers[T any](servers []*srv, items func(*srv) []T, name func(T) string) (keys []toolKey, defs []T, owners []*srv) {
	for _, s := range servers {
		for _, x := range items(s) {
			keys = append(keys, toolKey{s.cfg.Name, name(x)})
			defs = append(defs, x)
			owners = append(owners, s)
		}
	}
	return keys, defs, owners
}

// rebuildLocked marks m.tools, m.lookup and the prompt and skill lists
// stale after a server's lists changed; freshLocked recomputes them when
// they are next read. Twenty servers connecting at once so rename every
// tool once, not once per server, and not under the lock each of them
// takes to settle.
func (m *Manager) rebuildLocked() {
	m.stale = true
	m.toolsGen++
}

// freshLocked recomputes the lists rebuildLocked marked stale: only the
// qualified names, which depend on every server's tools (each tool was
// converted once, when its server listed it: toolDefs), and the prompts
// and skills.
func (m *Manager) freshLocked() {
	if !m.stale {
		return
	}
	m.stale = false
	keys, defs, owners := everyServers(m.servers, func(s *srv) []Tool { return s.defs }, func(t Tool) string { return t.Name })
	names := qualifiedNames(keys)
	m.tools = make([]Tool, len(defs))
	m.lookup = make(map[string]toolRef, len(keys))
	for i, t := range defs {
		t.QualifiedName = names[i]
		m.tools[i] = t
		m.lookup[names[i]] = toolRef{s: owners[i], name: t.Name}
	}
	m.rebuildPromptsLocked()
	m.rebuildSkillsLocked()
}

// toolDefs converts the tools server s listed, without their qualified
// names (rebuildLocked gives them).
func toolDefs(s Server, tools []*mcp.Tool) []Tool {
	out := make([]Tool, 0, len(tools))
	for _, t := range tools {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || t.InputSchema == nil {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		tl := Tool{
			Server:      s.Name,
			Name:        t.Name,
			Title:       t.Title,
			Description: t.Description,
			InputSchema: schema,
			Destructive: true,
			OpenWorld:   true,
			TrustHints:  s.TrustAnnotations,
		}
		tl.UIResourceURI, tl.Visibility = toolUI(t.Meta)
		if a := t.Annotations; a != nil {
			tl.ReadOnly, tl.Idempotent = a.ReadOnlyHint, a.IdempotentHint
			tl.Read = a.ReadOnlyHint
			if a.DestructiveHint != nil {
				tl.Destructive = *a.DestructiveHint
				tl.Read = tl.Read && !*a.DestructiveHint
			}
			if a.OpenWorldHint != nil {
				tl.OpenWorld = *a.OpenWorldHint
				tl.Read = tl.Read && !*a.OpenWorldHint
			}
			if tl.Title == "" {
				tl.Title = a.Title
			}
		}
		if t.OutputSchema != nil {
			if b, err := json.Marshal(t.OutputSchema); err == nil {
				tl.OutputSchema = b
			}
		}
		out = append(out, tl)
	}
	return out
}

// connect opens one server's session and lists its tools, falling back to
// the initialize handshake for a stdio server that dies on server/discover.
func (m *Manager) connect(ctx context.Context, s Server) (*conn, error) {
	version := s.ProtocolVersion
	auto := version == ""
	if auto && transportOf(s) == TransportStdio && m.eras.legacy(s) {
		version = ProtocolLegacy
	}
	c, died, err := m.connectOnce(ctx, s, version)
	if err != nil && auto && version == "" && died && ctx.Err() == nil {
		m.log.Info("server closed the connection on server/discover; connecting again with initialize", "server", s.Name)
		var err2 error
		if c, _, err2 = m.connectOnce(ctx, s, ProtocolLegacy); err2 == nil {
			m.eras.rememberLegacy(s)
			return c, nil
		}
		return nil, fmt.Errorf("%w; with initialize: %w", err, err2)
	}
	return c, err
}

// connectOnce opens one session at the given protocol version ("" for the
// SDK's default). died reports that a stdio child exited during the
// handshake.
func (m *Manager) connectOnce(ctx context.Context, s Server, version string) (_ *conn, died bool, _ error) {
	c := &conn{
		server:         s,
		refresh:        make(chan struct{}, 1),
		refreshPrompts: make(chan struct{}, 1),
		done:           make(chan struct{}),
	}
	client := mcp.NewClient(
		&mcp.Implementation{Name: m.opts.ClientName, Version: m.opts.ClientVersion},
		&mcp.ClientOptions{
			Logger: m.log.With("server", s.Name),
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
				select {
				case c.refresh <- struct{}{}:
				default: // a refresh is already pending; it will see this change
				}
			},
			PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
				select {
				case c.refreshPrompts <- struct{}{}:
				default: // a refresh is already pending; it will see this change
				}
			},
			ElicitationHandler: m.elicitHandler(s.Name),
			ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
				if req.Params != nil {
					m.log.Debug("URL elicitation completed", "server", s.Name, "id", req.Params.ElicitationID)
				}
			},
			//lint:ignore SA1019 MCP sampling is deprecated by SEP-2577 but acpd serves it through the deprecation window
			CreateMessageWithToolsHandler: m.sampleHandler(s.Name),
			ProgressNotificationHandler:   m.progress.handle,
			//lint:ignore SA1019 MCP logging is deprecated by SEP-2577 but acpd serves it through the deprecation window
			LoggingMessageHandler: m.logHandler(s.Name),
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				if req.Params == nil {
					return
				}
				m.noteUpdated(s.Name, req.Params.URI)
				if f := m.opts.OnResourceUpdated; f != nil {
					f(s.Name, req.Params.URI)
				}
			},
			Capabilities: m.capabilities(),
		},
	)
	registerSkillMethods(client)
	c.client = client
	m.mu.Lock()
	roots := append([]string{m.opts.Dir}, m.roots...)
	m.mu.Unlock()
	//lint:ignore SA1019 MCP roots are deprecated by SEP-2577 but acpd serves them through the deprecation window
	client.AddRoots(rootURIs(roots)...)
	var sopts *mcp.ClientSessionOptions
	if version != "" {
		sopts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}

	tt := &trackingTransport{}
	var release func()
	switch transportOf(s) {
	case TransportStdio:
		cmd, tail, err := m.command(s)
		if err != nil {
			return nil, false, err
		}
		st := &stdioTransport{cmd: cmd, tail: tail, log: m.log.With("server", s.Name)}
		tt.inner = st
		session, rel, err := m.open(ctx, client, tt, sopts, func() {})
		if err != nil {
			if p := st.process(); p != nil && p.exitedOnItsOwn() {
				return nil, true, fmt.Errorf("%w (the server %s)", err, p.exitReason())
			}
			if t := tail.String(); t != "" {
				return nil, died, fmt.Errorf("%w (stderr: %s)", err, t)
			}
			return nil, died, err
		}
		c.session, release, c.proc = session, rel, st.process()
	default:
		hc, tr := httpClient(s.URL, s.Headers)
		if transportOf(s) == TransportSSE {
			tt.inner = &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: hc}
		} else {
			st := &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc}
			if s.OAuth != nil {
				// Tokens are DPoP-bound where the authorization server
				// supports it: the OAuth requests and the server's share
				// the key.
				h, rt, err := oauth.NewHandler(s.OAuth, hc.Transport)
				if err != nil {
					return nil, false, err
				}
				st.HTTPClient = &http.Client{Transport: rt}
				st.OAuthHandler = h
			}
			tt.inner = st
		}
		session, rel, err := m.open(ctx, client, tt, sopts, tr.CloseIdleConnections)
		if err != nil {
			return nil, false, err
		}
		c.session, release = session, rel
	}
	var once sync.Once
	var closeErr error
	c.closeFn = func() error {
		once.Do(func() {
			closeErr = c.session.Close()
			release()
		})
		return closeErr
	}
	//lint:ignore SA1019 MCP logging is deprecated by SEP-2577 but acpd serves it through the deprecation window
	if res := c.session.InitializeResult(); res.ProtocolVersion < ProtocolStateless && res.Capabilities != nil && res.Capabilities.Logging != nil {
		// Old servers log at the level set once; 2026-07-28 ones get it
		// with each call.
		//lint:ignore SA1019 MCP logging is deprecated by SEP-2577 but acpd serves it through the deprecation window
		if err := c.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: m.mcpLevel()}); err != nil {
			m.log.Debug("logging/setLevel failed", "server", s.Name, "err", scrub(err, s.URL))
		}
	}
	tools, err := m.listTools(ctx, c)
	if err != nil {
		_ = c.closeFn()
		return nil, false, fmt.Errorf("listing tools: %w", err)
	}
	c.tools, c.defs = tools, toolDefs(s, tools)
	// Prompts are optional: a server whose prompt list fails still offers
	// its tools.
	if c.prompts, err = m.listPrompts(ctx, c); err != nil {
		m.log.Warn("listing prompts failed", "server", s.Name, "err", scrub(err, s.URL))
	}
	// Skills too: listing them reads none of their files.
	if c.skills, err = m.listSkills(ctx, c); err != nil {
		m.log.Warn("listing skills failed", "server", s.Name, "err", scrub(err, s.URL))
	}
	return c, false, nil
}

// open runs the MCP handshake; on failure everything the transport started is
// closed and released. The transport connects under a context that ctx
// cancels only until the handshake is done (the SSE transport keeps its
// stream open for as long as that context lives); Close ends it through
// m.ctx, and release stops it too.
func (m *Manager) open(ctx context.Context, client *mcp.Client, tt *trackingTransport, sopts *mcp.ClientSessionOptions, release func()) (*mcp.ClientSession, func(), error) {
	connCtx, connCancel := context.WithCancel(m.ctx)
	unlink := context.AfterFunc(ctx, connCancel)
	tt.ctx = connCtx
	session, err := client.Connect(ctx, tt, sopts)
	if err == nil && !unlink() {
		_ = session.Close()
		err = context.Cause(ctx)
	}
	if err != nil {
		if tt.conn != nil {
			_ = tt.conn.Close()
		}
		connCancel()
		release()
		return nil, nil, err
	}
	return session, func() { connCancel(); release() }, nil
}

// listTools lists every tool of c's server, following pagination.
func (m *Manager) listTools(ctx context.Context, c *conn) ([]*mcp.Tool, error) {
	if caps := c.session.InitializeResult().Capabilities; caps == nil || caps.Tools == nil {
		return nil, nil
	}
	var tools []*mcp.Tool
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if len(tools) == maxToolsPerServer {
			m.log.Warn("server lists too many tools; ignoring the rest", "server", c.server.Name, "limit", maxToolsPerServer)
			break
		}
		if t != nil && t.Name != "" {
			tools = append(tools, t)
		}
	}
	return tools, nil
}

// command builds the child process for a stdio server. The returned buffer
// keeps the tail of its stderr.
func (m *Manager) command(s Server) (*exec.Cmd, *tailbuf.Buffer, error) {
	env := make([]string, 0, len(m.opts.BaseEnv)+len(s.Env))
	env = append(env, m.opts.BaseEnv...)
	env = append(env, s.Env...) // exec keeps the last value of a duplicated name
	path := s.Command
	if !strings.ContainsRune(s.Command, filepath.Separator) && !strings.ContainsRune(s.Command, '/') {
		p, err := childenv.LookPath(s.Command, envValue(env, "PATH"))
		if err != nil {
			return nil, nil, fmt.Errorf("command %q not found in the server's PATH", s.Command)
		}
		path = p
	}
	cmd := exec.Command(path, s.Args...)
	cmd.Args[0] = s.Command
	cmd.Env = env
	cmd.Dir = m.opts.Dir
	tail := tailbuf.New(stderrTail)
	cmd.Stderr = tail
	// Bound how long Wait waits for stderr after the child exits, in case a
	// grandchild keeps it open.
	cmd.WaitDelay = terminateGrace
	return cmd, tail, nil
}

// trackingTransport connects its inner transport under a context of its own
// and remembers the connection, so a failed handshake can close it (stopping
// a stdio child) whatever the SDK did.
type trackingTransport struct {
	inner mcp.Transport
	ctx   context.Context // the connection's lifetime, used instead of Connect's
	conn  mcp.Connection
}

func (t *trackingTransport) Connect(context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(t.ctx)
	t.conn = c
	return c, err
}

func transportOf(s Server) string {
	if s.Transport == "" && s.Command != "" {
		return TransportStdio
	}
	return s.Transport
}

// validate checks a Server before anything is started.
func validate(s Server) error {
	if s.Name == "" {
		return errors.New("empty server name")
	}
	switch transportOf(s) {
	case TransportStdio:
		if s.Command == "" {
			return errors.New("stdio server without a command")
		}
		for _, kv := range s.Env {
			name, _, ok := strings.Cut(kv, "=")
			if !ok || name == "" {
				return errors.New("environment entries must be NAME=value")
			}
		}
	case TransportHTTP, TransportSSE:
		u, err := url.Parse(s.URL)
		if err != nil {
			return errors.New("invalid URL")
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New("URL must be an absolute http or https URL")
		}
		for k, v := range s.Headers {
			if k == "" || strings.ContainsAny(k, "\r\n: \t") || strings.ContainsAny(v, "\r\n") {
				return errors.New("invalid HTTP header")
			}
		}
	default:
		return fmt.Errorf("unsupported transport %q", s.Transport)
	}
	return nil
}

// httpClient returns a client that adds headers to every request to
// endpoint's origin (scheme, host and port) — never to another origin a
// redirect or an SSE endpoint event points to — and owns its connection
// pool (closed by the caller with CloseIdleConnections).
func httpClient(endpoint string, headers map[string]string) (*http.Client, *http.Transport) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	h := make(http.Header, len(headers))
	for k, v := range headers {
		h.Set(k, v)
	}
	ht := &headerTransport{base: tr, headers: h}
	if u, err := url.Parse(endpoint); err == nil {
		ht.origin = origin.Of(u)
	}
	return &http.Client{Transport: ht}, tr
}

type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
	origin  string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 && t.origin != "" && origin.Of(req.URL) == t.origin {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header[k] = v
		}
	}
	return t.base.RoundTrip(req)
}

// envValue returns the last value of name in env.
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}
