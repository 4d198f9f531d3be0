package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/agent/internal/mcpbridge"
	"acpd/config"
	"acpd/mcpclient/oauth"
	"acpd/model"
	"acpd/permissions"
	"acpd/session"
	"acpd/terminal"
	"acpd/tools"
	"acpd/tools/task"
)

// Resolver turns a "provider/model" reference into a backend and what is
// known about the model. It returns an error wrapping [ErrNoModel] when no
// provider is configured or reachable.
type Resolver func(ref string) (model.Backend, model.ModelInfo, error)

// ErrNoModel means no model backend is available; prompts then fail with
// ACP's auth-required error.
var ErrNoModel = errors.New("no model configured")

// Options configure an [Agent].
type Options struct {
	// Name and Version are reported as agentInfo.
	Name, Version string
	// Config loads per-project configuration for each session's cwd.
	Config *config.Loader
	// Store keeps sessions; required.
	Store *session.Store
	// Resolve finds model backends; required.
	Resolve Resolver
	// DefaultModel picks the model of sessions whose configuration names
	// none (from API keys present or a local server); nil leaves them
	// without a model. Called once, lazily.
	DefaultModel func(ctx context.Context) (string, error)
	// Models lists the models offered in the "model" config option, as
	// provider/model references (the session's current model is always
	// offered); nil offers only the current one. Called once, lazily.
	Models func(ctx context.Context) []string
	// Reload re-reads credentials from the environment and stored keys
	// (ACP authenticate); nil means nothing to reload.
	Reload func()
	// Logout deletes stored API keys (ACP logout); nil means acpd stores
	// none and logout is not offered.
	Logout func() error
	// Describe tells what is known of a provider/model reference (its
	// human name, context window, prices) without building a backend, for
	// the model selector; nil shows the references as they are.
	Describe func(ref string) (model.ModelInfo, bool)
	// CredentialsStamp is a cheap fingerprint of the stored keys (the
	// credentials file's modification time and size). When it changes
	// (`acpd login` ran in another process, as Zed's terminal auth does),
	// the agent reloads them on the next session/new, load, resume or
	// prompt without a model. Nil disables the check.
	CredentialsStamp func() string
	// Permissions keeps remembered permission choices; nil disables
	// remembering.
	Permissions *permissions.Store
	// Protected are directories whose contents always need permission
	// (acpd's configuration and state).
	Protected []string
	// Outputs is the directory under which each session keeps the whole
	// outputs of its commands (run_command's saved files), in a private
	// directory of its own removed with the session
	// (config.OutputsDir); it is hidden from sandboxed commands. "" uses
	// the temp directory, which sandboxed commands can read.
	Outputs string
	// MCPTokens, if set, holds the OAuth tokens of MCP servers (`acpd mcp
	// login`); HTTP servers without an Authorization header use them.
	MCPTokens *oauth.TokenStore
	// Env is the environment commands start from, already filtered of
	// secrets; nil means terminal.FilterEnv(os.Environ(), nil).
	Env []string
	// Getenv reads acpd's own environment (HOME, XDG_CONFIG_HOME,
	// CODEX_HOME: where custom commands live); nil means os.Getenv.
	Getenv func(string) string
	// Logger receives diagnostics; nil discards.
	Logger *slog.Logger
	// MaxLineBytes caps one inbound protocol message (0 = acp default).
	MaxLineBytes int
}

// Agent serves ACP for one client connection.
type Agent struct {
	opts Options
	log  *slog.Logger
	conn *jsonrpc.Conn
	// terms owns the local PTY terminals of every session.
	terms *terminal.Manager
	// builtin are the built-in tools by name; toolKinds their kinds, for
	// the permission rules.
	builtin   map[string]*tools.Tool
	toolKinds map[string]acp.ToolKind

	mu          sync.Mutex
	clientCaps  acp.ClientCapabilities
	clientInfo  *acp.Implementation
	groups      atomic.Bool // the client renders grouped select options (Zed)
	getenv      func(string) string
	sessions    map[acp.SessionID]*sess
	closed      bool
	sessionsWG  sync.WaitGroup
	baseCtx     context.Context
	cancelAll   context.CancelFunc
	initialized bool

	// modelList and defaultRef are computed on first use (sync.OnceValue);
	// authenticate replaces them with fresh ones, never resetting them: a
	// computation in flight (which may take seconds, probing for servers)
	// finishes on its own. The funcs are guarded by mu.
	modelList  func() []string
	defaultRef func() string
	// credStamp is the last CredentialsStamp seen.
	credStamp string
}

// once returns *p, creating it from compute, under a.mu.
func once[T any](a *Agent, p *func() T, compute func() T) func() T {
	a.mu.Lock()
	defer a.mu.Unlock()
	if *p == nil {
		*p = sync.OnceValue(compute)
	}
	return *p
}

// offeredModels returns Options.Models, computed once (until authenticate).
func (a *Agent) offeredModels() []string {
	return once(a, &a.modelList, func() []string {
		if a.opts.Models == nil {
			return nil
		}
		return a.opts.Models(a.baseContext())
	})()
}

// fallbackModel returns Options.DefaultModel's answer, computed once
// (until authenticate).
func (a *Agent) fallbackModel() string {
	return once(a, &a.defaultRef, func() string {
		if a.opts.DefaultModel == nil {
			return ""
		}
		ref, err := a.opts.DefaultModel(a.baseContext())
		if err != nil {
			// Not news at Info: a session without a model says what to
			// configure in its model selector and its first answer, and
			// authenticate warns.
			a.log.Debug("no default model", "err", err)
			return ""
		}
		return ref
	})()
}

// reload re-reads the environment and the stored keys (Options.Reload)
// and forgets the default model and the model list, so that both are
// computed again.
func (a *Agent) reload() {
	if a.opts.Reload != nil {
		a.opts.Reload()
	}
	a.mu.Lock()
	a.defaultRef, a.modelList = nil, nil
	a.mu.Unlock()
}

// refreshCredentials reloads the stored keys when their stamp changed and
// then offers every open session the models found since (a
// config_option_update). It reports whether they changed.
func (a *Agent) refreshCredentials(ctx context.Context) bool {
	if a.opts.CredentialsStamp == nil {
		return false
	}
	st := a.opts.CredentialsStamp()
	a.mu.Lock()
	changed := st != a.credStamp
	a.credStamp = st
	a.mu.Unlock()
	if !changed {
		return false
	}
	a.log.Info("stored credentials changed; reloading them")
	a.reload()
	a.mu.Lock()
	open := make([]*sess, 0, len(a.sessions))
	for _, s := range a.sessions {
		open = append(open, s)
	}
	a.mu.Unlock()
	for _, s := range open {
		if s.settings().Model == "" {
			s.adoptDefaultModel()
		}
		s.announce(ctx, false)
	}
	return true
}

// adoptDefaultModel gives a session without a model the default model, if
// there is one now, and reports whether it did.
func (s *sess) adoptDefaultModel() bool {
	ref := s.a.fallbackModel()
	if ref == "" {
		return false
	}
	s.update(func(st *settings) {
		if st.Model == "" {
			st.Model = ref
		}
	})
	return true
}

// New returns an Agent. It does nothing until [Agent.Serve].
func New(o Options) *Agent {
	if o.Name == "" {
		o.Name = "acpd"
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	a := &Agent{opts: o, log: lg, getenv: o.Getenv, sessions: map[acp.SessionID]*sess{}, terms: terminal.NewManager(terminal.ManagerOptions{Logger: lg}),
		builtin: map[string]*tools.Tool{}, toolKinds: map[string]acp.ToolKind{}}
	if a.getenv == nil {
		a.getenv = os.Getenv
	}
	if o.CredentialsStamp != nil {
		a.credStamp = o.CredentialsStamp()
	}
	for _, t := range tools.Builtin(tools.Options{Protected: o.Protected, Logger: lg}) {
		a.builtin[t.Def.Name] = t
		a.toolKinds[t.Def.Name] = t.Kind
	}
	task := task.Tool() // the read-only sub-agent needs the session's model
	a.builtin[task.Def.Name], a.toolKinds[task.Def.Name] = task, task.Kind
	return a
}

// Serve speaks ACP on r/w until r reaches EOF or ctx ends, then closes every
// open session (cancelling their turns and releasing their locks) and
// returns. At EOF, requests still running are cancelled and get up to
// inputEndGrace to write their replies; a peer that stopped reading cannot
// hold Serve longer. w is closed on return. Serve may be called once.
func (a *Agent) Serve(ctx context.Context, r io.Reader, w io.WriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a.mu.Lock()
	a.baseCtx, a.cancelAll = ctx, cancel
	a.mu.Unlock()
	in := &inputWatch{r: r, ended: make(chan struct{})}
	conn := jsonrpc.NewConn(ctx, in, w, withFork(a.withSteering(mcpbridge.WithApps(acp.AgentHandler(handlers{a}), a.bridge)), a), jsonrpc.Options{
		MaxLineBytes: a.opts.MaxLineBytes,
		Logger:       a.log,
		Immediate:    func(method string) bool { return method == acp.AgentMethodSessionCancel },
	})
	a.mu.Lock()
	a.conn = conn
	a.mu.Unlock()
	select {
	case <-conn.Done():
	case <-ctx.Done():
	case <-in.ended:
		// The connection cancels every request; Done follows once their
		// replies are written. Writes to a peer that also stopped reading
		// block until Close, so wait only so long.
		grace := time.NewTimer(inputEndGrace)
		select {
		case <-conn.Done():
		case <-ctx.Done():
		case <-grace.C:
			a.log.Warn("the client closed its end but does not read replies; closing the connection")
		}
		grace.Stop()
	}
	// Close before closing the sessions: it unblocks writes stuck on a peer
	// that stopped reading and waits for every handler, so no session close
	// waits for a turn that cannot finish.
	err := conn.Close()
	a.shutdown()
	a.sessionsWG.Wait()
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	return err
}

// inputEndGrace bounds how long Serve lets running requests finish and
// reply after its input ended.
const inputEndGrace = 5 * time.Second

// inputWatch passes reads through and closes ended when its reader reports
// EOF or an error. Close closes the reader if it is an io.Closer (the
// connection closes its reader on Close).
type inputWatch struct {
	r     io.Reader
	once  sync.Once
	ended chan struct{}
}

func (w *inputWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if err != nil {
		w.once.Do(func() { close(w.ended) })
	}
	return n, err
}

func (w *inputWatch) Close() error {
	if c, ok := w.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// shutdown closes every session: turns are cancelled and awaited, logs synced
// and unlocked.
func (a *Agent) shutdown() {
	a.mu.Lock()
	a.closed = true
	ss := make([]*sess, 0, len(a.sessions))
	for _, s := range a.sessions {
		ss = append(ss, s)
	}
	a.sessions = map[acp.SessionID]*sess{}
	cancel := a.cancelAll
	a.mu.Unlock()
	// In parallel: each close may wait out a stubborn child's grace periods
	// (a command, an MCP server), which must not add up per session.
	var wg sync.WaitGroup
	for _, s := range ss {
		wg.Go(s.close)
	}
	wg.Wait()
	if err := a.terms.Close(); err != nil {
		a.log.Warn("closing terminals", "err", err)
	}
	if cancel != nil {
		cancel()
	}
}

// handlers serves acp.Agent for an Agent, keeping those methods off its
// exported surface: initialize, authentication and the session lifecycle
// are in lifecycle.go, modes and config options in settings.go, the prompt
// in turn.go.
type handlers struct{ a *Agent }

// The methods acpd serves: a schema upgrade that adds a required method
// breaks this assertion until the method is handled.
var _ interface {
	acp.Agent
	acp.AgentLoadSession
	acp.AgentResumeSession
	acp.AgentListSessions
	acp.AgentCloseSession
	acp.AgentDeleteSession
	acp.AgentLogout
	acp.AgentSetSessionModel
} = handlers{}

// Cancel handles session/cancel, inline on the connection's read loop
// (Options.Immediate), so it must not block.
func (h handlers) Cancel(ctx context.Context, p *acp.CancelNotification) error {
	if s := h.a.lookup(p.SessionID); s != nil {
		s.slot.Cancel(jsonrpc.Arrival(ctx))
	}
	return nil
}

// peer returns the typed calls to the client, false when there is no
// connection.
func (a *Agent) peer() (acp.ClientConn, bool) {
	conn := a.connection()
	if conn == nil {
		return acp.ClientConn{}, false
	}
	return acp.NewClientConn(conn), true
}

func (a *Agent) lookup(id acp.SessionID) *sess {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id]
}

// mustSession returns the open session id or a resource-not-found error.
func (a *Agent) mustSession(id acp.SessionID) (*sess, error) {
	if s := a.lookup(id); s != nil {
		return s, nil
	}
	return nil, &jsonrpc.Error{Code: int(acp.ErrorCodeResourceNotFound), Message: fmt.Sprintf("session %q is not open in this connection (use session/load or session/resume)", id)}
}

// bridge returns the MCP bridge of the open session id (see
// mcpbridge.WithApps).
func (a *Agent) bridge(id acp.SessionID) (*mcpbridge.Bridge, error) {
	s, err := a.mustSession(id)
	if err != nil {
		return nil, err
	}
	return s.mcp, nil
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: int(acp.ErrorCodeInvalidParams), Message: fmt.Sprintf(format, args...)}
}
