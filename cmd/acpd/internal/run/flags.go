package run

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// The --output formats.
const (
	outputText       = "text"
	outputJSON       = "json"
	outputStreamJSON = "stream-json"
)

// The --approve levels.
const (
	approveAsk   = "ask"   // ask on the terminal; refuse without one
	approveEdits = "edits" // allow edits inside the project; ask/refuse the rest
	approveAll   = "all"   // allow everything a --policy deny rule does not refuse
	approveNone  = "none"  // refuse everything a --policy allow rule does not allow
)

var approveLevels = []string{approveAsk, approveEdits, approveAll, approveNone}

// Flags are the flags of `acpd run`, defined on a command's flag set by
// Register. A new flag is a field here, its definition in Register, its
// usage checks in check (which run before anything starts) and its use in
// the runner, which reads r.flags.
type Flags struct {
	agent           string
	agentArgs       []string
	cwd             string
	session         string
	cont            bool
	mode            string
	yes             bool
	approve         string
	allowEscalation bool
	policy          string
	json            bool
	output          string
	quiet           bool
	verbose         bool
	mcpConfig       string
	maxTurnRequests int
	timeout         time.Duration
	ui              bool
	failOnRefusal   bool
	followUps       []string
	answers         string

	set *pflag.FlagSet // where Register defined them, for Changed
}

// Register defines acpd run's flags on fs, bound to f.
func (f *Flags) Register(fs *pflag.FlagSet) {
	f.set = fs
	fs.StringVar(&f.agent, "agent", "", `run this ACP agent instead of acpd's own, e.g. "npx some-agent --acp" (split like a shell would, no shell involved)`)
	fs.StringArrayVar(&f.agentArgs, "agent-arg", nil, "one more argument for --agent (repeatable)")
	fs.StringVar(&f.cwd, "cwd", "", "the session's working directory; file access is confined to it (default: the current directory)")
	fs.StringVar(&f.session, "session", "", "continue this session (session/resume or session/load) instead of starting a new one")
	fs.BoolVarP(&f.cont, "continue", "c", false, "continue the most recent session of --cwd")
	fs.StringVar(&f.mode, "mode", "", "session mode, one the agent offers (acpd's: ask, auto-edit, plan, full; others' e.g. default, acceptEdits, bypassPermissions)")
	fs.BoolVarP(&f.yes, "yes", "y", false, "allow every permission request (--approve all)")
	fs.StringVar(&f.approve, "approve", approveAsk, "permission requests: ask (on the terminal, refuse without one), edits (allow edits inside --cwd), all, none")
	fs.BoolVar(&f.allowEscalation, "allow-escalation", false, "with --approve all: also allow running commands outside the sandbox (asked on the terminal otherwise, refused without one; or [sandbox] escalate = \"allow\")")
	fs.StringVar(&f.policy, "policy", "", "permission rules, in the config file's [[permissions.rules]] format, decided before --approve")
	fs.StringVar(&f.output, "output", outputText, "text (the answer on stdout), json (one final object) or stream-json (every update, then the final object, as JSON lines)")
	fs.BoolVar(&f.json, "json", false, "--output stream-json")
	fs.BoolVarP(&f.quiet, "quiet", "q", false, "print only the answer (and errors): no tool calls, plans or summary on stderr")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "show the whole output of every command when it ends (otherwise its last lines, and the whole output of a failed one)")
	fs.StringVar(&f.mcpConfig, "mcp-config", "", `MCP servers for the session, a {"mcpServers": {...}} JSON file (stdio and HTTP entries); added to the config file's`)
	fs.IntVar(&f.maxTurnRequests, "max-turn-requests", 0, "stop the turn after this many model requests (acpd's own agent; default agent.max_turn_requests)")
	fs.DurationVar(&f.timeout, "timeout", 0, "cancel the turn after this long, e.g. 10m (exit status 124)")
	fs.BoolVar(&f.ui, "ui", false, "host MCP App views in the browser: serve a page on 127.0.0.1 and open it")
	fs.StringArrayVar(&f.followUps, "follow-up", nil, "send this prompt too, as the next turn of the session once the turn before it ends (repeatable, in order; a turn that does not end normally stops the rest)")
	fs.StringVar(&f.answers, "answers", "", `answers to the agent's questions (ask_user, MCP servers' forms): a JSON object {"question": answer} or one answer per line, in order; without, questions are asked on the terminal (declined without one, and always under --approve none)`)
	fs.BoolVar(&f.failOnRefusal, "fail-on-refusal", false, "exit 3 when a permission request was refused (by --approve, --policy or for want of a terminal), so a CI step fails when the agent could not do what it tried")
}

// changed reports whether the flag name was given on the command line.
func (f *Flags) changed(name string) bool { return f.set != nil && f.set.Changed(name) }

// check resolves the flags that stand for others (--json, --yes) and
// rejects bad values and combinations as usage errors. It returns the
// command line of --agent with its --agent-arg arguments (nil without).
func (f *Flags) check() (argv []string, err error) {
	if f.json {
		if f.output != outputText && f.output != outputStreamJSON {
			return nil, UsageError("--json is --output stream-json; it cannot be combined with --output " + f.output)
		}
		f.output = outputStreamJSON
	}
	if !slices.Contains([]string{outputText, outputJSON, outputStreamJSON}, f.output) {
		return nil, UsageError(fmt.Sprintf("unknown --output %q (want text, json or stream-json)", f.output))
	}
	if !slices.Contains(approveLevels, f.approve) {
		return nil, UsageError(fmt.Sprintf("unknown --approve %q (want %s)", f.approve, strings.Join(approveLevels, ", ")))
	}
	if f.changed("yes") && f.yes {
		if f.changed("approve") && f.approve != approveAll {
			return nil, UsageError("--yes is --approve all; it cannot be combined with --approve " + f.approve)
		}
		f.approve = approveAll
	}
	if f.allowEscalation && f.approve != approveAll {
		return nil, UsageError("--allow-escalation needs --approve all (or --yes): it only widens what that allows")
	}
	if f.cont && f.session != "" {
		return nil, UsageError("--continue and --session exclude each other")
	}
	if f.maxTurnRequests < 0 {
		return nil, UsageError("--max-turn-requests must be at least 1")
	}
	for _, fu := range f.followUps {
		if strings.TrimSpace(fu) == "" {
			return nil, UsageError("--follow-up is empty")
		}
	}
	if f.timeout < 0 {
		return nil, UsageError("--timeout must be positive")
	}
	if f.agent != "" {
		if argv, err = splitWords(f.agent); err != nil {
			return nil, UsageError("--agent: " + err.Error())
		}
		if len(argv) == 0 {
			return nil, UsageError("--agent is empty")
		}
		argv = append(argv, f.agentArgs...)
		if f.maxTurnRequests > 0 {
			return nil, UsageError("--max-turn-requests applies to acpd's own agent only (ACP has no such request for others)")
		}
	} else if len(f.agentArgs) > 0 {
		return nil, UsageError("--agent-arg needs --agent")
	}
	return argv, nil
}
