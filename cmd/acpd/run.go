package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/charmbracelet/log"
	"github.com/spf13/cobra"

	"acpd/acp"
	"acpd/client"
	"acpd/terminal"
)

// Exit statuses of `acpd run` besides 0 (end_turn) and 1 (errors).
const (
	exitUsage     = 2   // bad flags or arguments
	exitStopped   = 3   // refusal, max_tokens or max_turn_requests
	exitCancelled = 130 // the turn was cancelled (SIGINT)
)

// maxPromptBytes bounds a prompt read from standard input.
const maxPromptBytes = 16 << 20

// runFlags are the flags of `acpd run`.
type runFlags struct {
	agent     string
	agentArgs []string
	cwd       string
	session   string
	mode      string
	yes       bool
	json      bool
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

The answer streams to stdout; thoughts, tool calls and plans are summarised on
stderr. Permission requests are allowed with --yes, asked on the terminal when
stdin is one, and rejected otherwise.

Exit status: 0 end of turn, 1 error, 2 usage error, 3 refusal or a turn/token
limit, 130 cancelled (Ctrl-C cancels the turn; a second Ctrl-C exits).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd.Context(), g, f, args)
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
	fl.StringVar(&f.mode, "mode", "", "session mode, one the agent offers (acpd's: ask, auto-edit, plan, full; others' e.g. default, acceptEdits, bypassPermissions)")
	fl.BoolVarP(&f.yes, "yes", "y", false, "allow every permission request (first allow-once option)")
	fl.BoolVar(&f.json, "json", false, "print every session/update and the final PromptResponse as JSON lines on stdout")
	return cmd
}

// usageError prints msg on stderr and returns the usage exit status.
func usageError(msg string) error {
	fmt.Fprintf(os.Stderr, "acpd run: %s\nSee \"acpd run --help\".\n", msg)
	return exitError(exitUsage)
}

// runRun implements `acpd run`.
func runRun(ctx context.Context, g *globalFlags, f *runFlags, args []string) error {
	// Usage checks first: nothing is started for a bad command line.
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
	cfg := loader.User()
	lg, closeLog, err := openLogger(cfg)
	if err != nil {
		return err
	}
	defer closeLog.Close()
	if cfg.Log.Level == "" {
		lg.SetLevel(log.WarnLevel) // stderr is for the person reading the run
	}

	r := &runner{
		flags:  f,
		log:    lg,
		stdout: os.Stdout,
		stderr: os.Stderr,
		cancel: make(chan struct{}),
		tools:  map[acp.ToolCallID]*toolNote{},
		askTTY: isTerminal(os.Stdin),
		// On a terminal, summaries on stderr start on a line of their own.
		breakLines: isTerminal(os.Stdout) && isTerminal(os.Stderr),
	}
	r.printer.enc = json.NewEncoder(r.stdout)
	r.printer.enc.SetEscapeHTML(false)
	defer r.closeTTY()

	var transport client.Transport
	if argv == nil {
		a, closeModels, err := newLocalAgent(loader, lg)
		if err != nil {
			return err
		}
		defer closeModels.Close()
		transport = &client.ServeTransport{Serve: a.Serve}
	} else {
		transport = &client.CommandTransport{Command: argv, Dir: cwd, Stderr: os.Stderr}
	}

	// The connection outlives the first SIGINT (which cancels ctx): the turn
	// is cancelled through ACP, and only a second signal aborts.
	base, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()

	title := "acpd run"
	conn, err := client.Dial(base, transport, client.Options{
		Cwd:        cwd,
		Permission: r.permission,
		OnUpdate:   r.update,
		Logger:     slog.New(lg),
		Env:        terminal.FilterEnv(os.Environ(), cfg.Env.Allow),
		Sandbox:    runTerminalSandbox(loader, cwd, argv != nil),
	}, &client.DialOptions{
		Info:         acp.Implementation{Name: "acpd run", Title: &title, Version: acpdVersion()},
		MaxLineBytes: cfg.Protocol.MaxLineBytes,
	})
	if err != nil {
		return err
	}

	// Signals: the first cancels the turn, the second aborts.
	sigc := make(chan os.Signal, 2)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	sigDone := make(chan struct{})
	var sigWG sync.WaitGroup
	sigWG.Add(1)
	go func() {
		defer sigWG.Done()
		r.watchSignals(base, sigc, sigDone, abort)
	}()

	err = r.session(base, conn, cwd, prompt)

	signal.Stop(sigc)
	close(sigDone)
	sigWG.Wait()
	r.finishOutput()
	if serr := conn.Close(); serr != nil && err == nil && !r.aborted() {
		lg.Debug("agent ended", "err", serr)
	}
	if r.aborted() {
		return exitError(exitCancelled)
	}
	return err
}

// runner is the state of one `acpd run`.
type runner struct {
	flags  *runFlags
	log    *log.Logger
	stdout io.Writer
	stderr io.Writer

	// askTTY reports whether stdin is a terminal to ask permissions on.
	askTTY bool
	// breakLines ends a partial line of the answer before a summary line.
	breakLines bool

	mu        sync.Mutex
	sess      *client.Session // once the prompt is about to be sent
	cancelled bool            // session/cancel was sent
	cancel    chan struct{}   // closed with cancelled: pending questions end
	abortedB  bool            // a second signal (or a signal before the turn)

	printer struct {
		enc      *json.Encoder
		midLine  bool // stdout does not end with a newline
		thinking bool
		lastMsg  acp.MessageID // of the last agent text
		// sinceText: tool calls or a plan came after the last agent text.
		sinceText bool
	}
	tools map[acp.ToolCallID]*toolNote // tool calls not ended yet (guarded by mu)

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
func (r *runner) watchSignals(ctx context.Context, sigc <-chan os.Signal, done <-chan struct{}, abort func()) {
	for {
		select {
		case <-done:
			return
		case <-sigc:
		}
		r.mu.Lock()
		first := !r.cancelled && r.sess != nil
		sess := r.sess
		if first {
			r.cancelled = true
			close(r.cancel)
		} else {
			r.abortedB = true
		}
		r.mu.Unlock()
		if !first {
			fmt.Fprintln(r.stderr, "\nacpd run: aborted")
			abort()
			continue
		}
		fmt.Fprintln(r.stderr, "\nacpd run: cancelling the turn (interrupt again to exit)")
		nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if err := sess.Cancel(nctx); err != nil {
			r.log.Warn("sending session/cancel", "err", err)
		}
		cancel()
	}
}

// session opens the session, sets the mode and runs the prompt; its error
// decides the exit status.
func (r *runner) session(ctx context.Context, conn *client.Conn, cwd, prompt string) error {
	p := client.SessionParams{Cwd: cwd}
	var sess *client.Session
	var err error
	if r.flags.session == "" {
		sess, err = conn.NewSession(ctx, p)
	} else {
		sess, err = conn.ResumeSession(ctx, acp.SessionID(r.flags.session), p)
		if errors.Is(err, client.ErrCannotResume) {
			err = fmt.Errorf("%w (--session)", err)
		}
	}
	if err != nil {
		return err
	}

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

	res, err := sess.Prompt(ctx, acp.ContentBlock{Text: &acp.TextContent{Text: prompt}})
	if err != nil && !errors.Is(err, client.ErrUnknownStopReason) {
		if r.aborted() {
			return nil
		}
		return err
	}
	if r.flags.json {
		r.writeJSON(res)
	}
	if err != nil {
		return err
	}
	switch res.StopReason {
	case acp.StopReasonEndTurn:
		return nil
	case acp.StopReasonCancelled:
		return exitError(exitCancelled)
	default: // refusal, max_tokens, max_turn_requests
		r.finishOutput()
		fmt.Fprintf(r.stderr, "acpd run: the turn stopped: %s\n", res.StopReason)
		return exitError(exitStopped)
	}
}

// writeJSON prints v as one line on stdout. Callers hold no lock.
func (r *runner) writeJSON(v any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.printer.enc.Encode(v); err != nil {
		r.log.Warn("writing to stdout", "err", err)
	}
}

// update prints one session/update (client.Options.OnUpdate; it runs on the
// connection's read loop).
func (r *runner) update(n acp.SessionNotification) {
	if r.flags.json {
		r.writeJSON(n)
		return
	}
	u := n.Update
	r.mu.Lock()
	defer r.mu.Unlock()
	p := &r.printer
	if u.AgentThoughtChunk == nil {
		p.thinking = false
	}
	if u.AgentMessageChunk == nil && u.AgentThoughtChunk == nil {
		p.sinceText = u.ToolCall != nil || u.ToolCallUpdate != nil || u.Plan != nil || p.sinceText
	}
	switch {
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil && t.Text != "" {
			var id acp.MessageID
			if m := u.AgentMessageChunk.MessageID; m != nil {
				id = *m
			}
			if p.midLine && (p.sinceText || id != p.lastMsg) {
				io.WriteString(r.stdout, "\n") // a new message starts on a new line
			}
			p.lastMsg, p.sinceText = id, false
			if _, err := io.WriteString(r.stdout, t.Text); err != nil {
				r.log.Warn("writing to stdout", "err", err)
			}
			p.midLine = !strings.HasSuffix(t.Text, "\n")
		}
	case u.AgentThoughtChunk != nil:
		if !p.thinking {
			p.thinking = true
			r.note("… thinking")
		}
	case u.ToolCall != nil:
		tc := u.ToolCall
		r.tools[tc.ToolCallID] = &toolNote{title: tc.Title}
		r.toolStatus(tc.ToolCallID, tc.Status)
	case u.ToolCallUpdate != nil:
		tc := u.ToolCallUpdate
		t := r.tools[tc.ToolCallID]
		if t == nil {
			t = &toolNote{title: "tool call"}
			r.tools[tc.ToolCallID] = t
		}
		if tc.Title != nil {
			t.title = *tc.Title
		}
		if tc.Status != nil {
			r.toolStatus(tc.ToolCallID, *tc.Status)
		}
	case u.Plan != nil:
		r.note("▸ plan")
		for _, e := range u.Plan.Entries {
			mark := "[ ]"
			switch e.Status {
			case acp.PlanEntryStatusCompleted:
				mark = "[x]"
			case acp.PlanEntryStatusInProgress:
				mark = "[~]"
			}
			r.note("  " + mark + " " + oneLine(e.Content))
		}
	}
}

// toolNote is what the summary knows of a tool call.
type toolNote struct {
	title   string
	started bool // "▸ title" was printed
}

// toolStatus notes a tool call that started or ended (r.mu held). Titles
// often become precise only after the call was announced, so the start is
// printed when the call runs.
func (r *runner) toolStatus(id acp.ToolCallID, s acp.ToolCallStatus) {
	t := r.tools[id]
	switch s {
	case acp.ToolCallStatusInProgress:
		if !t.started {
			t.started = true
			r.note("▸ " + t.title)
		}
	case acp.ToolCallStatusCompleted:
		r.note("✓ " + t.title)
		delete(r.tools, id)
	case acp.ToolCallStatusFailed:
		r.note("✗ " + t.title)
		delete(r.tools, id)
	}
}

// note prints one summary line on stderr (r.mu held).
func (r *runner) note(s string) {
	if r.breakLines && r.printer.midLine { // breakLine, with r.mu held
		io.WriteString(r.stdout, "\n")
		r.printer.midLine = false
	}
	fmt.Fprintln(r.stderr, oneLine(s))
}

// breakLine ends a partial line of the answer on a terminal, before text on
// stderr.
func (r *runner) breakLine() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.breakLines && r.printer.midLine {
		io.WriteString(r.stdout, "\n")
		r.printer.midLine = false
	}
}

// finishOutput ends streamed text with a newline.
func (r *runner) finishOutput() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.printer.midLine {
		io.WriteString(r.stdout, "\n")
		r.printer.midLine = false
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// permission answers session/request_permission (client.Options.Permission).
func (r *runner) permission(ctx context.Context, req acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	cancelled := acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}
	r.mu.Lock()
	wasCancelled := r.cancelled
	r.mu.Unlock()
	if wasCancelled {
		return cancelled, nil
	}
	title := "a tool call"
	if req.ToolCall.Title != nil {
		title = *req.ToolCall.Title
	} else if t, ok := r.toolTitle(req.ToolCall.ToolCallID); ok {
		title = t
	}
	switch {
	case r.flags.yes:
		return client.Select(req.Options, acp.PermissionOptionKindAllowOnce, acp.PermissionOptionKindAllowAlways), nil
	case !r.askTTY:
		r.breakLine()
		fmt.Fprintf(r.stderr, "acpd run: rejected %q: stdin is not a terminal to ask on (pass --yes to allow)\n", oneLine(title))
		return client.Select(req.Options, acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways), nil
	}
	return r.ask(ctx, title, req.Options)
}

func (r *runner) toolTitle(id acp.ToolCallID) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tools[id]
	if !ok {
		return "", false
	}
	return t.title, true
}

// ask asks the person on the terminal to choose an option. It fails closed:
// the end of the terminal's input rejects.
func (r *runner) ask(ctx context.Context, title string, options []acp.PermissionOption) (acp.RequestPermissionResponse, error) {
	r.askMu.Lock()
	defer r.askMu.Unlock()
	reject := client.Select(options, acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways)
	tty, err := r.openTTY()
	if err != nil {
		r.log.Warn("cannot read the terminal; rejecting", "err", err)
		return reject, nil
	}
	r.breakLine()
	for {
		fmt.Fprintf(r.stderr, "? %s\n", oneLine(title))
		for i, o := range options {
			fmt.Fprintf(r.stderr, "  %d) %s\n", i+1, oneLine(o.Name))
		}
		fmt.Fprintf(r.stderr, "choose [1-%d]: ", len(options))
		select {
		case <-ctx.Done():
			fmt.Fprintln(r.stderr)
			return acp.RequestPermissionResponse{}, ctx.Err()
		case <-r.cancel:
			fmt.Fprintln(r.stderr)
			return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, nil
		case line, ok := <-tty.lines:
			if !ok {
				fmt.Fprintln(r.stderr, "\nacpd run: end of input; rejecting")
				return reject, nil
			}
			if n, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && n >= 1 && n <= len(options) {
				return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
					Selected: &acp.SelectedPermissionOutcome{OptionID: options[n-1].OptionID},
				}}, nil
			}
		}
	}
}

// ttyReader reads lines of the terminal on standard input. Its goroutine is
// owned by the runner: closeTTY closes the file (a fresh non-blocking open, so
// Close interrupts a pending read and the shell's terminal stays blocking) and
// waits for it.
type ttyReader struct {
	f     *os.File
	lines chan string // unbuffered; closed at end of input
	stop  chan struct{}
	wg    sync.WaitGroup
}

func (r *runner) openTTY() (*ttyReader, error) {
	var err error
	r.ttyOnce.Do(func() {
		var f *os.File
		f, err = os.OpenFile("/proc/self/fd/0", os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		t := &ttyReader{f: f, lines: make(chan string), stop: make(chan struct{})}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			defer close(t.lines)
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				select {
				case t.lines <- sc.Text():
				case <-t.stop:
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
