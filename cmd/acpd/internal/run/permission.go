package run

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"acpd/acp"
	"acpd/client"
	"acpd/internal/lazy"
	"acpd/permissions"
	"acpd/tools"
)

// policyTools are the tool names --policy rules use, with their kinds:
// acpd's own names. A hosted agent's tool call is named after its ACP kind
// (callFor), so rules apply to any agent. Built on first use: most
// processes never run `acpd run --policy`.
var policyTools = lazy.Value[map[string]acp.ToolKind]{New: func() map[string]acp.ToolKind {
	return map[string]acp.ToolKind{
		"read_file":   acp.ToolKindRead,
		"list_dir":    acp.ToolKindRead,
		"glob":        acp.ToolKindSearch,
		"grep":        acp.ToolKindSearch,
		"write_file":  acp.ToolKindEdit,
		"edit_file":   acp.ToolKindEdit,
		"run_command": acp.ToolKindExecute,
		"web_fetch":   acp.ToolKindFetch,
	}
}}

// maxPolicyBytes bounds a --policy file.
const maxPolicyBytes = 1 << 20

// loadPolicy reads the permission rules of a --policy file, written like
// the config file's: [[permissions.rules]] tables of action, tool, match.
// Unknown keys are errors.
func loadPolicy(file string) ([]permissions.Rule, error) {
	b, err := readSmallFile(file, maxPolicyBytes)
	if err != nil {
		return nil, err
	}
	var f struct {
		Permissions struct {
			Rules []permissions.Rule `toml:"rules"`
		} `toml:"permissions"`
	}
	if err := toml.NewDecoder(bytes.NewReader(b)).DisallowUnknownFields().Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return f.Permissions.Rules, nil
}

// newRunPolicy returns the policy that answers permission requests.
func newRunPolicy(rules []permissions.Rule, protected []string) (*permissions.Policy, error) {
	return permissions.NewPolicy(permissions.PolicyOptions{Rules: rules, Protected: protected, Tools: policyTools.Get()})
}

// toolInfo is what the runner knows of a tool call from its updates.
type toolInfo struct {
	id        acp.ToolCallID
	title     string
	kind      acp.ToolKind
	status    acp.ToolCallStatus
	rawInput  any
	locations []string
	diffs     []acp.Diff
	terminals []acp.TerminalID
	// text is the call's text content (an agent that shows a command's
	// output as text, not as a terminal).
	text string
	// What the call's command printed (cmdout.go): raw is its terminal's
	// output while it runs (dropped when it ends); output the rendered
	// text (its end only, when outTruncated), exit how it exited.
	raw          string
	output       string
	outTruncated bool
	exit         *acp.TerminalExitStatus
	outDone      bool // the output at the call's end was read
	// escalation: the permission request being decided asks to run a
	// command outside the sandbox.
	escalation bool
}

// merge applies a tool_call_update to t.
func (t *toolInfo) merge(u *acp.ToolCallUpdate) {
	if u.Title != nil && *u.Title != "" {
		t.title = *u.Title
	}
	if u.Kind != nil {
		t.kind = *u.Kind
	}
	if u.Status != nil {
		t.status = *u.Status
	}
	if u.RawInput != nil {
		t.rawInput = u.RawInput
	}
	if u.Locations != nil {
		t.locations = t.locations[:0]
		for _, l := range u.Locations {
			t.locations = append(t.locations, l.Path)
		}
	}
	if u.Content != nil {
		t.setContent(u.Content)
	}
}

func (t *toolInfo) setContent(cs []acp.ToolCallContent) {
	t.diffs, t.terminals, t.text = nil, nil, ""
	for _, c := range cs {
		if c.Content != nil && c.Content.Content.Text != nil {
			if t.text != "" {
				t.text += "\n"
			}
			t.text += c.Content.Content.Text.Text
		}
		if c.Diff != nil {
			t.diffs = append(t.diffs, *c.Diff)
		}
		if c.Terminal != nil {
			t.terminals = append(t.terminals, c.Terminal.TerminalID)
		}
	}
}

func newToolInfo(tc *acp.ToolCall) *toolInfo {
	t := &toolInfo{id: tc.ToolCallID, title: tc.Title, rawInput: tc.RawInput, kind: tc.Kind, status: tc.Status}
	for _, l := range tc.Locations {
		t.locations = append(t.locations, l.Path)
	}
	t.setContent(tc.Content)
	return t
}

// command is the shell line of an execute call, from its raw input
// ({"command": "..."} or {"command": ["argv", ...]}), or "".
func (t *toolInfo) command() string {
	m, ok := t.rawInput.(map[string]any)
	if !ok {
		return ""
	}
	switch c := m["command"].(type) {
	case string:
		return c
	case []any:
		var words []string
		for _, w := range c {
			s, ok := w.(string)
			if !ok {
				return ""
			}
			words = append(words, shellQuoteWord(s))
		}
		return strings.Join(words, " ")
	}
	return ""
}

func shellQuoteWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// paths are the files a call touches: its locations, its diffs' paths and
// path-like raw input fields.
func (t *toolInfo) paths() []string {
	var ps []string
	add := func(p string) {
		if p != "" && !contains(ps, p) {
			ps = append(ps, p)
		}
	}
	for _, l := range t.locations {
		add(l)
	}
	for _, d := range t.diffs {
		add(d.Path)
	}
	if m, ok := t.rawInput.(map[string]any); ok {
		for _, k := range []string{"path", "file_path", "filePath", "abs_path", "notebook_path"} {
			if s, ok := m[k].(string); ok {
				add(s)
			}
		}
	}
	return ps
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// callFor describes a permission request to the policy. Paths relative to
// cwd are taken as inside it; the policy resolves symbolic links itself.
func callFor(cwd string, t *toolInfo) permissions.Call {
	c := permissions.Call{Kind: t.kind}
	switch t.kind {
	case acp.ToolKindExecute:
		c.Tool, c.Command = "run_command", t.command()
		c.Paths = []permissions.Path{{Abs: cwd, Rel: ".", Inside: true}}
		return c
	case acp.ToolKindEdit, acp.ToolKindDelete, acp.ToolKindMove:
		c.Tool = "edit_file"
	case acp.ToolKindRead:
		c.Tool = "read_file"
	case acp.ToolKindSearch:
		c.Tool = "grep"
	case acp.ToolKindFetch:
		c.Tool = "web_fetch"
		if m, ok := t.rawInput.(map[string]any); ok {
			c.URL, _ = m["url"].(string)
		}
		return c
	default:
		c.Tool = t.title
		return c
	}
	for _, p := range t.paths() {
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		p = filepath.Clean(p)
		rel, err := filepath.Rel(cwd, p)
		inside := err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
		if !inside {
			rel = ""
		}
		c.Paths = append(c.Paths, permissions.Path{Abs: p, Rel: filepath.ToSlash(rel), Inside: inside})
	}
	if len(c.Paths) == 0 && (t.kind == acp.ToolKindRead || t.kind == acp.ToolKindSearch) {
		c.Paths = []permissions.Path{{Abs: cwd, Rel: ".", Inside: true}}
	}
	return c
}

// PermissionRecord is one permission decision of a Result.
type PermissionRecord struct {
	ToolCallID string `json:"toolCallId"`
	Title      string `json:"title"`
	Kind       string `json:"kind,omitempty"`
	// Decision is allowed, rejected or cancelled.
	Decision string `json:"decision"`
	// Option is the kind of option selected (allow_once, reject_once, ...).
	Option string `json:"option,omitempty"`
	// By is who decided: policy (a --policy rule or the --approve level),
	// user (on the terminal) or no-terminal (asked, but nobody to ask).
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
	// Escalation marks a request to run a command outside the sandbox.
	Escalation bool `json:"escalation,omitempty"`
}

// isEscalation reports whether a permission request asks to run a command
// outside the sandbox: acpd's agent marks it in _meta (and its title);
// the title alone counts too, so a request that looks like one is never
// allowed as an ordinary command.
func isEscalation(tc acp.ToolCallUpdate) bool {
	if _, ok := tc.Meta[tools.EscalationMeta]; ok {
		return true
	}
	return tc.Title != nil && strings.HasPrefix(*tc.Title, tools.EscalationTitlePrefix)
}

func optionKind(options []acp.PermissionOption, res acp.RequestPermissionResponse) string {
	if res.Outcome.Selected == nil {
		return ""
	}
	for _, o := range options {
		if o.OptionID == res.Outcome.Selected.OptionID {
			return string(o.Kind)
		}
	}
	return ""
}

func decisionOf(kind string) string {
	switch {
	case strings.HasPrefix(kind, "allow"):
		return "allowed"
	case kind == "":
		return "cancelled"
	}
	return "rejected"
}

// permission answers session/request_permission (client.Options.Permission):
// the --policy rules and the --approve level decide; what they leave to
// the user is asked on the terminal, or refused without one (fail closed).
func (r *runner) permission(ctx context.Context, req acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	cancelled := acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}
	r.mu.Lock()
	wasCancelled := r.cancelled
	t := &toolInfo{id: req.ToolCall.ToolCallID, title: "a tool call"}
	if known, ok := r.tools[req.ToolCall.ToolCallID]; ok {
		cp := *known
		t = &cp
	}
	r.mu.Unlock()
	t.merge(&req.ToolCall)
	if wasCancelled {
		r.logDecision(t, req.Options, cancelled, "policy", "the turn was cancelled")
		return cancelled, nil
	}
	allow := func() acp.RequestPermissionResponse {
		return client.Select(req.Options, acp.PermissionOptionKindAllowOnce, acp.PermissionOptionKindAllowAlways)
	}
	reject := func() acp.RequestPermissionResponse {
		return client.Select(req.Options, acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways)
	}
	mode := permissions.ModeAsk
	switch r.flags.approve {
	case approveEdits:
		mode = permissions.ModeAutoEdit
	case approveAll:
		mode = permissions.ModeFull
	}
	call := callFor(r.cwd, t)
	esc := isEscalation(req.ToolCall)
	call.Escalate = esc
	t.escalation = esc
	d := r.policy.Decide(mode, call)
	if d.Default {
		// The policy's mode stands for the --approve level, not for the
		// session's mode: say which.
		d.Reason = fmt.Sprintf("--approve %s allows it", r.flags.approve)
		if d.Action == permissions.Ask {
			d.Reason = fmt.Sprintf("--approve %s leaves it to the user", r.flags.approve)
		}
	}
	switch {
	case d.Action == permissions.Deny:
		res := reject()
		r.logDecision(t, req.Options, res, "policy", d.Reason)
		r.notice(fmt.Sprintf("acpd run: rejected %q: %s", oneLine(t.title), d.Reason))
		return res, nil
	case esc && r.escalate:
		res := allow()
		r.logDecision(t, req.Options, res, "policy", "--approve all with --allow-escalation (or [sandbox] escalate = \"allow\")")
		r.notice(fmt.Sprintf("acpd run: running outside the sandbox: %q", oneLine(t.title)))
		return res, nil
	case esc && r.flags.approve == approveNone:
		res := reject()
		r.logDecision(t, req.Options, res, "policy", "--approve none")
		r.notice(fmt.Sprintf("acpd run: rejected %q: --approve none", oneLine(t.title)))
		return res, nil
	case esc:
		// Asked on the terminal (or the page) below; never allowed by
		// --approve alone.
		d.Reason = "running a command outside the sandbox needs --approve all with --allow-escalation (or [sandbox] escalate = \"allow\")"
	case d.Action == permissions.Allow || r.flags.approve == approveAll:
		res := allow()
		r.logDecision(t, req.Options, res, "policy", d.Reason)
		return res, nil
	case r.flags.approve == approveNone:
		res := reject()
		r.logDecision(t, req.Options, res, "policy", "--approve none")
		r.notice(fmt.Sprintf("acpd run: rejected %q: --approve none", oneLine(t.title)))
		return res, nil
	}
	if res, asked := r.ui.consent(ctx, req); asked {
		r.logDecision(t, req.Options, res, "page", "")
		return res, nil
	}
	switch {
	case !r.askTTY && esc:
		res := reject()
		r.logDecision(t, req.Options, res, "no-terminal", d.Reason)
		r.notice(fmt.Sprintf("acpd run: not run outside the sandbox (allow with --approve all --allow-escalation): %q", oneLine(t.title)))
		return res, nil
	case !r.askTTY:
		res := reject()
		r.logDecision(t, req.Options, res, "no-terminal", d.Reason)
		r.notice(fmt.Sprintf("acpd run: rejected %q: %s, and stdin is not a terminal to ask on (pass --yes or --approve)", oneLine(t.title), d.Reason))
		return res, nil
	}
	res, err := r.ask(ctx, t, req.Options)
	if err == nil {
		r.logDecision(t, req.Options, res, "user", "")
	}
	return res, err
}

// logDecision logs a permission decision and records it for --output json.
func (r *runner) logDecision(t *toolInfo, options []acp.PermissionOption, res acp.RequestPermissionResponse, by, reason string) {
	kind := optionKind(options, res)
	rec := PermissionRecord{ToolCallID: string(t.id), Title: t.title, Kind: string(t.kind), Decision: decisionOf(kind), Option: kind, By: by, Reason: reason, Escalation: t.escalation}
	r.log.Info("permission", "tool", t.title, "decision", rec.Decision, "option", kind, "by", by, "reason", reason)
	r.mu.Lock()
	r.perms = append(r.perms, rec)
	r.mu.Unlock()
}

// readSmallFile reads file, refusing one larger than max bytes.
func readSmallFile(file string, max int) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if len(b) > max {
		return nil, fmt.Errorf("%s: larger than %d KiB", file, max>>10)
	}
	return b, nil
}
