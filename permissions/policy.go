package permissions

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"iter"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"acpd/acp"
	"acpd/internal/glob"
)

// Action is what the policy decides for a tool call.
type Action string

// The three decisions.
const (
	Allow Action = "allow" // run without asking
	Ask   Action = "ask"   // ask the user (session/request_permission)
	Deny  Action = "deny"  // refuse; Decision.Reason is given to the model
)

// Rule is a configured ([[permissions.rules]]) or remembered permission rule.
// Tool is a glob (package internal/glob) on the tool name; Match narrows the rule to
// commands (run_command) or paths (file tools) as described in the package
// documentation, and is empty to match every call of the tool.
type Rule struct {
	Action Action `toml:"action" json:"action"`
	Tool   string `toml:"tool" json:"tool"`
	Match  string `toml:"match" json:"match,omitempty"`
}

// String renders the rule the way it is written in the configuration.
func (r Rule) String() string {
	if r.Match == "" {
		return fmt.Sprintf("{action=%q, tool=%q}", r.Action, r.Tool)
	}
	return fmt.Sprintf("{action=%q, tool=%q, match=%q}", r.Action, r.Tool, r.Match)
}

// Call describes a tool call to decide on.
type Call struct {
	// Tool is the tool's name (a built-in such as read_file or run_command,
	// or an MCP tool "mcp__<server>__<tool>"): rules name tools by it.
	Tool string
	// Kind is what the policy judges the call as: think
	// (no side effects, such as update_plan), a file read (read, search),
	// a file change (edit, delete, move), a command line (execute), or any
	// other kind: an MCP or unknown tool. MCP tools are judged as other
	// whatever kind they show.
	Kind acp.ToolKind
	// ReadOnly marks an MCP or unknown tool as having no side effects; plan
	// mode denies the others. (File reads are never denied in plan mode;
	// file changes and commands always are.)
	ReadOnly bool
	// Command is run_command's shell line (run with bash -c).
	Command string
	// WholeLine marks a Command in a shell whose syntax the policy does not
	// parse (PowerShell on Windows without Git's bash): rules match it only
	// as one whole line, so a rule (or remembered choice) allows exactly
	// that line and every deny or ask rule of the tool makes it ask.
	WholeLine bool
	// Paths are the files or directories a file tool touches. A file tool
	// call without paths asks in every mode: pass the root itself (Rel ".")
	// for calls that default to it. For run_command they are the command's
	// working directory: one outside the roots or in a protected place asks
	// in every mode (step 3).
	Paths []Path
	// NoApproval marks an MCP or unknown tool call that needs no approval
	// (reading MCP resources: no side effects, from servers the user
	// configured): it is allowed unless a deny rule or a remembered
	// rejection refuses it.
	NoApproval bool
	// Unsandboxed marks a command that would run outside the OS sandbox
	// although one is configured (this machine offers none): full mode
	// asks before it instead of allowing it.
	Unsandboxed bool
	// Escalate marks a request to run a command outside the sandbox
	// although one is in use (the model asked for it explicitly, or the
	// command writes a repository the sandbox keeps read-only): it asks in
	// every mode, over any allow rule or remembered choice, and the answer
	// is not remembered. Deny rules still refuse it.
	Escalate bool
	// URL is the URL a fetch tool (kind fetch: web_fetch) reads. Rules and
	// remembered choices on fetch tools match its origin (see [Origin]).
	URL string
	// Offline marks a fetch while the session's sandbox keeps commands off
	// the network: acpd's own network tools obey the commands' network
	// policy, so full mode asks before it (naming the URL) instead of
	// allowing it. A rule or remembered choice for its origin still allows.
	Offline bool
	// HintedRead marks an MCP tool whose server says it only reads
	// (readOnlyHint, not destructive, not open-world): with no rule or
	// remembered choice deciding, it is allowed in auto-edit mode, and in
	// ask mode too when TrustHints says the user trusts that server's hints.
	HintedRead, TrustHints bool
}

// Path is one path a file tool touches.
type Path struct {
	// Abs is the absolute path, as the tool will use it. Existing symbolic
	// links in it (and in its root) are resolved too: a path that resolves
	// into a protected place or out of its root asks; deny and ask rules
	// apply when either form matches, allow rules only when both do.
	Abs string
	// Rel is the path relative to the workspace root containing it,
	// slash-separated, "." for the root itself; "" when outside every root.
	Rel string
	// Inside reports whether Abs is inside a workspace root. A path with
	// Inside set but an empty, absolute or escaping ("..") Rel, or a Rel
	// that Abs does not end with, is treated as outside.
	Inside bool
}

// Decision is the policy's answer for one call.
type Decision struct {
	Action Action
	// Reason is human-readable; it is shown to the user and, on Deny, given
	// to the model.
	Reason string
	// Default reports that the mode's default decided (step 5): no rule,
	// remembered choice or safety check did, so Reason names the mode. A
	// client that decides for its own levels (acpd run's --approve) says so
	// in its own words instead.
	Default bool
	// Remember lists the narrowest rules that would cover this call if the
	// user answers allow_always or reject_always (their Action is left empty:
	// Policy.Remember fills it in). Empty when the answer cannot be
	// remembered, and always empty unless Action is Ask.
	Remember []Rule
}

// PolicyOptions configures NewPolicy.
type PolicyOptions struct {
	// Rules are the configured rules, in configuration order.
	Rules []Rule
	// Protected are absolute directories (acpd's configuration and state
	// directories) whose contents always ask.
	Protected []string
	// Store holds remembered choices; nil disables remembering. Callers
	// should not silently drop a Store that fails to open: remembered
	// rejections would be forgotten.
	Store *Store
	// Project is the key remembered choices are filed under, normally
	// ProjectKey(cwd). Empty disables remembering.
	Project string
	// Tools are the kinds of the tools rules may narrow with a Match, by
	// name: a Match is a command pattern for execute tools and a path glob
	// for file tools (read, search, edit, delete, move); rules on other
	// tools take no Match.
	Tools map[string]acp.ToolKind
}

// ErrCannotRemember is returned by Policy.Remember when the decision cannot
// be remembered; the caller then treats allow_always as allow_once and
// reject_always as reject_once.
var ErrCannotRemember = errors.New("this permission cannot be remembered")

// Policy decides on tool calls. It is safe for concurrent use; its rules are
// fixed at creation, and remembered choices are re-read from its Store on
// every decision, so choices remembered by other processes apply at once.
type Policy struct {
	tools           map[string]acp.ToolKind
	rules           []compiledRule
	protected       []string
	store           *Store
	project         string
	resolvedProject string // project with symbolic links resolved

	// cache holds the project's compiled remembered rules for the store
	// file content they came from.
	cache struct {
		sync.Mutex
		data  []byte
		rules []compiledRule
		err   error
	}
}

// NewPolicy validates the rules and protected directories and returns a
// Policy. Errors name the offending rule.
func NewPolicy(o PolicyOptions) (*Policy, error) {
	p := &Policy{store: o.Store, project: o.Project, tools: o.Tools}
	if filepath.IsAbs(o.Project) {
		p.project = filepath.Clean(o.Project)
		p.resolvedProject = resolveExisting(p.project)
	}
	for i, r := range o.Rules {
		cr, err := p.compileRule(r, false)
		if err != nil {
			return nil, fmt.Errorf("permissions rule %d %s: %w", i+1, r, err)
		}
		p.rules = append(p.rules, cr)
	}
	for _, dir := range o.Protected {
		if !filepath.IsAbs(dir) {
			return nil, fmt.Errorf("protected directory %q is not absolute", dir)
		}
		dir = filepath.Clean(dir)
		p.protected = append(p.protected, dir)
		if resolved, err := filepath.EvalSymlinks(dir); err == nil && resolved != dir {
			p.protected = append(p.protected, resolved)
		}
	}
	return p, nil
}

// toolClass is how the policy judges a tool call.
type toolClass int

const (
	classOther   toolClass = iota // MCP and unknown tools
	classRead                     // file reads: read_file, list_dir, glob, grep
	classEdit                     // file changes: write_file, edit_file
	classCommand                  // command lines: run_command
	classNoop                     // no side effects: update_plan
	classFetch                    // network reads: web_fetch
)

// classOf is the class of calls of an ACP tool kind.
func classOf(k acp.ToolKind) toolClass {
	switch k {
	case acp.ToolKindThink:
		return classNoop
	case acp.ToolKindRead, acp.ToolKindSearch:
		return classRead
	case acp.ToolKindEdit, acp.ToolKindDelete, acp.ToolKindMove:
		return classEdit
	case acp.ToolKindExecute:
		return classCommand
	case acp.ToolKindFetch:
		return classFetch
	}
	return classOther
}

// compiledRule is a validated Rule.
type compiledRule struct {
	rule Rule
	tool glob.Pattern
	cmd  commandPattern
	path pathGlob
	// origin is the Match of a rule on a fetch tool.
	origin originPattern
	// remembered rules' relative path patterns are relative to the project
	// directory instead of the workspace root.
	remembered bool
}

func (p *Policy) compileRule(r Rule, remembered bool) (compiledRule, error) {
	switch r.Action {
	case Allow, Deny:
	case Ask:
		if remembered {
			return compiledRule{}, errors.New(`remembered rules are "allow" or "deny"`)
		}
	default:
		return compiledRule{}, fmt.Errorf(`unknown action %q (want "allow", "ask" or "deny")`, r.Action)
	}
	if r.Tool == "" {
		return compiledRule{}, errors.New(`tool is empty (use "*" for every tool)`)
	}
	tool, err := glob.Compile(r.Tool)
	if err != nil {
		return compiledRule{}, fmt.Errorf("tool %q is not a valid glob: %w", r.Tool, err)
	}
	cr := compiledRule{rule: r, tool: tool, remembered: remembered}
	cmdTool, fileTool, fetchTool := false, false, false
	for name, k := range p.tools {
		if !cr.toolMatches(name) {
			continue
		}
		switch classOf(k) {
		case classCommand:
			cmdTool = true
		case classRead, classEdit:
			fileTool = true
		case classFetch:
			fetchTool = true
		}
	}
	if r.Match == "" {
		cr.cmd = commandPattern{any: true}
		cr.path = pathGlob{any: true}
		cr.origin = originPattern{any: true}
		return cr, nil
	}
	if !cmdTool && !fileTool && !fetchTool {
		return compiledRule{}, fmt.Errorf("match is only meaningful for run_command, the file tools and web_fetch, not for tool %q", r.Tool)
	}
	// A rule naming fetch tools matches origins. When it names commands or
	// files too ("*"), a Match that is no origin only never matches a fetch.
	cr.origin = originPattern{none: true}
	if fetchTool {
		op, err := compileOriginPattern(r.Match)
		if err == nil {
			cr.origin = op
		} else if !cmdTool && !fileTool {
			return compiledRule{}, err
		}
	}
	if cmdTool {
		if cr.cmd, err = compileCommandPattern(r.Match); err != nil {
			return compiledRule{}, err
		}
	}
	if fileTool {
		if cr.path, err = compilePathGlob(r.Match); err != nil {
			return compiledRule{}, err
		}
	}
	return cr, nil
}

func (r compiledRule) toolMatches(tool string) bool {
	return r.tool.Match(tool)
}

// pathInfo is a normalised Path, in its written form and with symbolic links
// resolved.
type pathInfo struct {
	abs      string // cleaned absolute path; "" when Abs was not absolute
	absSlash string // abs for absolute globs
	rel      string // cleaned slash path relative to its root; "" when outside
	projRel  string // slash path relative to the project directory, or ""
	// The same with existing symbolic links resolved (in the root and the
	// project directory too). resolvedRel is "" when the resolved path
	// leaves the resolved root.
	resolved, resolvedSlash, resolvedRel, resolvedProjRel string
	shown                                                 string // how to show the path to the user
}

func (p *Policy) pathInfo(x Path) pathInfo {
	pi := pathInfo{shown: cmp.Or(x.Abs, x.Rel)}
	if x.Abs == "" || !filepath.IsAbs(x.Abs) {
		return pi
	}
	pi.abs = filepath.Clean(x.Abs)
	pi.absSlash = slashAbs(pi.abs)
	pi.shown = pi.abs
	pi.resolved = resolveExisting(pi.abs)
	pi.resolvedSlash = slashAbs(pi.resolved)
	pi.projRel = relativeSlash(p.project, pi.abs)
	pi.resolvedProjRel = relativeSlash(p.resolvedProject, pi.resolved)
	if !x.Inside || x.Rel == "" {
		return pi
	}
	rel := path.Clean(x.Rel)
	if rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
		return pi
	}
	// The root is what Abs has before Rel; an inconsistent pair is outside.
	root := pi.abs
	if rel != "." {
		for range strings.Count(rel, "/") + 1 {
			root = filepath.Dir(root)
		}
		if filepath.Join(root, filepath.FromSlash(rel)) != pi.abs {
			return pi
		}
	}
	pi.rel = rel
	if r, err := filepath.Rel(resolveExisting(root), pi.resolved); err == nil && (r == "." || filepath.IsLocal(r)) {
		pi.resolvedRel = filepath.ToSlash(r)
	}
	return pi
}

// relativeSlash returns target relative to the directory base, slash
// separated, or "" when base is not absolute or target is not strictly
// inside it.
func relativeSlash(base, target string) string {
	if !filepath.IsAbs(base) {
		return ""
	}
	r, err := filepath.Rel(base, target)
	if err != nil || r == "." || !filepath.IsLocal(r) {
		return ""
	}
	return filepath.ToSlash(r)
}

// The rule matchers. A config rule's relative glob is matched against the
// path relative to its root, a remembered rule's against the path relative
// to the project; absolute globs against the absolute path. Deny and ask
// rules apply when either the written or the resolved path matches; allow
// rules only when both do, so a symbolic link cannot carry an allowance to
// another file.
func configMatchAny(r compiledRule, pi pathInfo) bool {
	return r.path.match(pi.rel, pi.absSlash) || r.path.match(pi.resolvedRel, pi.resolvedSlash)
}

func configMatchAll(r compiledRule, pi pathInfo) bool {
	return r.path.match(pi.rel, pi.absSlash) && r.path.match(pi.resolvedRel, pi.resolvedSlash)
}

func rememberedMatchAny(r compiledRule, pi pathInfo) bool {
	return r.path.match(pi.projRel, pi.absSlash) || r.path.match(pi.resolvedProjRel, pi.resolvedSlash)
}

func rememberedMatchAll(r compiledRule, pi pathInfo) bool {
	return r.path.match(pi.projRel, pi.absSlash) && r.path.match(pi.resolvedProjRel, pi.resolvedSlash)
}

// unsafeReason explains why a path must always ask, or returns "".
func (p *Policy) unsafeReason(pi pathInfo) string {
	if pi.abs == "" {
		return fmt.Sprintf("path %q is not absolute", pi.shown)
	}
	if c := protectedComponent(pi.rel, pi.absSlash); c != "" {
		return fmt.Sprintf("%s is inside a %s directory", pi.shown, c)
	}
	if p.isProtected(pi.abs) {
		return fmt.Sprintf("%s is inside acpd's configuration or state directory", pi.shown)
	}
	if pi.resolved != pi.abs {
		if c := protectedComponent(pi.resolvedSlash); c != "" {
			return fmt.Sprintf("%s resolves into a %s directory (%s)", pi.shown, c, pi.resolved)
		}
		if p.isProtected(pi.resolved) {
			return fmt.Sprintf("%s resolves into acpd's configuration or state directory (%s)", pi.shown, pi.resolved)
		}
	}
	if pi.rel == "" {
		return fmt.Sprintf("%s is outside the workspace roots", pi.shown)
	}
	if pi.resolvedRel == "" {
		return fmt.Sprintf("%s resolves outside its workspace root (%s)", pi.shown, pi.resolved)
	}
	return ""
}

// protectedComponents are directory names whose contents always ask: git's
// (hooks and config run code later) and acpd's project configuration.
var protectedComponents = []string{".git", ".acpd"}

// ProtectedNames returns the directory names whose contents always ask,
// wherever they appear in a path (".git", ".acpd"): the file broker refuses
// writes that reach one of them without naming it.
func ProtectedNames() []string { return slices.Clone(protectedComponents) }

// protectedComponent returns the protected directory name that one of the
// slash paths contains as a component (case-insensitively), or "".
func protectedComponent(slashPaths ...string) string {
	for _, sp := range slashPaths {
		for _, c := range strings.Split(sp, "/") {
			for _, name := range protectedComponents {
				if strings.EqualFold(c, name) {
					return name
				}
			}
		}
	}
	return ""
}

// isProtected reports whether abs is a protected directory or inside one.
// The comparison ignores case so that case-insensitive file systems cannot
// be used to dodge it.
func (p *Policy) isProtected(abs string) bool {
	for _, dir := range p.protected {
		if len(abs) < len(dir) || !strings.EqualFold(abs[:len(dir)], dir) {
			continue
		}
		if len(abs) == len(dir) || abs[len(dir)] == filepath.Separator || strings.HasSuffix(dir, string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// maxLinkHops bounds how many dangling symbolic links resolveExisting follows.
const maxLinkHops = 40

// resolveExisting resolves the symbolic links of abs as far as they exist:
// the longest existing prefix is resolved and the rest appended, and a
// dangling link (one a write would create the target of) is followed too.
func resolveExisting(abs string) string {
	for hops := 0; ; hops++ {
		next, dangling := resolveOnce(abs)
		if !dangling || hops >= maxLinkHops {
			return next
		}
		abs = next
	}
}

// resolveOnce resolves the longest existing prefix of abs. When that stops
// at a dangling symbolic link it returns the link's target joined with the
// rest, and dangling true.
func resolveOnce(abs string) (string, bool) {
	rest := ""
	cur := abs
	for {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest), false
		}
		if fi, err := os.Lstat(cur); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			if target, err := os.Readlink(cur); err == nil {
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(cur), target)
				}
				return filepath.Join(target, rest), true
			}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, false
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

func (p *Policy) canRemember() bool {
	return p.store != nil && p.project != ""
}

// remembered loads this project's remembered rules. The store file is read
// on every call (it is small, and other processes may change it); decoding
// and compiling are skipped while its content is unchanged.
func (p *Policy) remembered() ([]compiledRule, error) {
	if !p.canRemember() {
		return nil, nil
	}
	data, err := p.store.readRaw()
	if err != nil {
		return nil, err
	}
	p.cache.Lock()
	defer p.cache.Unlock()
	if p.cache.data != nil && bytes.Equal(p.cache.data, data) {
		return p.cache.rules, p.cache.err
	}
	rules, err := p.compileRemembered(data)
	p.cache.data, p.cache.rules, p.cache.err = data, rules, err
	return rules, err
}

// compileRemembered decodes the store file and compiles the project's rules.
func (p *Policy) compileRemembered(data []byte) ([]compiledRule, error) {
	entries, err := p.store.decode(data)
	if err != nil {
		return nil, err
	}
	var out []compiledRule
	for _, e := range entries {
		if e.Project != p.project {
			continue
		}
		cr, err := p.compileRule(e.Rule, true)
		if err != nil {
			return nil, fmt.Errorf("remembered permission %s %s is invalid (%v); remove it with `acpd permissions rm %s`", e.ID, e.Rule, err, e.ID)
		}
		out = append(out, cr)
	}
	return out, nil
}

func effectiveMode(m Mode) Mode {
	if m.Valid() {
		return m
	}
	return ModeAsk
}

// Decide decides on one call in the given mode. It never fails: anything it
// cannot judge asks (or, where a deny rule could apply, denies). When
// remembered choices cannot be read, nothing is allowed without asking.
func (p *Policy) Decide(mode Mode, c Call) Decision {
	mode = effectiveMode(mode)
	kind := classOf(c.Kind)
	if kind == classNoop {
		return Decision{Action: Allow, Reason: c.Tool + " has no side effects"}
	}
	if mode == ModePlan && (kind == classEdit || kind == classCommand || (kind == classOther || kind == classFetch) && !c.ReadOnly) {
		return Decision{Action: Deny, Reason: "plan mode is read-only"}
	}
	rem, storeErr := p.remembered()
	var d Decision
	switch kind {
	case classCommand:
		d = p.decideCommand(mode, c, rem)
	case classRead, classEdit:
		d = p.decideFiles(mode, kind, c, rem)
	case classFetch:
		d = p.decideFetch(mode, c, rem)
	default:
		d = p.decideOther(mode, c, rem)
	}
	if storeErr != nil && d.Action != Deny {
		d.Remember, d.Default = nil, false
		if d.Action == Allow {
			d.Action = Ask
		}
		d.Reason = fmt.Sprintf("%s (remembered choices are unavailable: %v)", d.Reason, storeErr)
	}
	if c.NoApproval && kind == classOther && d.Action != Deny {
		d = Decision{Action: Allow, Reason: "this tool needs no approval"}
	}
	if c.Escalate && kind == classCommand && d.Action != Deny {
		d = Decision{Action: Ask, Reason: "running a command outside the sandbox always needs approval"}
	}
	if d.Action != Ask {
		d.Remember = nil
	}
	return d
}

// applying yields, in order, the rules of rules with action a that apply to
// tool.
func applying(rules []compiledRule, a Action, tool string) iter.Seq[compiledRule] {
	return func(yield func(compiledRule) bool) {
		for _, r := range rules {
			if r.rule.Action == a && r.toolMatches(tool) && !yield(r) {
				return
			}
		}
	}
}

// modeDefault is step 6: the mode's default for a call nothing else decided.
func modeDefault(mode Mode, kind toolClass) (Action, string) {
	switch kind {
	case classRead:
		return Allow, "reading inside the workspace is allowed"
	case classEdit:
		if mode == ModeAutoEdit || mode == ModeFull {
			return Allow, fmt.Sprintf("edits inside the workspace are allowed in %s mode", mode)
		}
		return Ask, fmt.Sprintf("edits need approval in %s mode", mode)
	case classCommand:
		if mode == ModeFull {
			return Allow, "commands are allowed in full mode"
		}
		return Ask, fmt.Sprintf("commands need approval in %s mode", mode)
	default:
		if mode == ModeFull {
			return Allow, "tools are allowed in full mode"
		}
		return Ask, fmt.Sprintf("this tool needs approval in %s mode", mode)
	}
}

func (p *Policy) decideFiles(mode Mode, kind toolClass, c Call, rem []compiledRule) Decision {
	infos := make([]pathInfo, len(c.Paths))
	for i, x := range c.Paths {
		infos[i] = p.pathInfo(x)
	}
	for r := range applying(p.rules, Deny, c.Tool) {
		if r.path.any {
			return Decision{Action: Deny, Reason: fmt.Sprintf("denied by rule %s", r.rule)}
		}
		for _, pi := range infos {
			if configMatchAny(r, pi) {
				return Decision{Action: Deny, Reason: fmt.Sprintf("denied by rule %s: %s", r.rule, pi.shown)}
			}
		}
	}
	if len(infos) == 0 {
		return Decision{Action: Ask, Reason: fmt.Sprintf("%s was called without a path", c.Tool)}
	}
	for _, pi := range infos {
		if why := p.unsafeReason(pi); why != "" {
			return Decision{Action: Ask, Reason: why}
		}
	}
	for r := range applying(rem, Deny, c.Tool) {
		for _, pi := range infos {
			if rememberedMatchAny(r, pi) {
				return Decision{Action: Deny, Reason: fmt.Sprintf("the user chose to always reject %s %s in this project", c.Tool, pi.shown)}
			}
		}
	}
	for r := range applying(p.rules, Ask, c.Tool) {
		for _, pi := range infos {
			if configMatchAny(r, pi) {
				return Decision{Action: Ask, Reason: fmt.Sprintf("rule %s requires approval for %s", r.rule, pi.shown)}
			}
		}
	}
	var pending []pathInfo
	for _, pi := range infos {
		allowed := slices.ContainsFunc(p.rules, func(r compiledRule) bool {
			return r.rule.Action == Allow && r.toolMatches(c.Tool) && configMatchAll(r, pi)
		}) || slices.ContainsFunc(rem, func(r compiledRule) bool {
			return r.rule.Action == Allow && r.toolMatches(c.Tool) && rememberedMatchAll(r, pi)
		})
		if !allowed {
			pending = append(pending, pi)
		}
	}
	if len(pending) == 0 {
		return Decision{Action: Allow, Reason: "allowed by a rule or a remembered choice"}
	}
	act, why := modeDefault(mode, kind)
	d := Decision{Action: act, Reason: why, Default: true}
	if act == Ask && p.canRemember() {
		for _, pi := range pending {
			r, ok := p.narrowFileRule(c.Tool, pi)
			if !ok {
				d.Remember = nil
				break
			}
			if !slices.Contains(d.Remember, r) {
				d.Remember = append(d.Remember, r)
			}
		}
	}
	return d
}

// narrowFileRule is the remembered rule for exactly this file: its Match is
// relative to the project directory when inside it, absolute otherwise. It
// reports false when such a rule would not cover the path next time: when a
// symbolic link makes the written and the resolved path differ.
func (p *Policy) narrowFileRule(tool string, pi pathInfo) (Rule, bool) {
	// A Windows path is remembered as written there ("C:/…", not "/C:/…").
	m := formatPathPattern(strings.TrimPrefix(pi.absSlash, "/"))
	if !hasDrive(m) {
		m = "/" + m
	}
	if pi.projRel != "" {
		m = formatPathPattern(pi.projRel)
	}
	r := Rule{Tool: globEscape(tool), Match: m}
	cr, err := p.compileRule(Rule{Action: Allow, Tool: r.Tool, Match: r.Match}, true)
	if err != nil || !rememberedMatchAll(cr, pi) {
		return Rule{}, false
	}
	return r, true
}

func (p *Policy) decideOther(mode Mode, c Call, rem []compiledRule) Decision {
	find := func(rules []compiledRule, a Action) (compiledRule, bool) {
		for _, r := range rules {
			if r.rule.Action == a && r.rule.Match == "" && r.toolMatches(c.Tool) {
				return r, true
			}
		}
		return compiledRule{}, false
	}
	if r, ok := find(p.rules, Deny); ok {
		return Decision{Action: Deny, Reason: fmt.Sprintf("denied by rule %s", r.rule)}
	}
	if _, ok := find(rem, Deny); ok {
		return Decision{Action: Deny, Reason: fmt.Sprintf("the user chose to always reject %s in this project", c.Tool)}
	}
	if r, ok := find(p.rules, Ask); ok {
		return Decision{Action: Ask, Reason: fmt.Sprintf("rule %s requires approval", r.rule)}
	}
	if r, ok := find(p.rules, Allow); ok {
		return Decision{Action: Allow, Reason: fmt.Sprintf("allowed by rule %s", r.rule)}
	}
	if _, ok := find(rem, Allow); ok {
		return Decision{Action: Allow, Reason: "allowed by a remembered choice"}
	}
	act, why := modeDefault(mode, classOther)
	dflt := true
	if act == Ask && c.HintedRead && (mode == ModeAutoEdit || mode == ModeAsk && c.TrustHints) {
		act, why, dflt = Allow, fmt.Sprintf("the server marks %s as read-only", c.Tool), false
	}
	d := Decision{Action: act, Reason: why, Default: dflt}
	if act == Ask && p.canRemember() && c.Tool != "" {
		d.Remember = []Rule{{Tool: globEscape(c.Tool)}}
	}
	return d
}

func (p *Policy) decideCommand(mode Mode, c Call, rem []compiledRule) Decision {
	modeDefault := modeDefault
	if c.Unsandboxed && mode == ModeFull {
		// Full mode trusts commands because the sandbox confines them.
		modeDefault = func(Mode, toolClass) (Action, string) {
			return Ask, "no OS sandbox is available, so full mode asks before every command"
		}
	}
	a := c.analyze()
	all := append(slices.Clone(a.cmds), a.nested...)
	denies := func(rules []compiledRule, unknownAbsorbs bool) (compiledRule, simpleCommand, bool) {
		for r := range applying(rules, Deny, c.Tool) {
			if r.cmd.any {
				return r, simpleCommand{words: []cmdWord{{unknown: true, text: c.Command}}}, true
			}
			for _, sc := range all {
				if r.cmd.matchBroad(sc.words, unknownAbsorbs) {
					return r, sc, true
				}
			}
		}
		return compiledRule{}, simpleCommand{}, false
	}
	if r, sc, ok := denies(p.rules, false); ok {
		return Decision{Action: Deny, Reason: fmt.Sprintf("denied by rule %s: `%s`", r.rule, sc)}
	}
	if _, sc, ok := denies(rem, false); ok {
		return Decision{Action: Deny, Reason: fmt.Sprintf("the user chose to always reject `%s` in this project", sc)}
	}
	// Step 3 for the command's working directory: a command run outside
	// the roots or in a protected place asks in every mode, and an allow
	// rule or remembered choice (made for the project) cannot lift that.
	for _, x := range c.Paths {
		if why := p.unsafeReason(p.pathInfo(x)); why != "" {
			return Decision{Action: Ask, Reason: "working directory: " + why}
		}
	}
	// Parts that cannot be analysed might hide a denied command: ask.
	if r, sc, ok := denies(p.rules, true); ok {
		return Decision{Action: Ask, Reason: fmt.Sprintf("`%s` cannot be analysed and might run something denied by rule %s", sc, r.rule)}
	}
	if _, sc, ok := denies(rem, true); ok {
		return Decision{Action: Ask, Reason: fmt.Sprintf("`%s` cannot be analysed and might run something the user chose to always reject", sc)}
	}
	for r := range applying(p.rules, Ask, c.Tool) {
		if r.cmd.any {
			return Decision{Action: Ask, Reason: fmt.Sprintf("rule %s requires approval", r.rule)}
		}
		for _, sc := range all {
			if r.cmd.matchBroad(sc.words, true) {
				return Decision{Action: Ask, Reason: fmt.Sprintf("rule %s requires approval for `%s`", r.rule, sc)}
			}
		}
	}
	if len(a.alwaysAsk) > 0 {
		act, why := modeDefault(mode, classCommand)
		if act == Allow {
			return Decision{Action: Allow, Reason: why}
		}
		return Decision{Action: act, Reason: "the command always needs approval: " + strings.Join(a.alwaysAsk, "; ")}
	}
	var pending []simpleCommand
	for _, sc := range a.cmds {
		allowed := slices.ContainsFunc(p.rules, func(r compiledRule) bool {
			return r.rule.Action == Allow && r.toolMatches(c.Tool) && r.cmd.matchExact(sc.words)
		}) || slices.ContainsFunc(rem, func(r compiledRule) bool {
			return r.rule.Action == Allow && r.toolMatches(c.Tool) && r.cmd.matchExact(sc.words)
		})
		if !allowed {
			pending = append(pending, sc)
		}
	}
	if len(pending) == 0 {
		return Decision{Action: Allow, Reason: "every command is allowed by a rule or a remembered choice"}
	}
	act, why := modeDefault(mode, classCommand)
	dflt := !c.Unsandboxed || mode != ModeFull
	if act == Allow {
		return Decision{Action: Allow, Reason: why, Default: dflt}
	}
	shown := make([]string, len(pending))
	for i, sc := range pending {
		shown[i] = "`" + sc.String() + "`"
	}
	d := Decision{Action: act, Reason: fmt.Sprintf("%s (not covered by a rule: %s)", why, strings.Join(shown, ", ")), Default: dflt}
	if p.canRemember() {
		for _, sc := range pending {
			words, _ := sc.literalWords() // literal: alwaysAsk is empty
			r := Rule{Tool: globEscape(c.Tool), Match: formatCommandPattern(words)}
			if !slices.Contains(d.Remember, r) {
				d.Remember = append(d.Remember, r)
			}
		}
	}
	return d
}

// narrowRules lists every rule Decide could offer to remember for c, whatever
// is already allowed; Remember only stores rules from this set.
func (p *Policy) narrowRules(c Call) []Rule {
	var out []Rule
	switch classOf(c.Kind) {
	case classNoop:
	case classCommand:
		a := c.analyze()
		if len(a.alwaysAsk) > 0 {
			return nil
		}
		for _, sc := range a.cmds {
			words, ok := sc.literalWords()
			if !ok {
				return nil
			}
			out = append(out, Rule{Tool: globEscape(c.Tool), Match: formatCommandPattern(words)})
		}
	case classRead, classEdit:
		for _, x := range c.Paths {
			pi := p.pathInfo(x)
			if p.unsafeReason(pi) != "" {
				return nil
			}
			r, ok := p.narrowFileRule(c.Tool, pi)
			if !ok {
				return nil
			}
			out = append(out, r)
		}
	case classFetch:
		if o := Origin(c.URL); o != "" && c.Tool != "" {
			out = append(out, Rule{Tool: globEscape(c.Tool), Match: o})
		} else if c.Tool == webSearch && c.URL == "" {
			// web_search has no URL: the tool is the narrowest rule.
			out = append(out, Rule{Tool: c.Tool})
		}
	default:
		if c.Tool != "" {
			out = append(out, Rule{Tool: globEscape(c.Tool)})
		}
	}
	return out
}

// Remember stores d.Remember, as allow rules when allow is set and as deny
// rules otherwise, for the policy's project. d must come from Decide for the
// same call: rules that do not describe c exactly are refused. It returns an
// error wrapping ErrCannotRemember when there is nothing to remember (or no
// Store or project), and the Store's error when saving fails. Safe for
// concurrent use.
func (p *Policy) Remember(c Call, d Decision, allow bool) error {
	if !p.canRemember() {
		return fmt.Errorf("%w: no permissions store or project", ErrCannotRemember)
	}
	if len(d.Remember) == 0 {
		return ErrCannotRemember
	}
	valid := p.narrowRules(c)
	action := Deny
	if allow {
		action = Allow
	}
	rules := make([]Rule, 0, len(d.Remember))
	for _, r := range d.Remember {
		if !slices.Contains(valid, Rule{Tool: r.Tool, Match: r.Match}) {
			return fmt.Errorf("%w: %s does not describe this call exactly", ErrCannotRemember, r)
		}
		r.Action = action
		if _, err := p.compileRule(r, true); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrCannotRemember, r, err)
		}
		rules = append(rules, r)
	}
	return p.store.add(p.project, rules)
}
