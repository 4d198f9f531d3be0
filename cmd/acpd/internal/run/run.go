// Package run is `acpd run`: a headless ACP client for one prompt (CI, a
// shell) against acpd's own agent in this process or another ACP agent in
// its own process group. It serves the agent's file and terminal requests
// (confined to --cwd), answers its permission requests (--policy, --approve,
// the terminal, or refuses), shows the turn (the answer on stdout; a live
// view, plain lines or JSON on stderr and stdout) and hosts MCP App views
// in the browser (--ui). cmd/acpd wires it into cobra: Flags.Register
// defines the flags and Run runs the command.
//
// Run's goroutines (signals, the live view's ticker, the terminal reader,
// the MCP Apps question) are owned by the run and stopped before it
// returns.
package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/log"
	"github.com/charmbracelet/x/term"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/client"
	"acpd/config"
	"acpd/permissions"
	"acpd/sandbox"
	"acpd/terminal"
)

// Exit statuses of `acpd run`.
const (
	ExitOK        = 0   // the turn ended (end_turn)
	ExitFailed    = 1   // an error: the agent could not start, a call failed, ...
	ExitUsage     = 2   // bad flags or arguments
	ExitRefusal   = 3   // the agent refused (refusal)
	ExitLimit     = 4   // max_tokens or max_turn_requests
	ExitCrashed   = 5   // the hosted agent exited during the run
	ExitTimeout   = 124 // --timeout passed; the turn was cancelled
	ExitCancelled = 130 // the turn was cancelled (SIGINT)
)

// ExitStatus is the error of a run that ends with a status other than 0
// and has said why already: the binary exits with it and prints nothing.
type ExitStatus int

func (e ExitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// maxPromptBytes bounds a prompt read from standard input.
const maxPromptBytes = 16 << 20

// cancelWait is how long a cancelled turn (--timeout) may take to end
// before acpd run gives up on it.
const cancelWait = 10 * time.Second

// Options are what the binary supplies to a run: its version and what
// acpd run shares with acpd's other commands.
type Options struct {
	// Version is acpd's version, told to the agent and the MCP Apps page.
	Version string
	// LoadConfig reads the user configuration with the global flags and
	// the environment applied. Run calls it once the command line has
	// been checked.
	LoadConfig func() (*config.Loader, error)
	// OpenLogger returns the process logger for cfg (never on stdout) and
	// the closer of its file.
	OpenLogger func(cfg *config.Config) (*log.Logger, io.Closer, error)
	// LogLevelSet reports that --log-level or ACPD_LOG_LEVEL chose the log
	// level. Otherwise a run logging to stderr logs warnings and errors
	// only: stderr is for the person reading the run.
	LogLevelSet bool
	// LocalAgent builds acpd's own agent, for a run without --agent: its
	// Serve and the closer of what it holds (the model backends); ctx
	// bounds its waits for another process's locks.
	LocalAgent func(ctx context.Context, loader *config.Loader, lg *log.Logger) (serve func(ctx context.Context, r io.Reader, w io.WriteCloser) error, closer io.Closer, err error)
	// Sandbox returns the sandbox policy of the terminals acpd run serves
	// to another agent (--agent) working in cwd; nil runs them unconfined.
	Sandbox func(loader *config.Loader, cwd string) *sandbox.Policy
}

// UsageError prints msg on stderr as acpd run's usage error and returns
// the usage exit status.
func UsageError(msg string) error {
	fmt.Fprintf(os.Stderr, "acpd run: %s\nSee \"acpd run --help\".\n", msg)
	return ExitStatus(ExitUsage)
}

// Run implements `acpd run` with the flags f (registered on the command's
// flag set) and the prompt's words args. Its error is an ExitStatus when
// the run has reported its end itself, nil for status 0.
func Run(ctx context.Context, o Options, f *Flags, args []string) error {
	start := time.Now()
	// Usage checks first: nothing is started for a bad command line.
	argv, err := f.check()
	if err != nil {
		return err
	}
	if len(args) == 0 {
		return UsageError("no prompt given")
	}
	cwd := f.cwd
	if cwd == "" {
		cwd = "."
	}
	cwd, err = filepath.Abs(cwd)
	if err != nil {
		return UsageError(err.Error())
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return UsageError(fmt.Sprintf("--cwd %s is not a directory", cwd))
	}
	var rules []permissions.Rule
	if f.policy != "" {
		if rules, err = loadPolicy(f.policy); err != nil {
			return UsageError("--policy: " + err.Error())
		}
	}
	var answers *answerFile
	if f.answers != "" {
		if answers, err = loadAnswers(f.answers); err != nil {
			return UsageError("--answers: " + err.Error())
		}
	}
	var mcpServers []acp.McpServer
	if f.mcpConfig != "" {
		if mcpServers, err = loadMCPConfig(f.mcpConfig); err != nil {
			return UsageError("--mcp-config: " + err.Error())
		}
	}
	prompt := strings.Join(args, " ")
	if len(args) == 1 && args[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(os.Stdin, maxPromptBytes+1))
		if err != nil {
			return fmt.Errorf("reading the prompt: %w", err)
		}
		if len(b) > maxPromptBytes {
			return UsageError(fmt.Sprintf("the prompt on stdin is larger than %d MiB", maxPromptBytes>>20))
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		return UsageError("the prompt is empty")
	}

	loader, err := o.LoadConfig()
	if err != nil {
		return err
	}
	if f.maxTurnRequests > 0 {
		loader = loader.WithMaxTurnRequests(f.maxTurnRequests)
	}
	cfg := loader.User()
	lg, closeLog, err := o.OpenLogger(cfg)
	if err != nil {
		return err
	}
	defer closeLog.Close()
	if cfg.Log.File == "" && !o.LogLevelSet {
		lg.SetLevel(log.WarnLevel) // stderr is for the person reading the run
	}
	policy, err := newRunPolicy(rules, []string{config.UserDir(os.Getenv), cfg.State.Dir})
	if err != nil {
		return UsageError("--policy: " + err.Error())
	}
	if argv != nil {
		// acpd's own agent starts the config file's servers itself.
		mcpServers = mergeMCPServers(configMCPServers(cfg.MCPServers), mcpServers)
	}

	r := newRunner(o, f, lg, cwd, policy)
	r.answers = answers
	r.escalate = r.escalate || f.approve == approveAll && cfg.Sandbox.Escalate == "allow"
	r.start = start
	defer r.closeTTY()
	err = r.run(ctx, loader, argv, mcpServers, prompt)
	return r.finish(err)
}

func isTerminal(f *os.File) bool { return term.IsTerminal(f.Fd()) }

// newRunner returns the runner for one `acpd run` on the process's
// standard streams.
func newRunner(o Options, f *Flags, lg *log.Logger, cwd string, policy *permissions.Policy) *runner {
	r := &runner{
		opts:   o,
		flags:  f,
		log:    lg,
		cwd:    cwd,
		policy: policy,
		stdout: os.Stdout,
		stderr: os.Stderr,
		cancel: make(chan struct{}),
		tools:  map[acp.ToolCallID]*toolInfo{},
		files:  map[string]bool{},
		askTTY: isTerminal(os.Stdin),
		// Escalations are allowed only on top of --approve all.
		escalate: f.approve == approveAll && f.allowEscalation,
	}
	r.out = newOutput(r, isTerminal(os.Stdout), isTerminal(os.Stderr))
	mode := uiOff
	switch {
	case f.ui:
		mode = uiOn
	case r.askTTY && isTerminal(os.Stderr) && f.output == outputText:
		mode = uiAsk
	}
	r.ui = newRunUI(r, mode)
	return r
}

// run connects to the agent, runs the session and closes the connection.
func (r *runner) run(ctx context.Context, loader *config.Loader, argv []string, mcpServers []acp.McpServer, prompt string) error {
	cfg := loader.User()
	var transport client.Transport
	if argv == nil {
		serve, closeAgent, err := r.opts.LocalAgent(ctx, loader, r.log)
		if err != nil {
			return err
		}
		defer closeAgent.Close()
		transport = &client.ServeTransport{Serve: serve}
	} else {
		transport = &client.CommandTransport{Command: argv, Dir: r.cwd, Stderr: os.Stderr}
	}

	// The connection outlives the first SIGINT (which cancels ctx): the turn
	// is cancelled through ACP, and only a second signal aborts.
	base, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	r.abort = abort
	if r.flags.timeout > 0 {
		// Until the turn starts (then session's timer cancels it), the
		// timeout gives up on an agent that does not get that far.
		guard := time.AfterFunc(r.flags.timeout, func() {
			r.mu.Lock()
			early := r.sess == nil
			if early {
				r.timedOut, r.abortedB = true, true
			}
			r.mu.Unlock()
			if early {
				r.notice(fmt.Sprintf("acpd run: --timeout %s passed before the turn started", r.flags.timeout))
				abort()
			}
		})
		defer guard.Stop()
	}

	title := "acpd run"
	conn, err := client.Dial(base, transport, client.Options{
		Cwd:        r.cwd,
		Protected:  []string{config.UserDir(os.Getenv), cfg.State.Dir},
		Permission: r.permission,
		Elicit:     r.elicit,
		OnUpdate:   r.update,
		Logger:     slog.New(r.log),
		// The agent's commands write to the model, not to a screen.
		Env:               append(terminal.FilterEnv(os.Environ(), cfg.Env.Allow), "TERM=dumb"),
		Sandbox:           r.terminalSandbox(loader, argv != nil),
		OnTerminalRelease: r.released,
	}, &client.DialOptions{
		Info:             acp.Implementation{Name: "acpd run", Title: &title, Version: r.opts.Version},
		MaxLineBytes:     cfg.Protocol.MaxLineBytes,
		OnWrite:          r.wrote,
		CapabilitiesMeta: r.ui.capabilities(),
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.conn = conn
	r.mu.Unlock()
	r.out.start()
	r.ui.start(conn)
	// The output of running commands, for the live view and stream-json.
	pollStop := make(chan struct{})
	var pollWG sync.WaitGroup
	if r.out.progressive() {
		pollWG.Add(1)
		go r.pollOutput(pollStop, &pollWG)
	}

	// Signals: the first cancels the turn, the second aborts.
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	sigDone := make(chan struct{})
	var sigWG sync.WaitGroup
	sigWG.Add(1)
	go func() {
		defer sigWG.Done()
		r.watchSignals(base, sigc, sigDone)
	}()

	err = r.session(base, conn, mcpServers, prompt)
	r.ui.close()

	signal.Stop(sigc)
	close(sigDone)
	sigWG.Wait()
	close(pollStop)
	pollWG.Wait()
	r.out.stop()
	stopping := time.Now()
	serr := conn.Close()
	r.log.Debug("agent stopped", "took", time.Since(stopping), "err", serr)
	return err
}

// finish turns the run's error into the exit status, printing the final
// summary (text) or result object (json, stream-json).
func (r *runner) finish(err error) error {
	code := ExitOK
	var ee ExitStatus
	r.mu.Lock()
	timedOut := r.timedOut
	r.mu.Unlock()
	switch {
	case r.aborted() && timedOut:
		code = ExitTimeout
	case r.aborted():
		code = ExitCancelled
	case err == nil:
	case errors.As(err, &ee):
		code = int(ee)
	case errors.Is(err, client.ErrAgentExited):
		code = ExitCrashed
	default:
		code = ExitFailed
	}
	if code == ExitUsage {
		return err // printed already; nothing ran
	}
	msg := ""
	if err != nil && !errors.As(err, &ee) {
		msg = err.Error()
		fmt.Fprintln(r.stderr, "acpd run:", msg)
	}
	r.out.result(r.result(code, msg))
	if code == ExitOK {
		return nil
	}
	return ExitStatus(code)
}

// terminalSandbox is the sandbox policy of the terminals the run serves:
// Options.Sandbox's for another agent's commands; none for acpd's own
// agent, which sandboxes its commands itself (nesting would fail: a
// sandboxed process cannot mount).
func (r *runner) terminalSandbox(loader *config.Loader, external bool) *sandbox.Policy {
	if !external || r.opts.Sandbox == nil {
		return nil
	}
	return r.opts.Sandbox(loader, r.cwd)
}

// runner is the state of one `acpd run`.
type runner struct {
	opts   Options
	flags  *Flags
	log    *log.Logger
	cwd    string
	policy *permissions.Policy
	stdout io.Writer
	stderr io.Writer
	out    output
	start  time.Time
	conn   *client.Conn
	abort  func()
	ui     *runUI

	// askTTY reports whether stdin is a terminal to ask permissions on.
	askTTY bool
	// escalate: --approve all allows running commands outside the sandbox
	// too (--allow-escalation or [sandbox] escalate = "allow").
	escalate bool

	mu        sync.Mutex
	sid       acp.SessionID   // once the session is open
	sess      *client.Session // once the prompt is about to be sent
	cancelled bool            // session/cancel was sent
	timedOut  bool            // by --timeout
	cancel    chan struct{}   // closed with cancelled: pending questions end
	abortedB  bool            // a second signal (or a signal before the turn)
	turnOver  bool            // session/prompt returned (the MCP Apps page may hold the run)
	stop      acp.StopReason

	// What the turn did, for the summary and --output json (guarded by mu).
	tools     map[acp.ToolCallID]*toolInfo
	toolOrder []*toolInfo
	text      strings.Builder
	// lastMsg is the id of the agent message text last came from; afterText
	// says a tool call came since (guarded by mu).
	lastMsg   string
	afterText bool
	files     map[string]bool
	usage     *acp.UsageUpdate
	tokens    *TokensRecord // the turns' PromptResponse.usage, summed
	perms     []PermissionRecord
	questions []QuestionRecord
	// answers are --answers FILE's (nil without), used in order.
	answers *answerFile
	// releasedOut holds the output of terminals the agent released, until
	// their tool call ends (cmdout.go; guarded by mu).
	releasedOut   map[acp.TerminalID]acp.TerminalOutputResponse
	releasedOrder []acp.TerminalID

	askMu   sync.Mutex // one question at a time
	ttyOnce sync.Once
	tty     *ttyReader // guarded by mu
}

func (r *runner) aborted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.abortedB
}

// watchSignals handles SIGINT/SIGTERM until done is closed.
func (r *runner) watchSignals(ctx context.Context, sigc <-chan os.Signal, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-sigc:
		}
		if !r.cancelTurn(ctx, "interrupt") {
			r.notice("acpd run: aborted")
			r.abort()
		}
	}
}

// cancelTurn sends session/cancel the first time it is called during the
// turn and reports whether it did; otherwise (again, or before the turn)
// the run is marked aborted.
func (r *runner) cancelTurn(ctx context.Context, why string) bool {
	r.mu.Lock()
	first := !r.cancelled && r.sess != nil
	sess, over := r.sess, r.turnOver
	if first {
		r.cancelled = true
		r.timedOut = why == "timeout"
		close(r.cancel)
	} else {
		r.abortedB = true
	}
	r.mu.Unlock()
	if !first {
		return false
	}
	switch {
	case over && why == "timeout":
		// The turn ended; only the MCP Apps page (hold) kept the run.
		r.notice(fmt.Sprintf("acpd run: --timeout %s passed; closing the MCP Apps page and exiting", r.flags.timeout))
	case over:
		r.notice("acpd run: the turn has ended; closing the MCP Apps page and exiting")
	case why == "timeout":
		r.notice(fmt.Sprintf("acpd run: --timeout %s passed; cancelling the turn", r.flags.timeout))
	default:
		r.notice("acpd run: cancelling the turn (interrupt again to exit)")
	}
	nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := sess.Cancel(nctx); err != nil {
		r.log.Warn("sending session/cancel", "err", err)
	}
	return true
}

// session opens the session, sets the mode and runs the prompt; its error
// decides the exit status.
func (r *runner) session(ctx context.Context, conn *client.Conn, mcpServers []acp.McpServer, prompt string) error {
	p := client.SessionParams{Cwd: r.cwd, McpServers: mcpServers}
	var sess *client.Session
	var err error
	id := acp.SessionID(r.flags.session)
	if r.flags.cont {
		id, err = conn.LatestSession(ctx, r.cwd)
		if err != nil {
			return fmt.Errorf("--continue: %w", err)
		}
		if id == "" {
			return fmt.Errorf("--continue: no session of %s to continue", r.cwd)
		}
	}
	if id == "" {
		sess, err = conn.NewSession(ctx, p)
	} else {
		sess, err = conn.ResumeSession(ctx, id, p)
		if errors.Is(err, client.ErrCannotResume) {
			err = fmt.Errorf("%w (--session)", err)
		}
	}
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.sid = sess.ID
	r.mu.Unlock()
	// A session this run created is deleted again when the run fails
	// before its prompt reached a model: it holds nothing to continue.
	discard := id == ""
	defer func() {
		if discard {
			r.discardSession(ctx, conn, sess.ID)
		}
	}()

	if m := r.flags.mode; m != "" {
		if err := sess.SetMode(ctx, m); err != nil {
			var me *client.ModeError
			if errors.As(err, &me) {
				return UsageError("--mode: " + err.Error())
			}
			return err
		}
	}

	r.mu.Lock()
	if r.abortedB {
		r.mu.Unlock()
		return nil
	}
	r.sess = sess
	r.mu.Unlock()

	pctx := ctx
	if r.flags.timeout > 0 {
		// The timer (the timeout counts from the start of the run) cancels
		// the turn through ACP; the call itself ends when the agent answers
		// "cancelled", or cancelWait later.
		var cancel context.CancelFunc
		pctx, cancel = context.WithCancel(ctx)
		defer cancel()
		timer := time.AfterFunc(max(0, r.flags.timeout-time.Since(r.start)), func() {
			r.cancelTurn(ctx, "timeout")
			time.AfterFunc(cancelWait, cancel)
		})
		defer timer.Stop()
	}
	prompts := append([]string{prompt}, r.flags.followUps...)
	for i, p := range prompts {
		if i > 0 {
			r.mu.Lock()
			cancelled, timedOut := r.cancelled, r.timedOut
			r.mu.Unlock()
			if cancelled {
				// Between two turns: the cancel stops the rest.
				r.notice(fmt.Sprintf("acpd run: %d follow-up(s) not sent", len(prompts)-i))
				if timedOut {
					return ExitStatus(ExitTimeout)
				}
				return ExitStatus(ExitCancelled)
			}
			r.notice(fmt.Sprintf("acpd run: follow-up %d of %d", i, len(prompts)-1))
		}
		if err := r.turn(ctx, pctx, sess, p, i == len(prompts)-1, &discard); err != nil {
			if i < len(prompts)-1 {
				r.notice(fmt.Sprintf("acpd run: %d follow-up(s) not sent", len(prompts)-1-i))
			}
			return err
		}
	}
	return nil
}

// turn sends one prompt of the session and waits for its turn; last: no
// follow-up comes after it. Its error (nil: the turn ended normally)
// decides the exit status. *discard stays true only while no prompt has
// reached a model (the session is then deleted).
func (r *runner) turn(ctx, pctx context.Context, sess *client.Session, prompt string, last bool, discard *bool) error {
	r.ui.prompted(sess.ID, prompt)
	res, err := sess.Prompt(pctx, acp.ContentBlock{Text: &acp.TextContent{Text: prompt}})
	*discard = *discard && noModel(err)
	r.mu.Lock()
	timedOut := r.timedOut
	r.stop = res.StopReason
	r.turnOver = true
	if res.Usage != nil {
		r.tokens = r.tokens.add(res.Usage)
	}
	r.mu.Unlock()
	if err == nil && !r.aborted() && last {
		r.ui.hold(ctx, r.cancel)
	}
	if err != nil && !errors.Is(err, client.ErrUnknownStopReason) {
		switch {
		case r.aborted():
			return ExitStatus(ExitCancelled)
		case timedOut:
			return ExitStatus(ExitTimeout)
		}
		return err
	}
	if err != nil {
		return err
	}
	switch res.StopReason {
	case acp.StopReasonEndTurn:
		if !last {
			return nil
		}
		if n := r.refusals(); n > 0 && r.flags.failOnRefusal {
			r.notice(fmt.Sprintf("acpd run: %d permission request(s) refused; the agent could not do all it tried (--fail-on-refusal)", n))
			return ExitStatus(ExitRefusal)
		}
		return nil
	case acp.StopReasonCancelled:
		if timedOut {
			return ExitStatus(ExitTimeout)
		}
		return ExitStatus(ExitCancelled)
	case acp.StopReasonRefusal:
		r.notice("acpd run: the agent refused (refusal)")
		return ExitStatus(ExitRefusal)
	default: // max_tokens, max_turn_requests
		r.notice(fmt.Sprintf("acpd run: the turn stopped: %s", res.StopReason))
		return ExitStatus(ExitLimit)
	}
}

// noModel reports whether a prompt failed for want of a model (ACP's
// auth_required): the agent answered without asking one.
func noModel(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == int(acp.ErrorCodeAuthenticationRequired)
}

// discardSession deletes the session id this run created (session/delete,
// when the agent offers it), so that a failed run leaves no empty session
// in the agent's list; the result then names no session.
func (r *runner) discardSession(ctx context.Context, conn *client.Conn, id acp.SessionID) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := conn.DeleteSession(dctx, id); err != nil {
		r.log.Debug("deleting the session of a failed run", "session", id, "err", err)
		return
	}
	r.mu.Lock()
	r.sid = ""
	r.mu.Unlock()
}

// refusals counts the permission requests refused by the policy, the
// --approve level or for want of a terminal (not the user's own no).
func (r *runner) refusals() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, p := range r.perms {
		if p.Decision == "rejected" && p.By != "user" {
			n++
		}
	}
	return n
}

// wrote records a file the agent replaced (client.DialOptions.OnWrite).
func (r *runner) wrote(path string) {
	r.mu.Lock()
	r.files[path] = true
	r.mu.Unlock()
}

// update records one session/update and shows it (client.Options.OnUpdate;
// it runs on the connection's read loop).
func (r *runner) update(n acp.SessionNotification) {
	u := n.Update
	r.mu.Lock()
	var tool *toolInfo
	switch {
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil && t.Text != "" {
			// Separate messages as the text output does: a blank line
			// between two agent messages (a new message id, or text after
			// tool calls or a plan).
			id := ""
			if m := u.AgentMessageChunk.MessageID; m != nil {
				id = string(*m)
			}
			if r.text.Len() > 0 && (r.afterText || id != r.lastMsg) {
				r.text.WriteString("\n\n")
			}
			r.lastMsg, r.afterText = id, false
			r.text.WriteString(t.Text)
		}
	case u.ToolCall != nil:
		r.afterText = true
		tool = newToolInfo(u.ToolCall)
		if old, ok := r.tools[tool.id]; ok {
			*old = *tool
			tool = old
		} else {
			r.tools[tool.id] = tool
			r.toolOrder = append(r.toolOrder, tool)
		}
	case u.ToolCallUpdate != nil:
		tool = r.tools[u.ToolCallUpdate.ToolCallID]
		if tool == nil {
			tool = &toolInfo{id: u.ToolCallUpdate.ToolCallID, title: "tool call"}
			r.tools[tool.id] = tool
			r.toolOrder = append(r.toolOrder, tool)
		}
		tool.merge(u.ToolCallUpdate)
	case u.UsageUpdate != nil:
		r.usage = u.UsageUpdate
	}
	var snap toolInfo
	if tool != nil {
		if tool.status == acp.ToolCallStatusCompleted && isEdit(tool.kind) {
			for _, d := range tool.diffs {
				r.files[d.Path] = true
			}
		}
		if ended(tool.status) && !tool.outDone {
			r.mu.Unlock()
			r.finishOutput(tool)
			r.mu.Lock()
		}
		snap = *tool
	}
	r.mu.Unlock()
	r.out.update(n, snap)
	if tool != nil && ended(snap.status) {
		r.mu.Lock()
		tool.raw = "" // shown; the rendered output stays
		r.mu.Unlock()
	}
	r.ui.update(n)
}

func isEdit(k acp.ToolKind) bool {
	return k == acp.ToolKindEdit || k == acp.ToolKindDelete || k == acp.ToolKindMove
}

// notice prints one line of acpd run's own on stderr (not with --quiet
// unless it reports a refusal or an error).
func (r *runner) notice(s string) { r.out.notice(s) }

// ask asks the person on the terminal to choose an option. It fails closed:
// the end of the terminal's input rejects.
func (r *runner) ask(ctx context.Context, t *toolInfo, options []acp.PermissionOption) (acp.RequestPermissionResponse, error) {
	r.askMu.Lock()
	defer r.askMu.Unlock()
	reject := client.Select(options, acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways)
	tty, err := r.openTTY()
	if err != nil {
		r.log.Warn("cannot read the terminal; rejecting", "err", err)
		return reject, nil
	}
	return r.out.ask(ctx, t, options, tty, r.cancel)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// ttyReader reads the terminal on standard input: what one read returns,
// a key in cbreak mode, a line otherwise. Its goroutine is owned by the
// runner: closeTTY closes the file (a fresh non-blocking open, so Close
// interrupts a pending read and the shell's terminal stays blocking) and
// waits for it.
type ttyReader struct {
	f      *os.File
	chunks chan []byte // unbuffered; closed at end of input
	stop   chan struct{}
	wg     sync.WaitGroup
	line   []byte // a partial line, for the one question at a time
}

func (r *runner) openTTY() (*ttyReader, error) {
	var err error
	r.ttyOnce.Do(func() {
		var f *os.File
		f, err = os.OpenFile("/proc/self/fd/0", os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		t := &ttyReader{f: f, chunks: make(chan []byte), stop: make(chan struct{})}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			defer close(t.chunks)
			buf := make([]byte, 4096)
			for {
				n, err := f.Read(buf)
				if n > 0 {
					select {
					case t.chunks <- append([]byte(nil), buf[:n]...):
					case <-t.stop:
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
		r.mu.Lock()
		r.tty = t
		r.mu.Unlock()
	})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	t := r.tty
	r.mu.Unlock()
	if t == nil {
		return nil, errors.New("the terminal could not be opened")
	}
	return t, nil
}

// closeTTY stops the terminal reader, if it was started.
func (r *runner) closeTTY() {
	r.mu.Lock()
	t := r.tty
	r.mu.Unlock()
	if t == nil {
		return
	}
	close(t.stop)
	t.f.Close()
	t.wg.Wait()
}

// splitWords splits s into words like a POSIX shell, without expansions:
// whitespace separates words, single quotes keep everything literally, double
// quotes keep everything but \" \\ \$ \` and backslash-newline, and a
// backslash outside quotes escapes the next character.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
					if s[i] == '\n' {
						continue
					}
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
		case c == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("trailing backslash")
			}
			i++
			if s[i] != '\n' {
				inWord = true
				cur.WriteByte(s[i])
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
