// Package mcpclient connects acpd to the MCP (Model Context Protocol) servers
// an editor names in session/new and offers their tools to the model.
//
// It is built on the official MCP Go SDK (github.com/modelcontextprotocol/go-sdk),
// which implements the stdio, streamable HTTP and SSE transports, the
// initialize/discover lifecycle, request cancellation and protocol version
// negotiation. This package adds what a coding agent needs on top: launching
// stdio servers with a controlled environment, per-server HTTP headers,
// model-safe unique tool names, tracking tools/list_changed, and owning every
// connection and child process until [Manager.Close]. It also exposes the
// servers' prompts (as slash-command-friendly names, tracking
// prompts/list_changed) and resources, bounded for a model's context.
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

	"github.com/charmbracelet/log"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Transport names accepted in [Server.Transport].
const (
	TransportStdio = "stdio" // a child process speaking newline-delimited JSON-RPC on stdin/stdout
	TransportHTTP  = "http"  // MCP streamable HTTP
	TransportSSE   = "sse"   // the legacy HTTP+SSE transport (protocol 2024-11-05)
)

// Limits applied to what servers send.
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
)

// ErrClosed is returned (wrapped) by [Manager.Start] and [Manager.Call]
// after [Manager.Close].
var ErrClosed = errors.New("mcpclient: manager closed")

// ErrUnknownTool is returned (wrapped) by [Manager.Call] for a qualified name
// that [Manager.Tools] does not currently list.
var ErrUnknownTool = errors.New("mcpclient: unknown tool")

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
	// Headers are sent with every HTTP request to an http or sse server.
	Headers map[string]string
	// Transport is TransportStdio, TransportHTTP or TransportSSE. Empty means
	// stdio when Command is set.
	Transport string
}

// Options configure a [Manager].
type Options struct {
	// ClientName and ClientVersion are sent to servers as clientInfo.
	// Empty ClientName means "acpd"; empty ClientVersion means "dev".
	ClientName, ClientVersion string
	// Logger receives diagnostics (never tool arguments, results, headers or
	// environment values). Nil means log.Default().
	Logger *log.Logger
	// BaseEnv is the environment stdio servers start from, as NAME=value
	// entries. The caller filters secrets out of it; nil means an empty
	// environment (the process environment is never inherited implicitly).
	BaseEnv []string
	// Dir is the working directory of stdio servers and, when non-empty, is
	// offered to servers as the client's single root (file:// URI).
	Dir string
	// OnToolsChanged, if set, is called after [Manager.Tools] changed because
	// a server sent notifications/tools/list_changed or disconnected. It runs
	// on a goroutine owned by the Manager and must return promptly; it must
	// not call [Manager.Close].
	OnToolsChanged func()
	// OnPromptsChanged, if set, is called after [Manager.Prompts] changed
	// because a server sent notifications/prompts/list_changed or
	// disconnected. The same rules as for OnToolsChanged apply.
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
	// ReadOnly reports the server's annotations.readOnlyHint. It is a hint
	// from the server, not a guarantee.
	ReadOnly bool
}

// Result is the outcome of a tool call.
type Result struct {
	// Text joins the text content blocks with newlines; images, audio and
	// resources appear as one-line summaries, embedded text resources in full.
	// It is not truncated.
	Text string
	// IsError reports that the tool itself failed (the model should see Text).
	IsError bool
	// Structured is the result's structuredContent, if any.
	Structured json.RawMessage
}

// Manager owns the MCP connections of one session. All methods are safe for
// concurrent use. Close must be called to end the connections and reap the
// stdio children.
type Manager struct {
	opts Options
	log  *log.Logger

	ctx    context.Context // canceled by Close; bounds background work
	cancel context.CancelFunc
	wg     sync.WaitGroup // Start calls and per-connection goroutines

	mu     sync.Mutex
	closed bool
	names  map[string]bool // server names started or starting
	conns  []*conn         // connected servers, in start order
	tools  []Tool
	lookup map[string]toolRef

	prompts      []Prompt
	promptLookup map[string]toolRef
}

type toolRef struct {
	c    *conn
	name string
}

// conn is one live server connection.
type conn struct {
	server  Server
	session *mcp.ClientSession
	closeFn func() error // closes the session and releases transport resources

	refresh        chan struct{} // capacity 1: a pending refresh; further signals coalesce
	refreshPrompts chan struct{} // likewise for prompts
	done           chan struct{} // closed when the session has ended

	// tools and prompts are guarded by Manager.mu.
	tools   []*mcp.Tool
	prompts []*mcp.Prompt
}

// NewManager returns a Manager with no connections.
func NewManager(opts Options) *Manager {
	if opts.ClientName == "" {
		opts.ClientName = "acpd"
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	l := opts.Logger
	if l == nil {
		l = log.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{
		opts:   opts,
		log:    l.WithPrefix("mcp"),
		ctx:    ctx,
		cancel: cancel,
		names:  map[string]bool{},
		lookup: map[string]toolRef{},

		promptLookup: map[string]toolRef{},
	}
}

// Start connects to servers in parallel and lists their tools. It returns
// once every server is connected or has failed, or ctx is done (servers not
// connected by then fail). ctx bounds only the connecting: established
// connections live until Close. The result holds one error per server that
// failed (naming it); failed servers are skipped and never affect the
// others. A stdio server's error ends with the last bytes of its stderr,
// which is the server's own output. Start may be called more than once;
// names must stay unique for the Manager's lifetime (also after a server
// disconnects).
func (m *Manager) Start(ctx context.Context, servers []Server) []error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		errs := make([]error, 0, len(servers))
		for _, s := range servers {
			errs = append(errs, fmt.Errorf("mcp server %q: %w", s.Name, ErrClosed))
		}
		return errs
	}
	errs := make([]error, len(servers))
	var todo []int
	for i, s := range servers {
		if err := validate(s); err != nil {
			errs[i] = fmt.Errorf("mcp server %q: %w", s.Name, err)
			continue
		}
		if m.names[s.Name] {
			errs[i] = fmt.Errorf("mcp server %q: duplicate server name", s.Name)
			continue
		}
		m.names[s.Name] = true
		todo = append(todo, i)
	}
	m.wg.Add(1) // keeps Close waiting until this Start has settled
	m.mu.Unlock()
	defer m.wg.Done()

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	unlink := context.AfterFunc(m.ctx, stop)
	defer unlink()

	results := make([]*conn, len(servers))
	var wg sync.WaitGroup
	for _, i := range todo {
		wg.Go(func() {
			c, err := m.connect(ctx, servers[i])
			if err != nil {
				errs[i] = fmt.Errorf("mcp server %q: %w", servers[i].Name, scrub(err, servers[i].URL))
				return
			}
			results[i] = c
		})
	}
	wg.Wait()

	var late []*conn // connected, but Close came first
	defer func() {
		for _, c := range late {
			_ = c.closeFn()
		}
	}()
	m.mu.Lock()
	for _, i := range todo {
		c := results[i]
		if c == nil {
			delete(m.names, servers[i].Name)
			continue
		}
		if m.closed {
			errs[i] = fmt.Errorf("mcp server %q: %w", servers[i].Name, ErrClosed)
			late = append(late, c)
			continue
		}
		m.conns = append(m.conns, c)
		m.wg.Add(2)
		go m.watch(c)
		go m.refresher(c)
		m.log.Info("connected", "server", c.server.Name, "tools", len(c.tools))
	}
	m.rebuildLocked()
	m.mu.Unlock()

	var out []error
	for _, err := range errs {
		if err != nil {
			m.log.Warn("server failed to start", "err", err)
			out = append(out, err)
		}
	}
	return out
}

// Tools returns a snapshot of every tool of every connected server, ordered
// by server start order, then in the order the server lists them.
func (m *Manager) Tools() []Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Tool, len(m.tools))
	copy(out, m.tools)
	return out
}

// Call invokes the tool with the given qualified name. args must be a JSON
// object (empty or null means {}). Canceling ctx abandons the call and tells
// the server (notifications/cancelled). A tool that fails reports it in
// Result.IsError; protocol and connection failures are returned as errors.
func (m *Manager) Call(ctx context.Context, qualified string, args json.RawMessage) (Result, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return Result{}, ErrClosed
	}
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
	res, err := ref.c.session.CallTool(ctx, params)
	if err != nil {
		return Result{}, fmt.Errorf("mcp server %q: tool %q: %w", ref.c.server.Name, ref.name, scrub(err, ref.c.server.URL))
	}
	return convertResult(res)
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
	conns := m.conns
	m.conns = nil
	m.tools = nil
	m.lookup = map[string]toolRef{}
	m.prompts = nil
	m.promptLookup = map[string]toolRef{}
	m.mu.Unlock()

	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() { errs[i] = c.closeFn() })
	}
	wg.Wait()
	m.cancel() // aborts connecting Start calls and pending refreshes
	m.wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("mcp server %q: close: %w", conns[i].server.Name, err)
		}
	}
	return nil
}

// watch waits for c's session to end. A session that ends before Close
// (the server exited or dropped the connection) loses its tools.
func (m *Manager) watch(c *conn) {
	defer m.wg.Done()
	err := c.session.Wait()
	close(c.done)
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	for i, x := range m.conns {
		if x == c {
			m.conns = append(m.conns[:i:i], m.conns[i+1:]...)
			break
		}
	}
	// The name stays reserved: the server is gone for this session.
	m.rebuildLocked()
	m.mu.Unlock()
	_ = c.closeFn() // reap a stdio child and release HTTP connections
	m.log.Warn("server disconnected", "server", c.server.Name, "err", err)
	m.notifyChanged()
	m.notifyPromptsChanged()
}

// refresher re-lists c's tools each time the server reports a change.
func (m *Manager) refresher(c *conn) {
	defer m.wg.Done()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-c.done:
			return
		case <-c.refreshPrompts:
			m.refreshPromptList(c)
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
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return
		}
		c.tools = tools
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

// rebuildLocked recomputes m.tools and m.lookup from m.conns.
func (m *Manager) rebuildLocked() {
	var keys []toolKey
	var defs []*mcp.Tool
	var owners []*conn
	for _, c := range m.conns {
		for _, t := range c.tools {
			keys = append(keys, toolKey{c.server.Name, t.Name})
			defs = append(defs, t)
			owners = append(owners, c)
		}
	}
	names := qualifiedNames(keys)
	m.tools = make([]Tool, 0, len(keys))
	m.lookup = make(map[string]toolRef, len(keys))
	for i, t := range defs {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || t.InputSchema == nil {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		ro := t.Annotations != nil && t.Annotations.ReadOnlyHint
		m.tools = append(m.tools, Tool{
			Server:        keys[i].server,
			Name:          t.Name,
			QualifiedName: names[i],
			Description:   t.Description,
			InputSchema:   schema,
			ReadOnly:      ro,
		})
		m.lookup[names[i]] = toolRef{c: owners[i], name: t.Name}
	}
	m.rebuildPromptsLocked()
}

// connect opens one server's session and lists its tools.
func (m *Manager) connect(ctx context.Context, s Server) (*conn, error) {
	c := &conn{
		server:         s,
		refresh:        make(chan struct{}, 1),
		refreshPrompts: make(chan struct{}, 1),
		done:           make(chan struct{}),
	}
	client := mcp.NewClient(
		&mcp.Implementation{Name: m.opts.ClientName, Version: m.opts.ClientVersion},
		&mcp.ClientOptions{
			Logger: slog.New(m.log.With("server", s.Name)),
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
		},
	)
	if m.opts.Dir != "" {
		client.AddRoots(&mcp.Root{URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(m.opts.Dir)}).String()})
	}

	tt := &trackingTransport{}
	var release func()
	switch transportOf(s) {
	case TransportStdio:
		cmd, tail, err := m.command(s)
		if err != nil {
			return nil, err
		}
		tt.inner = &mcp.CommandTransport{Command: cmd, TerminateDuration: terminateGrace}
		session, rel, err := m.open(ctx, client, tt, func() { killGroup(cmd) })
		if err != nil {
			if t := tail.String(); t != "" {
				return nil, fmt.Errorf("%w (stderr: %s)", err, t)
			}
			return nil, err
		}
		c.session, release = session, rel
	default:
		hc, tr := httpClient(s.Headers)
		if transportOf(s) == TransportSSE {
			tt.inner = &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: hc}
		} else {
			tt.inner = &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc}
		}
		session, rel, err := m.open(ctx, client, tt, tr.CloseIdleConnections)
		if err != nil {
			return nil, err
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
	tools, err := m.listTools(ctx, c)
	if err != nil {
		_ = c.closeFn()
		return nil, fmt.Errorf("listing tools: %w", err)
	}
	c.tools = tools
	// Prompts are optional: a server whose prompt list fails still offers
	// its tools.
	if c.prompts, err = m.listPrompts(ctx, c); err != nil {
		m.log.Warn("listing prompts failed", "server", s.Name, "err", scrub(err, s.URL))
	}
	return c, nil
}

// open runs the MCP handshake; on failure everything the transport started is
// closed and released. The transport connects under a context that ctx
// cancels only until the handshake is done (the SSE transport keeps its
// stream open for as long as that context lives); Close ends it through
// m.ctx, and release stops it too.
func (m *Manager) open(ctx context.Context, client *mcp.Client, tt *trackingTransport, release func()) (*mcp.ClientSession, func(), error) {
	connCtx, connCancel := context.WithCancel(m.ctx)
	unlink := context.AfterFunc(ctx, connCancel)
	tt.ctx = connCtx
	session, err := client.Connect(ctx, tt, nil)
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
func (m *Manager) command(s Server) (*exec.Cmd, *tailBuffer, error) {
	env := make([]string, 0, len(m.opts.BaseEnv)+len(s.Env))
	env = append(env, m.opts.BaseEnv...)
	env = append(env, s.Env...) // exec keeps the last value of a duplicated name
	path := s.Command
	if !strings.ContainsRune(s.Command, filepath.Separator) && !strings.ContainsRune(s.Command, '/') {
		p, err := lookPath(s.Command, envValue(env, "PATH"))
		if err != nil {
			return nil, nil, err
		}
		path = p
	}
	cmd := exec.Command(path, s.Args...)
	cmd.Args[0] = s.Command
	cmd.Env = env
	cmd.Dir = m.opts.Dir
	tail := &tailBuffer{max: stderrTail}
	cmd.Stderr = tail
	// Bound how long Wait waits for stderr after the child exits, in case a
	// grandchild keeps it open.
	cmd.WaitDelay = terminateGrace
	setGroup(cmd)
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

// httpClient returns a client that adds headers to every request and owns
// its connection pool (closed by the caller with CloseIdleConnections).
func httpClient(headers map[string]string) (*http.Client, *http.Transport) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	h := make(http.Header, len(headers))
	for k, v := range headers {
		h.Set(k, v)
	}
	return &http.Client{Transport: &headerTransport{base: tr, headers: h}}, tr
}

type headerTransport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
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

// lookPath finds an executable named file in the absolute directories of
// pathList. Relative entries (including "" and ".") are skipped so a
// project's own directory cannot shadow a command.
func lookPath(file, pathList string) (string, error) {
	for _, dir := range filepath.SplitList(pathList) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, file)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("command %q not found in the server's PATH", file)
}

// tailBuffer is an io.Writer keeping the last max bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if len(p) >= b.max {
		p = p[len(p)-b.max:]
		b.buf = append(b.buf[:0], p...)
		return n, nil
	}
	if over := len(b.buf) + len(p) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.buf = append(b.buf, p...)
	return n, nil
}

// String returns the kept bytes with surrounding space trimmed.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(strings.ToValidUTF8(string(b.buf), "\uFFFD"))
}
