// Package hooks runs user-configured commands at points of the agent loop,
// with Claude Code's hook protocol, so that a team's hooks work unchanged:
// the command gets the event as one JSON object on stdin; exit code 2
// blocks (stderr is the reason), any other non-zero code is a non-blocking
// error; on exit 0 a JSON object on stdout may decide (decision "block",
// hookSpecificOutput.permissionDecision, continue false) and add context
// for the model (hookSpecificOutput.additionalContext, or for
// UserPromptSubmit and SessionStart plain stdout).
//
// Hooks come from acpd's TOML ([[hooks.EVENT]]) and from Claude Code's
// settings files ([ReadClaude]). Those of a project file are untrusted
// until the user approves them ([Trust]), by a digest of exactly what would
// run ([Set.Digest]). The package knows no agent: the caller builds each
// event's input, runs the matching hooks with [Runner] and shows the
// results.
package hooks

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"time"

	"acpd/internal/cmdshell"
	"acpd/internal/lazy"
	"acpd/internal/procgroup"
)

// The events acpd runs hooks for, by Claude Code's names.
const (
	SessionStart     = "SessionStart"
	UserPromptSubmit = "UserPromptSubmit"
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	Stop             = "Stop"
)

// Events lists the supported events.
var Events = []string{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop}

// DefaultTimeout bounds a hook without a timeout of its own (Claude Code's
// default).
const DefaultTimeout = 60 * time.Second

// maxOutput bounds what is kept of a hook's stdout and of its stderr.
const maxOutput = 64 << 10

// Hook is one command to run at an event.
type Hook struct {
	Event string
	// Matcher selects the tools (PreToolUse, PostToolUse) or the start
	// source (SessionStart) by regular expression, anchored; "" and "*"
	// match everything.
	Matcher string
	Command string
	// Timeout is 0 for DefaultTimeout.
	Timeout time.Duration
	// Source is the file the hook was read from.
	Source string
	// Project: the hook comes from a project file, so it runs only once
	// the user trusts it.
	Project bool
}

// Set is a session's hooks, in their files' order.
type Set []Hook

// Match returns the hooks of event whose matcher matches any of names (a
// tool's acpd name and its Claude Code alias, or a start source); for
// events without a subject pass no names. A matcher that is not a valid
// regular expression matches a name equal to it.
func (s Set) Match(event string, names ...string) []Hook {
	var out []Hook
	for _, h := range s {
		if h.Event == event && matches(h.Matcher, names) {
			out = append(out, h)
		}
	}
	return out
}

func matches(m string, names []string) bool {
	if m == "" || m == "*" || len(names) == 0 {
		return true
	}
	re, err := regexp.Compile("^(?:" + m + ")$")
	for _, n := range names {
		if n == "" {
			continue
		}
		if err != nil && n == m || err == nil && re.MatchString(n) {
			return true
		}
	}
	return false
}

// Project returns the hooks of project files.
func (s Set) Project() Set {
	var out Set
	for _, h := range s {
		if h.Project {
			out = append(out, h)
		}
	}
	return out
}

// Without returns s without the project files' hooks.
func (s Set) Without() Set {
	var out Set
	for _, h := range s {
		if !h.Project {
			out = append(out, h)
		}
	}
	return out
}

// Digest identifies exactly what the hooks would run: a change to any
// event, matcher, command, timeout or source gives another digest.
func (s Set) Digest() string {
	h := sha256.New()
	for _, k := range s {
		fmt.Fprintf(h, "%q %q %q %d %q\n", k.Event, k.Matcher, k.Command, k.Timeout, k.Source)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// claudeSettings is the hooks part of a Claude Code settings file.
type claudeSettings struct {
	Hooks map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type    string  `json:"type"`
			Command string  `json:"command"`
			Timeout float64 `json:"timeout"`
		} `json:"hooks"`
	} `json:"hooks"`
}

// ReadClaude reads the hooks of a Claude Code settings file
// (.claude/settings.json, .claude/settings.local.json, ~/.claude/settings.json).
// A missing file has none. Events acpd does not run and hooks of other
// types than "command" are skipped and named in skipped, so the caller can
// say so.
func ReadClaude(path string, project bool) (hooks Set, skipped []string, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var cs claudeSettings
	if err := json.Unmarshal(data, &cs); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	events := make([]string, 0, len(cs.Hooks))
	for e := range cs.Hooks {
		events = append(events, e)
	}
	// Supported events in acpd's order, then the rest: a file's hooks
	// always give the same Set (and digest).
	slices.SortFunc(events, func(a, b string) int {
		ia, ib := slices.Index(Events, a), slices.Index(Events, b)
		if ia < 0 {
			ia = len(Events)
		}
		if ib < 0 {
			ib = len(Events)
		}
		if ia != ib {
			return ia - ib
		}
		return strings.Compare(a, b)
	})
	for _, e := range events {
		if !slices.Contains(Events, e) {
			skipped = append(skipped, e)
			continue
		}
		for _, g := range cs.Hooks[e] {
			for _, k := range g.Hooks {
				if k.Type != "command" || strings.TrimSpace(k.Command) == "" {
					skipped = append(skipped, e+" ("+cmpOr(k.Type, "no type")+")")
					continue
				}
				hooks = append(hooks, Hook{Event: e, Matcher: g.Matcher, Command: k.Command,
					Timeout: time.Duration(k.Timeout * float64(time.Second)), Source: path, Project: project})
			}
		}
	}
	return hooks, skipped, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ClaudeNames maps acpd's tool names to Claude Code's, for matchers
// written for Claude Code ("Bash", "Edit|Write"). MCP tools have the same
// mcp__server__tool names in both.
var ClaudeNames = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"run_command": "Bash",
		"edit_file":   "Edit",
		"multi_edit":  "MultiEdit",
		"write_file":  "Write",
		"apply_patch": "Edit",
		"read_file":   "Read",
		"glob":        "Glob",
		"grep":        "Grep",
		"list_dir":    "LS",
		"web_fetch":   "WebFetch",
		"web_search":  "WebSearch",
		"task":        "Task",
		"update_plan": "TodoWrite",
	}
}}

// Result is what one hook run said.
type Result struct {
	Hook Hook
	// Exit is the exit code (-1 when it did not exit by itself).
	Exit           int
	Stdout, Stderr string
	// TimedOut: the hook was killed at its timeout; Err: it could not
	// run (or its JSON output was invalid, which blocks nothing).
	TimedOut bool
	Err      error
	// Block: exit code 2, decision "block", or permissionDecision "deny";
	// Reason says why (stderr, or the JSON's reason).
	Block  bool
	Reason string
	// Decision is PreToolUse's permissionDecision: "allow", "deny",
	// "ask" or "".
	Decision string
	// Context is text for the model (additionalContext, or the plain
	// stdout of UserPromptSubmit and SessionStart).
	Context string
	// Halt: continue false; the turn ends, with HaltReason for the user.
	Halt       bool
	HaltReason string
	// Message is the JSON's systemMessage, for the user.
	Message string
}

// Failed reports a hook that did not run to a usable answer: it could not
// start, timed out, or exited non-zero other than 2.
func (r Result) Failed() bool {
	return r.Err != nil || r.TimedOut || r.Exit != 0 && r.Exit != 2
}

// output is a hook's JSON answer.
type output struct {
	Continue      *bool  `json:"continue"`
	StopReason    string `json:"stopReason"`
	SystemMessage string `json:"systemMessage"`
	Decision      string `json:"decision"`
	Reason        string `json:"reason"`
	Specific      struct {
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		AdditionalContext        string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// Runner runs hooks. Its fields are read only; it may be used concurrently.
type Runner struct {
	// Dir is the hooks' working directory (the session's).
	Dir string
	// Env is their environment (the session's child environment: no
	// secrets), to which CLAUDE_PROJECT_DIR is added.
	Env []string
	// ProjectDir is the project's root, as CLAUDE_PROJECT_DIR.
	ProjectDir string
	// Wrap, when set, confines the hook's command (the session's sandbox
	// for a project's hooks); an error fails the hook.
	Wrap func(Hook, *exec.Cmd) error
}

// Run runs h with input (marshalled as its stdin) and decodes its answer.
// It returns when the hook and every process holding its output have
// ended, or at h's timeout or ctx's end, when its process group is killed.
func (r Runner) Run(ctx context.Context, h Hook, input any) Result {
	res := Result{Hook: h, Exit: -1}
	in, err := json.Marshal(input)
	if err != nil {
		res.Err = err
		return res
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	argv := cmdshell.Find().Argv(h.Command)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = r.Dir
	cmd.Env = append(slices.Clone(r.Env), "CLAUDE_PROJECT_DIR="+r.ProjectDir, "ACPD_PROJECT_DIR="+r.ProjectDir)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// A process that left the group but holds the pipes open does not
	// hold the hook past its end.
	cmd.WaitDelay = time.Second
	if r.Wrap != nil {
		if err := r.Wrap(h, cmd); err != nil {
			res.Err = err
			return res
		}
	}
	g, err := procgroup.Start(cmd)
	if err != nil {
		res.Err = err
		return res
	}
	defer g.Close()
	done := make(chan error, 1)
	go func() { done <- g.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = g.Kill()
		<-done
	}
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	if ctx.Err() != nil {
		res.TimedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
		res.Err = ctx.Err()
		if res.TimedOut {
			res.Err = fmt.Errorf("timed out after %v", timeout)
		}
		return res
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		res.Exit = 0
	case errors.As(err, &ee) && ee.Exited():
		res.Exit = ee.ExitCode()
	default:
		res.Err = err
		return res
	}
	switch res.Exit {
	case 0:
		decode(&res)
	case 2:
		res.Block = true
		res.Reason = strings.TrimSpace(res.Stderr)
		if h.Event == PreToolUse {
			res.Decision = "deny"
		}
	}
	return res
}

// decode reads a successful hook's stdout: a JSON object, or plain text
// (context for the events that take it).
func decode(res *Result) {
	text := strings.TrimSpace(res.Stdout)
	if !strings.HasPrefix(text, "{") {
		if res.Hook.Event == UserPromptSubmit || res.Hook.Event == SessionStart {
			res.Context = text
		}
		return
	}
	var o output
	if err := json.Unmarshal([]byte(text), &o); err != nil {
		res.Err = fmt.Errorf("its output is not valid JSON: %v", err)
		return
	}
	res.Message = o.SystemMessage
	if o.Continue != nil && !*o.Continue {
		res.Halt, res.HaltReason = true, o.StopReason
	}
	res.Context = o.Specific.AdditionalContext
	switch o.Decision {
	case "block":
		res.Block, res.Reason = true, o.Reason
		if res.Hook.Event == PreToolUse {
			res.Decision = "deny"
		}
	case "approve":
		if res.Hook.Event == PreToolUse {
			res.Decision, res.Reason = "allow", o.Reason
		}
	}
	if res.Hook.Event == PreToolUse {
		switch d := o.Specific.PermissionDecision; d {
		case "allow", "deny", "ask":
			res.Decision, res.Reason = d, cmpOr(o.Specific.PermissionDecisionReason, res.Reason)
			res.Block = d == "deny"
		}
	}
}

// capped keeps the first maxOutput bytes written to it.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

var _ io.Writer = (*capped)(nil)
