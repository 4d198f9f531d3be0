package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strings"
	"sync"
	"time"

	"acpd/acp"
	"acpd/model"
	"acpd/permissions"
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

var (
	shellOnce sync.Once
	shellPath string
)

// shell is bash when installed, else /bin/sh.
func shell() string {
	shellOnce.Do(func() {
		shellPath = "/bin/sh"
		if p, err := exec.LookPath("bash"); err == nil {
			shellPath = p
		}
	})
	return shellPath
}

// commandEnv is what every command gets so nothing waits for a person.
var commandEnv = []terminal.EnvVar{
	{Name: "PAGER", Value: "cat"},
	{Name: "GIT_PAGER", Value: "cat"},
	{Name: "GIT_TERMINAL_PROMPT", Value: "0"},
	{Name: "GIT_EDITOR", Value: "true"},
	{Name: "EDITOR", Value: "true"},
}

// childEnv is the base environment of the session's children (commands and
// stdio MCP servers): Options.Env without the variables the configured
// providers read their API keys from (api_key_env), whatever their names,
// unless [env] allow names them.
func (s *sess) childEnv() []string {
	base := s.a.opts.Env
	if base == nil {
		base = terminal.FilterEnv(os.Environ(), nil)
	}
	keys := map[string]bool{}
	for _, p := range s.cfg.Providers {
		if p.APIKeyEnv != "" && !envAllowed(p.APIKeyEnv, s.cfg.Env.Allow) {
			keys[p.APIKeyEnv] = true
		}
	}
	if len(keys) == 0 {
		return base
	}
	out := make([]string, 0, len(base))
	for _, kv := range base {
		if name, _, _ := strings.Cut(kv, "="); !keys[name] {
			out = append(out, kv)
		}
	}
	return out
}

// envAllowed reports whether [env] allow lets name through (an exact name
// or a path.Match pattern, as terminal.FilterEnv reads it).
func envAllowed(name string, allow []string) bool {
	for _, a := range allow {
		if ok, err := path.Match(a, name); a == name || err == nil && ok {
			return true
		}
	}
	return false
}

// wantsTerminalMeta reports Zed's terminal-output extension
// (clientCapabilities._meta.terminal_output = true).
func (a *Agent) wantsTerminalMeta() bool {
	caps := a.clientCapabilities()
	v, ok := caps.Meta["terminal_output"].(bool)
	return ok && v
}

var runCommandTool = &tool{
	def: model.ToolDef{
		Name:        "run_command",
		Description: "Run a shell command line with bash -c in the working directory (or cwd). Standard input is at end of file and pagers are disabled. Returns the combined output (terminal control sequences resolved) and the exit status. timeout_ms defaults to 120000, at most 600000.",
		InputSchema: schema(`{"type":"object","properties":{"command":{"type":"string"},"cwd":{"type":"string","description":"Directory to run in (default: the working directory)"},"timeout_ms":{"type":"integer","minimum":1}},"required":["command"],"additionalProperties":false}`),
	},
	kind:  acp.ToolKindExecute,
	title: commandTitle,
	run:   runCommand,
}

func commandTitle(in json.RawMessage) string {
	var p struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(in, &p)
	return "Run " + truncate(strings.Join(strings.Fields(p.Command), " "), 80)
}

func runCommand(ctx context.Context, s *sess, tc *toolCall) toolResult {
	in, err := decodeInput[struct {
		Command   string `json:"command"`
		Cwd       string `json:"cwd"`
		TimeoutMS int64  `json:"timeout_ms"`
	}](tc)
	if err != nil {
		return errResult("invalid run_command arguments: %v", err)
	}
	if strings.TrimSpace(in.Command) == "" {
		return errResult("command is empty")
	}
	dir, err := s.resolve(in.Cwd)
	if err != nil {
		return errResult("cwd: %v", err)
	}
	if st, err := os.Stat(dir.res.Path); err != nil || !st.IsDir() {
		return errResult("cwd %s is not a directory", in.Cwd)
	}
	timeout := defaultCommandTimeout
	if in.TimeoutMS > 0 {
		timeout = min(time.Duration(in.TimeoutMS)*time.Millisecond, maxCommandTimeout)
	}
	title := commandTitle(tc.input)
	kind := acp.ToolKindExecute
	upd := acp.ToolCallUpdate{Title: &title, Kind: &kind, RawInput: tc.input}
	if ok, why := s.authorize(ctx, tc, permissions.Call{Tool: tc.name, Command: in.Command, Paths: []permissions.Path{dir.perm}}, upd); !ok {
		return errResult("%s", why)
	}
	spec := terminal.Spec{
		Command:         shell(),
		Args:            []string{"-c", in.Command},
		Env:             commandEnv,
		Cwd:             dir.res.Path,
		OutputByteLimit: commandOutputLimit,
		StdinEOF:        true,
		BaseEnv:         s.childEnv(),
	}
	out := s.a.baseContext()
	id := acp.ToolCallID(tc.id)
	editorOwned := s.a.clientCapabilities().Terminal
	var term terminal.Terminal
	if editorOwned {
		et, err := s.a.startEditorTerminal(ctx, s.id, spec)
		if err != nil {
			return errResult("starting the command in the editor's terminal: %v", err)
		}
		term = et
		s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: id, Content: []acp.ToolCallContent{{Terminal: &acp.Terminal{TerminalID: acp.TerminalID(et.ID())}}}}})
	} else {
		lt, err := s.a.terms.Start(ctx, spec)
		if err != nil {
			return errResult("starting the command: %v", err)
		}
		term = lt
	}
	meta := !editorOwned && s.a.wantsTerminalMeta()
	if meta {
		s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: id, Meta: map[string]any{"terminal_info": map[string]any{"terminal_id": term.ID()}}}})
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if err := term.Release(rctx); err != nil && !errors.Is(err, terminal.ErrReleased) {
			s.a.log.Debug("releasing terminal", "terminal", term.ID(), "err", err)
		}
	}()

	sent := "" // output already sent as terminal_output
	status, timedOut, waitErr := s.waitCommand(ctx, term, timeout, func(o terminal.Output, delta string) {
		if editorOwned {
			return
		}
		u := &acp.ToolCallUpdate{ToolCallID: id, Content: []acp.ToolCallContent{textToolContent(fence(tailBytes(terminal.RenderText([]byte(o.Output)), shownOutputBytes)))}}
		if meta && delta != "" {
			u.Meta = map[string]any{"terminal_output": map[string]any{"terminal_id": term.ID(), "data": delta}}
			sent = o.Output
		}
		s.notify(out, acp.SessionUpdate{ToolCallUpdate: u})
	})
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	final, err := term.Output(cctx)
	if err != nil && waitErr == nil {
		waitErr = err
	}
	if meta && final.Output != sent {
		// Output that arrived after the last poll (all of it for a quick
		// command): the client's terminal shows only what it is sent.
		delta := final.Output
		if strings.HasPrefix(delta, sent) {
			delta = delta[len(sent):]
		}
		s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: id, Meta: map[string]any{"terminal_output": map[string]any{"terminal_id": term.ID(), "data": delta}}}})
	}
	if meta {
		exit := map[string]any{"terminal_id": term.ID(), "exit_code": nil, "signal": nil}
		if status.ExitCode != nil {
			exit["exit_code"] = *status.ExitCode
		}
		if status.Signal != nil {
			exit["signal"] = *status.Signal
		}
		s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: id, Meta: map[string]any{"terminal_exit": exit}}})
	}
	text := terminal.RenderText([]byte(final.Output))
	var b strings.Builder
	b.WriteString(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	if final.Truncated {
		fmt.Fprintf(&b, "[output truncated: only the last %d bytes were kept]\n", commandOutputLimit)
	}
	res := toolResult{raw: map[string]any{"exitCode": status.ExitCode, "signal": status.Signal}}
	switch {
	case ctx.Err() != nil:
		b.WriteString("[cancelled by the user; the command was stopped]\n")
		res.isError = true
	case timedOut:
		fmt.Fprintf(&b, "[timed out after %s; the command was stopped]\n", timeout)
		res.isError = true
	case waitErr != nil:
		fmt.Fprintf(&b, "[waiting for the command failed: %v]\n", waitErr)
		res.isError = true
	case status.ExitCode != nil:
		fmt.Fprintf(&b, "[exit code %d]\n", *status.ExitCode)
		res.isError = *status.ExitCode != 0
	case status.Signal != nil:
		fmt.Fprintf(&b, "[killed by %s]\n", *status.Signal)
		res.isError = true
	}
	res.text = b.String()
	if !editorOwned {
		res.content = []acp.ToolCallContent{textToolContent(fence(tailBytes(res.text, shownOutputBytes)))}
	}
	return res
}

// waitCommand waits for term to exit, calling progress with new output while
// it runs. On timeout or cancel it kills the command's process group and
// waits (bounded) for it.
func (s *sess) waitCommand(ctx context.Context, term terminal.Terminal, timeout time.Duration, progress func(o terminal.Output, delta string)) (status terminal.ExitStatus, timedOut bool, err error) {
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
	tick := time.NewTicker(commandPoll)
	defer tick.Stop()
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
		case <-tick.C:
			o, err := term.Output(wctx)
			if err != nil || o.Output == last {
				continue
			}
			delta := o.Output
			if strings.HasPrefix(o.Output, last) {
				delta = o.Output[len(last):]
			}
			last = o.Output
			progress(o, delta)
		}
	}
}

// fence wraps command output in a Markdown code block for the editor.
func fence(s string) string {
	return "```\n" + strings.TrimRight(s, "\n") + "\n```"
}

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
