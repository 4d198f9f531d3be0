package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"acpd/acp"
	"acpd/agent/internal/batch"
	"acpd/agent/internal/hooks"
	"acpd/permissions"
	"acpd/sandbox"
	"acpd/tools"
)

// maxStopContinuations bounds how often Stop hooks may send the model back
// to work in one turn.
const maxStopContinuations = 3

// hookTrustFile is where approved project hooks are remembered, in the
// session store's directory.
const hookTrustFile = "hooks-trust.json"

// readHooks reads the session's hooks: the configuration's ([[hooks.EVENT]],
// the user file's then the project's) and those of Claude Code's settings
// files (the user's ~/.claude/settings.json, the project's
// .claude/settings.json and .claude/settings.local.json). Files that
// cannot be read are said once per turn as a warning.
func (s *sess) readHooks(ctx context.Context) hooks.Set {
	var set hooks.Set
	for _, e := range hooks.Events {
		for _, h := range s.cfg.Hooks[e] {
			set = append(set, hooks.Hook{Event: e, Matcher: h.Matcher, Command: h.Command,
				Timeout: secondsDuration(h.Timeout), Source: h.Source, Project: h.Project})
		}
	}
	claudeDir := s.a.getenv("CLAUDE_CONFIG_DIR")
	if home := s.a.getenv("HOME"); claudeDir == "" && home != "" {
		claudeDir = filepath.Join(home, ".claude")
	}
	root := s.root
	files := []struct {
		path    string
		project bool
	}{
		{filepath.Join(root, ".claude", "settings.json"), true},
		{filepath.Join(root, ".claude", "settings.local.json"), true},
	}
	if claudeDir != "" {
		files = append([]struct {
			path    string
			project bool
		}{{filepath.Join(claudeDir, "settings.json"), false}}, files...)
	}
	for _, f := range files {
		hs, _, err := hooks.ReadClaude(f.path, f.project)
		if err != nil {
			s.tell(ctx, acp.NoticeSeverityWarning, "Hooks not read", fmt.Sprintf("The hooks of %s were not read: %v", f.path, err))
			continue
		}
		set = append(set, hs...)
	}
	return set
}

// turnHooks returns the hooks that run in this turn: the user's, and the
// project's once the user trusts exactly those commands. Untrusted project
// hooks are asked about once per session and digest (a permission request
// showing every command); "always" remembers the approval for the project.
// Without an answer (no client, cancelled, rejected) they do not run.
func (s *sess) turnHooks(ctx context.Context) hooks.Set {
	set := s.readHooks(ctx)
	project := set.Project()
	if len(project) == 0 {
		return set
	}
	root := s.root
	digest := project.Digest()
	trust := hooks.NewTrust(filepath.Join(s.a.opts.Store.Dir(), hookTrustFile))
	if trust.Trusted(root, digest) {
		return set
	}
	s.mu.Lock()
	decided, ok := s.hookAnswers[digest]
	s.mu.Unlock()
	if !ok {
		decided = s.askHookTrust(ctx, project, root, digest, trust)
		s.mu.Lock()
		if s.hookAnswers == nil {
			s.hookAnswers = map[string]bool{}
		}
		s.hookAnswers[digest] = decided
		s.mu.Unlock()
	}
	if decided {
		return set
	}
	return set.Without()
}

// askHookTrust asks the user whether the project's hooks may run, showing
// exactly what would run and from which file.
func (s *sess) askHookTrust(ctx context.Context, project hooks.Set, root, digest string, trust *hooks.Trust) bool {
	out := s.a.baseContext()
	id := acp.ToolCallID(newID("hooks_"))
	name := "hooks"
	var b strings.Builder
	fmt.Fprintf(&b, "This project defines hooks: commands acpd would run on its own at points of each turn. They run only if you trust them; a change to them asks again.\n\n")
	for _, h := range project {
		rel, err := filepath.Rel(root, h.Source)
		if err != nil {
			rel = h.Source
		}
		subject := ""
		if h.Matcher != "" {
			subject = " (" + h.Matcher + ")"
		}
		fmt.Fprintf(&b, "- %s%s, from %s:\n\n```sh\n%s\n```\n", h.Event, subject, rel, h.Command)
	}
	title := fmt.Sprintf("Trust this project's %d hook", len(project))
	if len(project) != 1 {
		title += "s"
	}
	content := []acp.ToolCallContent{tools.TextContent(b.String())}
	s.notify(out, acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: id, Name: &name, Title: title, Kind: acp.ToolKindExecute, Status: acp.ToolCallStatusPending, Content: content}})
	finish := func(ok bool, why string) bool {
		st := acp.ToolCallStatusCompleted
		if !ok {
			st = acp.ToolCallStatusFailed
		}
		s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: id, Status: &st,
			Content: append(content, tools.TextContent(why))}})
		return ok
	}
	peer, ok := s.a.peer()
	if !ok {
		return finish(false, "Not run: the editor is gone.")
	}
	req := acp.RequestPermissionRequest{SessionID: s.id, ToolCall: acp.ToolCallUpdate{ToolCallID: id, Title: &title, Content: content},
		Options: []acp.PermissionOption{
			{OptionID: "trust", Name: "Trust these hooks in this project", Kind: acp.PermissionOptionKindAllowAlways},
			{OptionID: "once", Name: "Run them in this session", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionID: "skip", Name: "Do not run them", Kind: acp.PermissionOptionKindRejectOnce},
		}}
	resp, err := peer.RequestPermission(ctx, &req)
	if err != nil || resp.Outcome.Selected == nil {
		return finish(false, "Not run: the question was not answered.")
	}
	switch resp.Outcome.Selected.OptionID {
	case "trust":
		if err := trust.Approve(root, digest); err != nil {
			s.a.log.Warn("remembering trusted hooks failed", "session", s.id, "err", err)
			return finish(true, "Trusted for this session; remembering it failed: "+err.Error())
		}
		return finish(true, "Trusted in this project until they change.")
	case "once":
		return finish(true, "Trusted for this session.")
	}
	return finish(false, "Not run: you chose not to run them.")
}

// hookRunner runs the session's hooks in its working directory, with its
// child environment (no secrets). A project's hooks, code that came with
// the repository, also run under the session's sandbox; the user's own run
// as the user's commands (their scripts may live in acpd's configuration
// directory, which the sandbox hides).
func (s *sess) hookRunner() hooks.Runner {
	policy := toolEnv{s}.Sandbox()
	return hooks.Runner{Dir: s.cwd, Env: s.childEnv(), ProjectDir: s.root,
		Wrap: func(h hooks.Hook, cmd *exec.Cmd) error {
			if !h.Project {
				return nil
			}
			if err := policy.Wrap(cmd); err != nil && !errors.Is(err, sandbox.ErrUnavailable) {
				return err
			}
			return nil
		}}
}

// runHooks runs the hooks of event matching names, in order, each shown
// as a card, and returns their results. A blocking result stops the
// rest.
func (s *sess) runHooks(ctx context.Context, set hooks.Set, event string, input map[string]any, names ...string) []hooks.Result {
	matched := set.Match(event, names...)
	if len(matched) == 0 {
		return nil
	}
	input["session_id"] = string(s.id)
	input["cwd"] = s.cwd
	input["hook_event_name"] = event
	input["transcript_path"] = ""
	r := s.hookRunner()
	var out []hooks.Result
	for _, h := range matched {
		res := r.Run(ctx, h, input)
		s.showHook(res)
		out = append(out, res)
		if res.Block || res.Halt || ctx.Err() != nil {
			break
		}
	}
	return out
}

// showHook shows one hook run as a completed (or failed) tool-call card
// naming the event and the command, with what it decided and said.
func (s *sess) showHook(r hooks.Result) {
	out := s.a.baseContext()
	name := "hook"
	title := "Hook " + r.Hook.Event + ": " + tools.Truncate(firstLine(r.Hook.Command), 80)
	var lines []string
	switch {
	case r.TimedOut:
		lines = append(lines, "Killed: it "+r.Err.Error()+".")
	case r.Err != nil:
		lines = append(lines, "Failed: "+r.Err.Error())
	case r.Block:
		lines = append(lines, "Blocked: "+orText(r.Reason, "(no reason given)"))
	case r.Decision == "allow":
		lines = append(lines, "Allowed the call without asking.")
	case r.Decision == "ask":
		lines = append(lines, "Asked for the call to be confirmed.")
	case r.Exit != 0:
		lines = append(lines, fmt.Sprintf("Exit code %d (not blocking).", r.Exit))
	}
	if r.Halt {
		lines = append(lines, "Stopped the turn: "+orText(r.HaltReason, "(no reason given)"))
	}
	if r.Context != "" {
		lines = append(lines, "Added for the model:\n"+tools.Truncate(r.Context, 2000))
	}
	if r.Message != "" {
		lines = append(lines, r.Message)
	}
	if txt := strings.TrimSpace(r.Stderr); txt != "" && !r.Block {
		lines = append(lines, "stderr:\n"+tools.Truncate(txt, 2000))
	}
	if txt := strings.TrimSpace(r.Stdout); txt != "" && r.Context == "" && !strings.HasPrefix(txt, "{") {
		lines = append(lines, "Output:\n"+tools.Truncate(txt, 2000))
	}
	if len(lines) == 0 {
		lines = append(lines, "Done.")
	}
	st := acp.ToolCallStatusCompleted
	if r.Failed() {
		st = acp.ToolCallStatusFailed
	}
	raw, _ := json.Marshal(map[string]any{"event": r.Hook.Event, "command": r.Hook.Command, "source": r.Hook.Source})
	s.notify(out, acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: acp.ToolCallID(newID("hook_")), Name: &name, Title: title,
		Kind: acp.ToolKindExecute, Status: st, RawInput: json.RawMessage(raw), Content: []acp.ToolCallContent{tools.TextContent(strings.Join(lines, "\n\n"))}}})
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// promptHooks runs SessionStart (at a session's first turn in this
// process) and UserPromptSubmit for prompt. It returns text for the
// model to add to the user's message, or blocked with the reason to show
// the user: the prompt then goes no further.
func (s *sess) promptHooks(ctx context.Context, set hooks.Set, prompt []acp.ContentBlock) (context []string, blocked string) {
	s.mu.Lock()
	first, resumed := !s.hooksStarted, len(s.transcript) > 0
	s.hooksStarted = true
	s.mu.Unlock()
	if first {
		source := "startup"
		if resumed {
			source = "resume"
		}
		for _, r := range s.runHooks(ctx, set, hooks.SessionStart, map[string]any{"source": source}, source) {
			if r.Context != "" {
				context = append(context, "SessionStart hook:\n"+r.Context)
			}
		}
	}
	var text strings.Builder
	for _, b := range prompt {
		if b.Text != nil {
			text.WriteString(b.Text.Text)
		}
	}
	for _, r := range s.runHooks(ctx, set, hooks.UserPromptSubmit, map[string]any{"prompt": text.String()}) {
		switch {
		case r.Block:
			return nil, "A UserPromptSubmit hook blocked this prompt: " + orText(r.Reason, "no reason given") + "."
		case r.Halt:
			return nil, "A UserPromptSubmit hook stopped this prompt: " + orText(r.HaltReason, "no reason given") + "."
		case r.Context != "":
			context = append(context, "UserPromptSubmit hook:\n"+r.Context)
		}
	}
	return context, ""
}

// toolHookInput is a tool call as hooks see it: Claude Code's tool name
// where there is one (acpd's in acpd_tool_name), and the input with
// Claude Code's file_path beside acpd's path.
func (s *sess) toolHookInput(name string, in json.RawMessage) map[string]any {
	var input map[string]any
	if json.Unmarshal(in, &input) != nil || input == nil {
		input = map[string]any{}
	}
	if p, ok := input["path"].(string); ok && p != "" {
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.cwd, p)
		}
		input["file_path"] = p
	}
	tool := name
	if c, ok := hooks.ClaudeNames.Get()[name]; ok {
		tool = c
	}
	return map[string]any{"tool_name": tool, "acpd_tool_name": name, "tool_input": input}
}

// hookVerdictKey carries a PreToolUse hook's permission decision to the
// call's authorize.
type hookVerdictKey struct{}

// preToolHooks runs PreToolUse for a call about to run: deny is the
// refusal to give the model ("" to run); ctx carries an "allow" or "ask"
// decision to the call's permission check.
func (s *sess) preToolHooks(ctx context.Context, set hooks.Set, id, name string, in json.RawMessage) (context.Context, string) {
	input := s.toolHookInput(name, in)
	input["tool_use_id"] = id
	for _, r := range s.runHooks(ctx, set, hooks.PreToolUse, input, name, hooks.ClaudeNames.Get()[name]) {
		if r.Halt {
			s.halt(r.HaltReason)
		}
		switch r.Decision {
		case "deny":
			return ctx, "A PreToolUse hook blocked this call: " + orText(r.Reason, "no reason given") + ". Do not retry it unchanged."
		case "allow", "ask":
			ctx = context.WithValue(ctx, hookVerdictKey{}, r.Decision)
		}
		if r.Halt {
			return ctx, "A PreToolUse hook stopped the turn: " + orText(r.HaltReason, "no reason given") + "."
		}
	}
	return ctx, ""
}

// postToolHooks runs PostToolUse for a call that ran and adds what the
// hooks say for the model (a block's reason, additional context) to its
// result.
func (s *sess) postToolHooks(ctx context.Context, set hooks.Set, id, name string, in json.RawMessage, res *tools.Result) {
	input := s.toolHookInput(name, in)
	input["tool_use_id"] = id
	input["tool_response"] = map[string]any{"output": res.Text, "is_error": res.IsError, "success": !res.IsError}
	for _, r := range s.runHooks(ctx, set, hooks.PostToolUse, input, name, hooks.ClaudeNames.Get()[name]) {
		if r.Halt {
			s.halt(r.HaltReason)
		}
		if r.Block {
			res.Text += "\n\nPostToolUse hook feedback: " + orText(r.Reason, "(no reason given)")
		}
		if r.Context != "" {
			res.Text += "\n\nPostToolUse hook context: " + r.Context
		}
	}
}

// stopHooks runs Stop when the model ends its turn: a block's reason is
// the model's next instruction (the turn goes on), "" lets it end.
func (s *sess) stopHooks(ctx context.Context, set hooks.Set, active bool) string {
	for _, r := range s.runHooks(ctx, set, hooks.Stop, map[string]any{"stop_hook_active": active}) {
		if r.Block && !r.Halt {
			return orText(r.Reason, "A Stop hook asks you to continue.")
		}
	}
	return ""
}

// halt asks the running turn to end at its next model request (a hook's
// continue: false).
func (s *sess) halt(reason string) {
	s.mu.Lock()
	s.haltReason = orText(reason, "a hook stopped the turn")
	s.mu.Unlock()
}

// takeHalt returns and clears a hook's request to end the turn.
func (s *sess) takeHalt() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.haltReason
	s.haltReason = ""
	return r
}

// hookVerdict adjusts a permission decision by a PreToolUse hook's:
// "allow" answers what would ask (a deny rule still denies), "ask" asks
// what would be allowed.
func hookVerdict(ctx context.Context, d permissions.Decision) permissions.Decision {
	switch v, _ := ctx.Value(hookVerdictKey{}).(string); {
	case v == "allow" && d.Action == permissions.Ask:
		d.Action = permissions.Allow
	case v == "ask" && d.Action == permissions.Allow:
		d.Action = permissions.Ask
		d.Reason = "a PreToolUse hook asks to confirm it"
	}
	return d
}

// secondsDuration is a configuration's seconds as a duration.
func secondsDuration(sec float64) time.Duration { return time.Duration(sec * float64(time.Second)) }

// turnHooksKey carries the turn's hooks (turnHooks) to its tool calls.
type turnHooksKey struct{}

func withTurnHooks(ctx context.Context, set hooks.Set) context.Context {
	return context.WithValue(ctx, turnHooksKey{}, set)
}

func turnHooksOf(ctx context.Context) hooks.Set {
	set, _ := ctx.Value(turnHooksKey{}).(hooks.Set)
	return set
}

// preHook is batch.Options.Pre for the turn's PreToolUse hooks (nil
// without any).
func (s *sess) preHook(ctx context.Context) func(context.Context, batch.Call) (context.Context, string) {
	set := turnHooksOf(ctx)
	if len(set.Match(hooks.PreToolUse)) == 0 {
		return nil
	}
	return func(ctx context.Context, c batch.Call) (context.Context, string) {
		return s.preToolHooks(ctx, set, c.ID, c.Name, c.Input)
	}
}

// postHook is batch.Options.Post for the turn's PostToolUse hooks (nil
// without any).
func (s *sess) postHook(ctx context.Context) func(context.Context, batch.Call, *tools.Result) {
	set := turnHooksOf(ctx)
	if len(set.Match(hooks.PostToolUse)) == 0 {
		return nil
	}
	return func(ctx context.Context, c batch.Call, r *tools.Result) {
		s.postToolHooks(ctx, set, c.ID, c.Name, c.Input, r)
	}
}
