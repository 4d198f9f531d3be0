package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/log"
	"github.com/spf13/cobra"

	"acpd/acp"
	"acpd/client"
	"acpd/config"
	"acpd/permissions"
	"acpd/terminal"
)

// Exit statuses of `acpd run`.
const (
	exitOK        = 0   // the turn ended (end_turn)
	exitFailed    = 1   // an error: the agent could not start, a call failed, ...
	exitUsage     = 2   // bad flags or arguments
	exitRefusal   = 3   // the agent refused (refusal)
	exitLimit     = 4   // max_tokens or max_turn_requests
	exitCrashed   = 5   // the hosted agent exited during the run
	exitTimeout   = 124 // --timeout passed; the turn was cancelled
	exitCancelled = 130 // the turn was cancelled (SIGINT)
)

// maxPromptBytes bounds a prompt read from standard input.
const maxPromptBytes = 16 << 20

// cancelWait is how long a cancelled turn (--timeout) may take to end
// before acpd run gives up on it.
const cancelWait = 10 * time.Second

// The --output formats.
const (
	outputText       = "text"
	outputJSON       = "json"
	outputStreamJSON = "stream-json"
)

// runFlags are the flags of `acpd run`.
type runFlags struct {
	agent           string
	agentArgs       []string
	cwd             string
	session         string
	cont            bool
	mode            string
	yes             bool
	approve         string
	policy          string
	json            bool
	output          string
	quiet           bool
	mcpConfig       string
	maxTurnRequests int
	timeout         time.Duration
	ui              bool
}

func newRunCmd(g *globalFlags) *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT...",
		Short: "Run one prompt headless (CI, shell), against acpd's agent or another ACP agent",
		Long: `acpd run sends one prompt to an ACP agent and acts as its client: it serves the
agent's file requests (confined to --cwd), runs its terminal commands and
answers its permission requests. Without --agent it runs acpd's own agent in
this process. PROMPT "-" reads the prompt from standard input.

The answer streams to stdout; thoughts, tool calls and plans are shown on
stderr (a live view on a terminal). Permission requests follow --policy and
--approve; what they leave open is asked on the terminal when stdin is one,
and refused otherwise.

Exit status: 0 end of turn, 1 error, 2 usage error, 3 refusal, 4 token or
turn-request limit, 5 the hosted agent crashed, 124 --timeout, 130 cancelled
(Ctrl-C cancels the turn; a second Ctrl-C exits).

MCP App views (docs/mcp-apps.md): with --ui, acpd run serves a page on
127.0.0.1 (the URL, with a per-run secret, is printed and opened with
$BROWSER, xdg-open, open or start) that shows the conversation and renders
the views of the tools called; after the turn the run stays while the page
shows views, until Finish is pressed there, the page is closed or Ctrl-C. On an interactive
terminal without --ui, the first view asks whether to open the page.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			fl := cmd.Flags()
			return runRun(cmd.Context(), g, f, args, fl.Changed("yes"), fl.Changed("approve"))
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError(err.Error())
	})
	fl := cmd.Flags()
	fl.StringVar(&f.agent, "agent", "", `run this ACP agent instead of acpd's own, e.g. "npx some-agent --acp" (split like a shell would, no shell involved)`)
	fl.StringArrayVar(&f.agentArgs, "agent-arg", nil, "one more argument for --agent (repeatable)")
	fl.StringVar(&f.cwd, "cwd", "", "the session's working directory; file access is confined to it (default: the current directory)")
	fl.StringVar(&f.session, "session", "", "continue this session (session/resume or session/load) instead of starting a new one")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the most recent session of --cwd")
	fl.StringVar(&f.mode, "mode", "", "session mode, one the agent offers (acpd's: ask, auto-edit, plan, full; others' e.g. default, acceptEdits, bypassPermissions)")
	fl.BoolVarP(&f.yes, "yes", "y", false, "allow every permission request (--approve all)")
	fl.StringVar(&f.approve, "approve", approveAsk, "permission requests: ask (on the terminal, refuse without one), edits (allow edits inside --cwd), all, none")
	fl.StringVar(&f.policy, "policy", "", "permission rules, in the config file's [[permissions.rules]] format, decided before --approve")
	fl.StringVar(&f.output, "output", outputText, "text (the answer on stdout), json (one final object) or stream-json (every update, then the final object, as JSON lines)")
	fl.BoolVar(&f.json, "json", false, "--output stream-json")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print only the answer (and errors): no tool calls, plans or summary on stderr")
	fl.StringVar(&f.mcpConfig, "mcp-config", "", `MCP servers for the session, a {"mcpServers": {...}} JSON file (stdio and HTTP entries); added to the config file's`)
	fl.IntVar(&f.maxTurnRequests, "max-turn-requests", 0, "stop the turn after this many model requests (acpd's own agent; default agent.max_turn_requests)")
	fl.DurationVar(&f.timeout, "timeout", 0, "cancel the turn after this long, e.g. 10m (exit status 124)")
	fl.BoolVar(&f.ui, "ui", false, "host MCP App views in the browser: serve a page on 127.0.0.1 and open it")
	return cmd
}

// usageError prints msg on stderr and returns the usage exit status.
func usageError(msg string) error {
	fmt.Fprintf(os.Stderr, "acpd run: %s\nSee \"acpd run --help\".\n", msg)
	return exitError(exitUsage)
}

// runRun implements `acpd run`.
func runRun(ctx context.Context, g *globalFlags, f *runFlags, args []string, yesSet, approveSet bool) error {
	start := time.Now()
	// Usage checks first: nothing is started for a bad command line.
	if f.json {
		if f.output != outputText && f.output != outputStreamJSON {
			return usageError("--json is --output stream-json; it cannot be combined with --output " + f.output)
		}
		f.output = outputStreamJSON
	}
	if !slices.Contains([]string{outputText, outputJSON, outputStreamJSON}, f.output) {
		return usageError(fmt.Sprintf("unknown --output %q (want text, json or stream-json)", f.output))
	}
	if !slices.Contains(approveLevels, f.approve) {
		return usageError(fmt.Sprintf("unknown --approve %q (want %s)", f.approve, strings.Join(approveLevels, ", ")))
	}
	if yesSet && f.yes {
		if approveSet && f.approve != approveAll {
			return usageError("--yes is --approve all; it cannot be combined with --approve " + f.approve)
		}
		f.approve = approveAll
	}
	if f.cont && f.session != "" {
		return usageError("--continue and --session exclude each other")
	}
	if f.maxTurnRequests < 0 {
		return usageError("--max-turn-requests must be at least 1")
	}
	if f.timeout < 0 {
		return usageError("--timeout must be positive")
	}
	var argv []string
	if f.agent != "" {
		var err error
		if argv, err = splitWords(f.agent); err != nil {
			return usageError("--agent: " + err.Error())
		}
		if len(argv) == 0 {
			return usageError("--agent is empty")
		}
		argv = append(argv, f.agentArgs...)
		if f.maxTurnRequests > 0 {
			return usageError("--max-turn-requests applies to acpd's own agent only (ACP has no such request for others)")
		}
	} else if len(f.agentArgs) > 0 {
		return usageError("--agent-arg needs --agent")
	}
	if len(args) == 0 {
		return usageError("no prompt given")
	}
	cwd := f.cwd
	if cwd == "" {
		cwd = "."
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return usageError(err.Error())
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return usageError(fmt.Sprintf("--cwd %s is not a directory", cwd))
	}
	var rules []permissions.Rule
	if f.policy != "" {
		if rules, err = loadPolicy(f.policy); err != nil {
			return usageError("--policy: " + err.Error())
		}
	}
	var mcpServers []acp.McpServer
	if f.mcpConfig != "" {
		if mcpServers, err = loadMCPConfig(f.mcpConfig); err != nil {
			return usageError("--mcp-config: " + err.Error())
		}
	}
	prompt := strings.Join(args, " ")
	if len(args) == 1 && args[0] == "-" {
		b, err := io.ReadAll(io.LimitReader(os.Stdin, maxPromptBytes+1))
		if err != nil {
			return fmt.Errorf("reading the prompt: %w", err)
		}
		if len(b) > maxPromptBytes {
			return usageError(fmt.Sprintf("the prompt on stdin is larger than %d MiB", maxPromptBytes>>20))
		}
		prompt = string(b)
	}
	if strings.TrimSpace(prompt) == "" {
		return usageError("the prompt is empty")
	}

	loader, err := loadConfig(g)
	if err != nil {
		return err
	}
	if f.maxTurnRequests > 0 {
		loader = loader.WithMaxTurnRequests(f.maxTurnRequests)
	}
	cfg := loader.User()
	lg, closeLog, err := openLogger(cfg)
	if err != nil {
		return err
	}
	defer closeLog.Close()
	if cfg.Log.File == "" && g.logLevel == "" && os.Getenv("ACPD_LOG_LEVEL") == "" {
		lg.SetLevel(log.WarnLevel) // stderr is for the person reading the run
	}
	policy, err := newRunPolicy(rules, []string{config.UserDir(os.Getenv), cfg.State.Dir})
	if err != nil {
		return usageError("--policy: " + err.Error())
	}
	if argv != nil {
		// acpd's own agent starts the config file's servers itself.
		mcpServers = mergeMCPServers(configMCPServers(cfg.MCPServers), mcpServers)
	}

	r := newRunner(f, lg, cwd, policy)
	r.start = start
	defer r.closeTTY()
	err = r.run(ctx, loader, argv, mcpServers, prompt)
	return r.finish(err)
}

// newRunner returns the runner for one `acpd run` on the process's
// standard streams.
func newRunner(f *runFlags, lg *log.Logger, cwd string, policy *permissions.Policy) *runner {
	r := &runner{
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
		a, closeModels, err := newLocalAgent(ctx, loader, r.log)
		if err != nil {
			return err
		}
		defer closeModels.Close()
		transport = &client.ServeTransport{Serve: a.Serve}
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
		Permission: r.permission,
		OnUpdate:   r.update,
		Logger:     slog.New(r.log),
		// The agent's commands write to the model, not to a screen.
		Env:     append(terminal.FilterEnv(os.Environ(), cfg.Env.Allow), "TERM=dumb"),
		Sandbox: runTerminalSandbox(loader, r.cwd, argv != nil),
	}, &client.DialOptions{
		Info:             acp.Implementation{Name: "acpd run", Title: &title, Version: acpdVersion()},
		MaxLineBytes:     cfg.Protocol.MaxLineBytes,
		OnWrite:          r.wrote,
		CapabilitiesMeta: r.ui.capabilities(),
	})
	if err != nil {
		return err
	}
	r.conn = conn
	r.out.start()
	r.ui.start(conn)

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
	r.out.stop()
	stopping := time.Now()
	serr := conn.Close()
	r.log.Debug("agent stopped", "took", time.Since(stopping), "err", serr)
	return err
}

// finish turns the run's error into the exit status, printing the final
// summary (text) or result object (json, stream-json).
func (r *runner) finish(err error) error {
	code := exitOK
	var ee exitError
	r.mu.Lock()
	timedOut := r.timedOut
	r.mu.Unlock()
	switch {
	case r.aborted() && timedOut:
		code = exitTimeout
	case r.aborted():
		code = exitCancelled
	case err == nil:
	case errors.As(err, &ee):
		code = int(ee)
	case errors.Is(err, client.ErrAgentExited):
		code = exitCrashed
	default:
		code = exitFailed
	}
	if code == exitUsage {
		return err // printed already; nothing ran
	}
	msg := ""
	if err != nil && !errors.As(err, &ee) {
		msg = err.Error()
		fmt.Fprintln(r.stderr, "acpd run:", msg)
	}
	r.out.result(r.result(code, msg))
	if code == exitOK {
		return nil
	}
	return exitError(code)
}

// runner is the state of one `acpd run`.
type runner struct {
	flags  *runFlags
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

	mu        sync.Mutex
	sid       acp.SessionID   // once the session is open
	sess      *client.Session // once the prompt is about to be sent
	cancelled bool            // session/cancel was sent
	timedOut  bool            // by --timeout
	cancel    chan struct{}   // closed with cancelled: pending questions end
	abortedB  bool            // a second signal (or a signal before the turn)
	stop      acp.StopReason

	// What the turn did, for the summary and --output json (guarded by mu).
	tools     map[acp.ToolCallID]*toolInfo
	toolOrder []*toolInfo
	text      strings.Builder
	files     map[string]bool
	usage     *acp.UsageUpdate
	perms     []permRecord

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
	sess := r.sess
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
	if why == "timeout" {
		r.notice(fmt.Sprintf("acpd run: --timeout %s passed; cancelling the turn", r.flags.timeout))
	} else {
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

	if m := r.flags.mode; m != "" {
		if err := sess.SetMode(ctx, m); err != nil {
			var me *client.ModeError
			if errors.As(err, &me) {
				return usageError("--mode: " + err.Error())
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
	r.ui.prompted(sess.ID, prompt)
	res, err := sess.Prompt(pctx, acp.ContentBlock{Text: &acp.TextContent{Text: prompt}})
	r.mu.Lock()
	timedOut := r.timedOut
	r.stop = res.StopReason
	r.mu.Unlock()
	if err == nil && !r.aborted() {
		r.ui.hold(ctx, r.cancel)
	}
	if err != nil && !errors.Is(err, client.ErrUnknownStopReason) {
		switch {
		case r.aborted():
			return nil
		case timedOut:
			return exitError(exitTimeout)
		}
		return err
	}
	if err != nil {
		return err
	}
	switch res.StopReason {
	case acp.StopReasonEndTurn:
		return nil
	case acp.StopReasonCancelled:
		if timedOut {
			return exitError(exitTimeout)
		}
		return exitError(exitCancelled)
	case acp.StopReasonRefusal:
		r.notice("acpd run: the agent refused (refusal)")
		return exitError(exitRefusal)
	default: // max_tokens, max_turn_requests
		r.notice(fmt.Sprintf("acpd run: the turn stopped: %s", res.StopReason))
		return exitError(exitLimit)
	}
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
		if t := u.AgentMessageChunk.Content.Text; t != nil {
			r.text.WriteString(t.Text)
		}
	case u.ToolCall != nil:
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
		snap = *tool
	}
	r.mu.Unlock()
	r.out.update(n, snap)
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
