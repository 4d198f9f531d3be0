package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"acpd/acp"
	"acpd/internal/cmdshell"
	"acpd/internal/lazy"
	"acpd/model"
	"acpd/permissions"
	"acpd/sandbox"
	"acpd/terminal"
)

// run_command limits.
const (
	defaultCommandTimeout = 120 * time.Second
	maxCommandTimeout     = 600 * time.Second
	commandOutputLimit    = 1 << 20
	commandPoll           = 250 * time.Millisecond
	// shownOutputBytes bounds the output shown in a tool call's content.
	shownOutputBytes = 16 << 10
	// cleanupTimeout bounds killing and releasing a terminal after a turn
	// ended (cancel, timeout): it must not hang the turn's reply.
	cleanupTimeout = 5 * time.Second
)

// Shell is the shell run_command runs command lines with, as a command
// prefix (see internal/cmdshell: bash when installed, else /bin/sh, on
// Windows Git's bash, else PowerShell).
func Shell() string { return shell.Get().String() }

var shell = lazy.Value[cmdshell.Shell]{New: cmdshell.Find}

// commandEnv is what every command gets so nothing waits for a person.
var commandEnv = []terminal.EnvVar{
	{Name: "PAGER", Value: "cat"},
	{Name: "GIT_PAGER", Value: "cat"},
	{Name: "GIT_TERMINAL_PROMPT", Value: "0"},
	{Name: "GIT_EDITOR", Value: "true"},
	{Name: "EDITOR", Value: "true"},
}

// withEnv returns base plus the "NAME=value" entries of extra (the
// sandbox's, from Policy.Command), in a new slice.
func withEnv(base []terminal.EnvVar, extra []string) []terminal.EnvVar {
	out := slices.Clip(base)
	for _, e := range extra {
		name, value, _ := strings.Cut(e, "=")
		out = append(out, terminal.EnvVar{Name: name, Value: value})
	}
	return out
}

func runCommandTool(o Options) *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name: "run_command",
			Description: shellPhrase("Run a shell command line with bash -c in the working directory (or cwd). ") +
				"Each call is a fresh shell: cd, export and shell variables do not carry over to the next call, so pass cwd (or chain: cd dir && make). " +
				"Standard input is at end of file and pagers are disabled; never run interactive or watching commands (editors, REPLs, less, top, \"npm run dev\", \"--watch\"): they hang until the timeout. " +
				"Returns the combined output (terminal control sequences resolved) and the exit status; long output is cut at line boundaries to its first and last 30 KB, and the whole output (up to 64 MiB) is saved to a file named in the note, which read_file and grep can search. " +
				"timeout_ms defaults to 120000, at most 600000. " +
				"For a server or another long-running process, set run_in_background: the call returns a job id at once; read the job's output with job_output and stop it with job_stop (background jobs end with the session). " +
				"Commands may run in a sandbox (writes only in the project and the temp dir, .git read-only, maybe no network). " +
				"When a command needs more (the sandbox denied it something it must do), call again with sandbox_permissions \"require_escalated\" and a justification, one sentence the user reads: the user is asked every time before it runs outside the sandbox. Never escalate to work around a failure you were not asked to fix.",
			InputSchema: schema(`{"type":"object","properties":{"command":{"type":"string","description":"The command line"},"cwd":{"type":"string","description":"Directory to run in (default: the working directory)"},"timeout_ms":{"type":"integer","minimum":1,"description":"Time limit (default 120000, at most 600000); not for background jobs"},"run_in_background":{"type":"boolean","description":"Start the command as a background job and return at once"},"sandbox_permissions":{"type":"string","enum":["use_default","require_escalated"],"description":"require_escalated: ask the user to run this command outside the sandbox (needs justification)"},"justification":{"type":"string","description":"With require_escalated: why the command must run outside the sandbox, shown to the user"}},"required":["command"],"additionalProperties":false}`),
		},
		Kind:  acp.ToolKindExecute,
		Title: commandTitle,
		Run: func(ctx context.Context, env Env, c *Call) Result {
			return runCommand(ctx, o, env, c)
		},
	}
}

// shellPhrase names PowerShell instead of bash -c in s when run_command
// runs PowerShell (Windows without Git's bash).
func shellPhrase(s string) string {
	if sh := shell.Get(); sh.WholeLine() {
		return strings.Replace(s, "bash -c", "PowerShell ("+sh.Name+" -Command; write PowerShell, not bash)", 1)
	}
	return s
}

func commandTitle(in json.RawMessage) string {
	var p struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(in, &p)
	if strings.TrimSpace(p.Command) == "" {
		return "Run a command"
	}
	// Verbatim: the title is what the user approves (Zed shows nothing
	// else of an execute call), so no prefix, no cut and every newline
	// kept, which would otherwise hide a second command.
	return p.Command
}

// The sandbox_permissions values.
const (
	sandboxDefault   = "use_default"
	sandboxEscalated = "require_escalated"
)

// EscalationMeta is the _meta key of a permission request to run a command
// outside the sandbox (its value: {"reason": ..., "requestedBy": "model" or
// "acpd"}), so that a client answering permissions by policy (acpd run)
// can tell it from an ordinary command.
const EscalationMeta = "acpd_escalation"

// EscalationTitlePrefix starts the title of such a request.
const EscalationTitlePrefix = "Run outside the sandbox: "

// runCommandInput is run_command's arguments.
type runCommandInput struct {
	Command       string `json:"command"`
	Cwd           string `json:"cwd"`
	TimeoutMS     int64  `json:"timeout_ms"`
	Background    bool   `json:"run_in_background"`
	Permissions   string `json:"sandbox_permissions"`
	Justification string `json:"justification"`
}

func runCommand(ctx context.Context, o Options, env Env, c *Call) Result {
	in, err := DecodeInput[runCommandInput](c.Input)
	if err != nil {
		return Errorf("invalid run_command arguments: %v", err)
	}
	if strings.TrimSpace(in.Command) == "" {
		return Errorf("command is empty")
	}
	switch in.Permissions {
	case "", sandboxDefault:
	case sandboxEscalated:
		if strings.TrimSpace(in.Justification) == "" {
			return Errorf("sandbox_permissions %q needs a justification: one sentence, shown to the user, saying why the command must run outside the sandbox", sandboxEscalated)
		}
	default:
		return Errorf("sandbox_permissions is %q or %q, not %q", sandboxDefault, sandboxEscalated, in.Permissions)
	}
	dir, err := env.Resolve(in.Cwd)
	if err != nil {
		return Errorf("cwd: %v", err)
	}
	if st, err := os.Stat(dir.Path); err != nil || !st.IsDir() {
		return Errorf("cwd %s is not a directory", in.Cwd)
	}
	timeout := defaultCommandTimeout
	if in.TimeoutMS > 0 {
		timeout = min(time.Duration(in.TimeoutMS)*time.Millisecond, maxCommandTimeout)
	}
	// Prepared before asking: the helper refuses to start if the approved
	// directory is swapped (for a link to elsewhere) in the meantime.
	pol := env.Sandbox()
	sh := shell.Get()
	argv := sh.Argv(in.Command)
	prog, wrapped, penv, err := pol.Command(sh.Path, argv, dir.Path)
	unsandboxed := errors.Is(err, sandbox.ErrUnavailable)
	if unsandboxed {
		prog, wrapped, penv, err = sandbox.Policy{Mode: sandbox.Off}.Command(sh.Path, argv, dir.Path)
	}
	if err != nil {
		return Errorf("preparing the command: %v", err)
	}
	title := commandTitle(c.Input)
	kind := acp.ToolKindExecute
	upd := acp.ToolCallUpdate{Title: &title, Kind: &kind, RawInput: c.Input}
	call := permissions.Call{Tool: c.Name, Kind: kind, Command: in.Command, WholeLine: sh.WholeLine(), Paths: []permissions.Path{permPath(dir)}, Unsandboxed: unsandboxed}

	// Escalation: only on the model's explicit request, or for a git
	// command that writes the repository the sandbox keeps read-only;
	// never because of what a command printed. It asks in every mode.
	sandboxed := pol.Mode != sandbox.Off && !unsandboxed
	reason, by := "", ""
	switch {
	case !sandboxed:
	case in.Permissions == sandboxEscalated:
		reason, by = strings.TrimSpace(in.Justification), "model"
	case !sh.WholeLine():
		if gitDir, ok := pol.ProtectedGitDir(dir.Path); ok {
			if sub, ok := permissions.GitWrite(in.Command); ok {
				reason, by = fmt.Sprintf("%s writes to .git (%s), which the sandbox keeps read-only", sub, display(env, gitDir)), "acpd"
			}
		}
	}
	if reason != "" {
		if prog, wrapped, penv, err = (sandbox.Policy{Mode: sandbox.Off}).Command(sh.Path, argv, dir.Path); err != nil {
			return Errorf("preparing the command: %v", err)
		}
		escTitle := EscalationTitlePrefix + title
		who := "The model asks to run this command outside the sandbox"
		if by == "acpd" {
			who = "This command cannot work inside the sandbox"
		}
		note := fmt.Sprintf("%s: %s\n\nOutside the sandbox (%s) it runs with all your rights: it can write anywhere you can and use the network.\n\n%s", who, reason, pol.Describe(), in.Command)
		escUpd := acp.ToolCallUpdate{Title: &escTitle, Kind: &kind, RawInput: c.Input, Content: []acp.ToolCallContent{TextContent(note)},
			Meta: map[string]any{EscalationMeta: map[string]any{"reason": reason, "requestedBy": by}}}
		call.Escalate = true
		if ok, why := env.Authorize(ctx, c, call, escUpd); !ok {
			return Errorf("%s; running the command outside the sandbox (%s) was not approved: %s", reason, pol.Describe(), why)
		}
	} else if ok, why := env.Authorize(ctx, c, call, upd); !ok {
		return Errorf("%s", why)
	}
	spec := terminal.Spec{
		Command:         prog,
		Args:            wrapped[1:],
		Env:             withEnv(commandEnv, penv),
		Cwd:             dir.Path,
		OutputByteLimit: commandOutputLimit,
		StdinEOF:        true,
		BaseEnv:         env.ChildEnv(),
	}
	if in.Background {
		return startJob(ctx, env, c, spec, in.Command)
	}
	var unprotected []string
	if reason == "" && !unsandboxed && runtime.GOOS == "linux" {
		unprotected = pol.Unprotected()
	}
	res, output := execCommand(ctx, o, env, c, spec, timeout)
	if reason != "" {
		res.Text = "[the user approved running the command outside the sandbox]\n" + res.Text
		return res
	}
	for _, p := range unprotected {
		if _, err := os.Lstat(p); err == nil {
			addNote(&res, fmt.Sprintf("[warning: the command created %s, a protected path the sandbox could not guard because it did not exist; the user should review it]", display(env, p)))
		}
	}
	if !sandboxed || !res.IsError || ctx.Err() != nil {
		return res
	}
	// A write the sandbox refused into a protected path (git add and
	// commit write .git): say so, naming the path, so that the model asks
	// instead of retrying variants.
	if note := pol.Explain(output, dir.Path); note != "" {
		addNote(&res, note)
	}
	// Tell the model (only) how to ask for more; the words of the output
	// never make acpd ask by themselves.
	if denial := sandbox.Denied(output); denial != "" {
		addNote(&res, fmt.Sprintf("[the sandbox (%s) may have denied this (%s). If the command must run outside the sandbox, call run_command again with sandbox_permissions %q and a justification; the user will be asked]", pol.Describe(), denial, sandboxEscalated))
	}
	return res
}

// addNote appends a line of acpd's own to a command's result, for the
// model and, where the result shows the output as text (not a terminal),
// for the user.
func addNote(res *Result, note string) {
	res.Text += note + "\n"
	if len(res.Content) > 0 && res.Content[0].Terminal == nil {
		res.Content = []acp.ToolCallContent{TextContent(fence(tailBytes(res.Text, shownOutputBytes)))}
	}
}

// execCommand starts spec, streams its output to the client and waits for
// it (at most timeout); it returns the tool result and the rendered output.
func execCommand(ctx context.Context, o Options, env Env, c *Call, spec terminal.Spec, timeout time.Duration) (Result, string) {
	id := acp.ToolCallID(c.ID)
	// A local terminal gives the collector its whole output (the editor's
	// keep what they keep, see tailOutput).
	col := newOutputCollector(env.Jobs())
	spec.Tee = col
	defer col.finish()
	term, err := env.StartTerminal(ctx, spec)
	if err != nil {
		if term.InEditor {
			return Errorf("starting the command in the editor's terminal: %v", err), ""
		}
		return Errorf("starting the command: %v", err), ""
	}
	editorOwned, meta := term.InEditor, term.OutputMeta && !term.InEditor
	if editorOwned {
		env.Update(acp.ToolCallUpdate{ToolCallID: id, Content: []acp.ToolCallContent{{Terminal: &acp.Terminal{TerminalID: acp.TerminalID(term.ID())}}}})
	}
	if meta {
		env.Update(acp.ToolCallUpdate{ToolCallID: id, Meta: map[string]any{"terminal_info": map[string]any{"terminal_id": term.ID()}}})
	}
	release := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if err := term.Release(rctx); err != nil && !errors.Is(err, terminal.ErrReleased) {
			o.Logger.Debug("releasing terminal", "terminal", term.ID(), "err", err)
		}
	}
	released := false
	defer func() {
		if !released {
			release()
		}
	}()

	sent := "" // output already sent as terminal_output
	var progress func(terminal.Output, string)
	if !editorOwned { // the editor shows its terminal's output itself
		progress = func(o terminal.Output, delta string) {
			u := acp.ToolCallUpdate{ToolCallID: id, Content: []acp.ToolCallContent{TextContent(fence(tailBytes(terminal.RenderText([]byte(o.Output)), shownOutputBytes)))}}
			if meta && delta != "" {
				u.Meta = map[string]any{"terminal_output": map[string]any{"terminal_id": term.ID(), "data": delta}}
				sent = o.Output
			}
			env.Update(u)
		}
	}
	status, timedOut, waitErr := waitCommand(ctx, term, timeout, progress)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	final, err := term.Output(cctx)
	if err != nil && waitErr == nil {
		waitErr = err
	}
	if meta && final.Output != sent {
		// Output that arrived after the last poll (all of it for a quick
		// command): the client's terminal shows only what it is sent.
		delta := strings.TrimPrefix(final.Output, sent)
		env.Update(acp.ToolCallUpdate{ToolCallID: id, Meta: map[string]any{"terminal_output": map[string]any{"terminal_id": term.ID(), "data": delta}}})
	}
	if meta {
		exit := map[string]any{"terminal_id": term.ID(), "exit_code": nil, "signal": nil}
		if status.ExitCode != nil {
			exit["exit_code"] = *status.ExitCode
		}
		if status.Signal != nil {
			exit["signal"] = *status.Signal
		}
		env.Update(acp.ToolCallUpdate{ToolCallID: id, Meta: map[string]any{"terminal_exit": exit}})
	}
	text := terminal.RenderText([]byte(final.Output))
	var shown string
	cut := final.Truncated
	switch {
	case !editorOwned:
		// Everything the terminal read went through the collector.
		col.finish()
		shown, cut = col.report(false)
	case final.Truncated:
		shown = tailOutput(env, text, "the editor's terminal kept", commandOutputLimit)
	default:
		shown, cut = boundOutput(env, text)
	}
	var b strings.Builder
	b.WriteString(shown)
	if shown != "" && !strings.HasSuffix(shown, "\n") {
		b.WriteByte('\n')
	}
	raw := map[string]any{"exitCode": status.ExitCode, "signal": status.Signal}
	if cut {
		raw["truncated"] = true
	}
	res := Result{Raw: raw, Bounded: true}
	card, own := "", false // the card's text, when it differs from the model's
	switch {
	case ctx.Err() != nil:
		raw["cancelled"] = true
		b.WriteString("[cancelled by the user; the command was stopped]\n")
		res.IsError = true
	case timedOut:
		raw["timedOut"] = true
		fmt.Fprintf(&b, "[timed out after %s; the command was stopped]\n", timeout)
		res.IsError = true
	case waitErr != nil:
		fmt.Fprintf(&b, "[waiting for the command failed: %v]\n", waitErr)
		res.IsError = true
	case status.ExitCode != nil:
		if *status.ExitCode == 0 {
			// The card shows success by its status and rawOutput; only
			// the model reads it as text.
			card, own = b.String(), true
		}
		fmt.Fprintf(&b, "[exit code %d]\n", *status.ExitCode)
		res.IsError = *status.ExitCode != 0
	case status.Signal != nil:
		fmt.Fprintf(&b, "[killed by %s]\n", *status.Signal)
		res.IsError = true
	}
	res.Text = b.String()
	if !own {
		card = res.Text
	}
	if editorOwned {
		// The live terminal stays the call's content to the end; it is
		// released only after the final update that shows it.
		res.Content = []acp.ToolCallContent{{Terminal: &acp.Terminal{TerminalID: acp.TerminalID(term.ID())}}}
		released, res.After = true, release
	} else {
		res.Content = []acp.ToolCallContent{TextContent(fence(tailBytes(card, shownOutputBytes)))}
	}
	return res, text
}

// waitCommand waits for term to exit, calling progress with new output while
// it runs. On timeout or cancel it kills the command's process group and
// waits (bounded) for it.
func waitCommand(ctx context.Context, term terminal.Terminal, timeout time.Duration, progress func(o terminal.Output, delta string)) (status terminal.ExitStatus, timedOut bool, err error) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type result struct {
		st  terminal.ExitStatus
		err error
	}
	done := make(chan result, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		st, err := term.WaitForExit(wctx)
		done <- result{st, err}
	}()
	defer wg.Wait()
	var ticks <-chan time.Time // nil (never) without progress: nobody reads the output
	if progress != nil {
		tick := time.NewTicker(commandPoll)
		defer tick.Stop()
		ticks = tick.C
	}
	last := ""
	for {
		select {
		case r := <-done:
			if r.err == nil {
				return r.st, false, nil
			}
			timedOut = ctx.Err() == nil && errors.Is(wctx.Err(), context.DeadlineExceeded)
			kctx, kcancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			defer kcancel()
			if kerr := term.Kill(kctx); kerr != nil {
				return terminal.ExitStatus{}, timedOut, kerr
			}
			st, werr := term.WaitForExit(kctx)
			if werr != nil {
				return st, timedOut, werr
			}
			return st, timedOut, nil
		case <-ticks:
			o, err := term.Output(wctx)
			if err != nil || o.Output == last {
				continue
			}
			delta := strings.TrimPrefix(o.Output, last)
			last = o.Output
			progress(o, delta)
		}
	}
}

// fence wraps command output in a Markdown code block for the editor,
// with a fence longer than any run of backticks in s, so the output cannot
// end the block early.
func fence(s string) string {
	n, run := 3, 0
	for i := 0; i < len(s); i++ {
		if s[i] != '`' {
			run = 0
			continue
		}
		if run++; run >= n {
			n = run + 1
		}
	}
	f := strings.Repeat("`", n)
	return f + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

// Fence is command output as the editor is shown it: a Markdown code
// block, so the output stays text ("# x" is no heading).
func Fence(output string) string { return fence(tailBytes(output, shownOutputBytes)) }

// tailBytes keeps the last n bytes of s, cut at a character boundary.
func tailBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !isRuneStart(s[i]) {
		i++
	}
	return "…" + s[i:]
}
