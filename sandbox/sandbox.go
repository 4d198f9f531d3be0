package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// helperArg is the hidden sub-command under which a program that calls Init
// re-executes itself to apply a policy and exec the real command.
const helperArg = "__sandbox-exec"

// stage1Arg starts the helper through a first, namespace-less stage (see
// wrap on Linux).
const stage1Arg = "__sandbox-stage1"

// initArg is the sandbox's init, pid 1 of the command's PID namespace
// (see spawnInit on Linux).
const initArg = "__sandbox-init"

// probeArg makes Init exit 0 at once: the availability probe runs it
// through the whole helper.
const probeArg = "__sandbox-probe"

// The form Command prepares, which an editor shows as the terminal's
// command line: PROGRAM sandbox --policy ID -- ARGV..., the policy in
// PolicyEnv. "sandbox" is also acpd's own sub-command: Init takes the
// arguments only when --policy follows it.
const (
	visibleArg = "sandbox"
	policyFlag = "--policy"
)

// PolicyEnv is the environment variable through which a command prepared by
// Command receives its policy (see Command). A starter must set it as
// Command says and must not let anyone else (an agent's terminal/create)
// choose its value.
const PolicyEnv = "ACPD_SANDBOX_POLICY"

// ErrUnavailable is wrapped by Wrap's error when this machine offers no
// sandbox; Available says why.
var ErrUnavailable = errors.New("sandbox unavailable")

// Status is what Available reports.
type Status struct {
	// Backend names the mechanism ("landlock", "seatbelt"), "" when none.
	Backend string
	// Detail describes it (ABI version, namespaces) or why it is missing.
	Detail string
	// Err is nil when commands can be sandboxed.
	Err error
}

var (
	statusOnce sync.Once
	status     Status
)

// Available reports whether this machine can sandbox commands. The first
// call probes by running a sandboxed no-op through the helper (so Init must
// be in the program's main or TestMain); the result is cached.
func Available() Status {
	statusOnce.Do(func() { status = probe() })
	return status
}

// Wrap rewrites cmd so that it runs under p: cmd.Path and cmd.Args become a
// re-execution of this program as the helper (Init), which applies p and
// then executes the original cmd.Path with the original cmd.Args. Dir, Env,
// the standard descriptors and the caller's SysProcAttr (Setsid, Setctty:
// PTY children work) are kept; Wrap adds what the backend needs. With mode
// Off cmd is left alone. When the machine offers no sandbox the error wraps
// ErrUnavailable and cmd is unchanged.
func (p Policy) Wrap(cmd *exec.Cmd) error {
	if p.Mode == Off {
		return nil
	}
	if st := Available(); st.Err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, st.Err)
	}
	if cmd.Path == "" || len(cmd.Args) == 0 {
		return errors.New("sandbox: command has no path")
	}
	if err := cmd.Err; err != nil {
		return err
	}
	pl, err := p.resolve()
	if err != nil {
		return err
	}
	return wrap(pl, cmd)
}

// helperRequest is what the parent hands the helper: in its argv for the
// helper's own stages (followed by the command's argv), in PolicyEnv for
// the form Command prepares.
type helperRequest struct {
	Plan plan   `json:"plan"`
	Path string `json:"path"`
	// ArgsHash is argsHash of the command's argv, in the form Command
	// prepares: the policy is good for that command only.
	ArgsHash string `json:"argsHash,omitempty"`
	// Unconfined runs the command without a sandbox (mode off, or an
	// approved escalation): only the working directory is checked.
	Unconfined bool `json:"unconfined,omitempty"`
	// Dir, Dev and Ino pin the working directory: the helper refuses to
	// run unless its working directory is the directory Dir named when the
	// command was prepared.
	Dir string `json:"dir,omitempty"`
	Dev uint64 `json:"dev,omitempty"`
	Ino uint64 `json:"ino,omitempty"`
	// OwnTTY says the command's terminal is private to it (its starter
	// made a new session with the terminal as controlling terminal): the
	// command keeps it. Otherwise the command starts in a session of its
	// own, so it cannot push input into a terminal it shares with whoever
	// started it.
	OwnTTY bool `json:"ownTTY,omitempty"`
}

// Command prepares path (argv args, args[0] its name) to run under p
// in the working directory dir, for any starter: a local PTY or an
// editor's terminal. It returns the program and argv to start instead and
// environment entries ("NAME=value") the starter must add to the command's
// environment. Where the backend has a helper, that is this program's
// executable with argv
//
//	PROGRAM sandbox --policy ID -- ARGS...
//
// (what an editor shows as the terminal's command, the user's command
// legible) and the policy in PolicyEnv; the helper refuses to run when
// PolicyEnv is missing, is not the policy ID names, or was prepared for
// other ARGS, and removes it from the command's environment. Call it before
// asking the user: the helper refuses to run unless its working directory
// is still the directory dir named now, so a directory swapped (for a
// symbolic link to elsewhere, say) after approval is refused rather than
// entered. With mode Off the command runs unconfined but the directory is
// still pinned. When the machine offers no sandbox and p is not Off the
// error wraps ErrUnavailable.
func (p Policy) Command(path string, args []string, dir string) (prog string, argv, env []string, err error) {
	if path == "" || len(args) == 0 {
		return "", nil, nil, errors.New("sandbox: command has no path")
	}
	if !strings.Contains(path, "/") {
		lp, err := exec.LookPath(path)
		if err != nil {
			return "", nil, nil, err
		}
		path = lp
	}
	req := helperRequest{Path: path, Unconfined: p.Mode == Off, Dir: dir}
	if !req.Unconfined {
		if st := Available(); st.Err != nil {
			return "", nil, nil, fmt.Errorf("%w: %v", ErrUnavailable, st.Err)
		}
		if req.Plan, err = p.resolve(); err != nil {
			return "", nil, nil, err
		}
	}
	return command(req, args)
}

// visible returns the form Command prepares for req and args, run by
// self.
func visible(self string, req helperRequest, args []string) (string, []string, []string, error) {
	req.ArgsHash = argsHash(args)
	b, err := json.Marshal(req)
	if err != nil {
		return "", nil, nil, err
	}
	argv := append([]string{self, visibleArg, policyFlag, policyID(string(b)), "--"}, args...)
	return self, argv, []string{PolicyEnv + "=" + string(b)}, nil
}

// policyID names the policy raw in the visible form's argv.
func policyID(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:8])
}

// argsHash identifies an argv (each argument length-prefixed, so no two
// argvs share it).
func argsHash(args []string) string {
	h := sha256.New()
	for _, a := range args {
		fmt.Fprintf(h, "%d:%s", len(a), a)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fromEnv checks the arguments of Command's form (after "sandbox
// --policy") against raw, the value of PolicyEnv (set is whether it is
// set), and returns the request and the command's argv.
func fromEnv(args []string, raw string, set bool) (helperRequest, []string, error) {
	var req helperRequest
	if len(args) < 3 || args[1] != "--" {
		return req, nil, errors.New("bad helper arguments: want sandbox --policy ID -- COMMAND [ARG...]")
	}
	argv := args[2:]
	if !set {
		return req, nil, fmt.Errorf("no sandbox policy: %s is not set (whatever started this command dropped the environment acpd gave it); refusing to run it", PolicyEnv)
	}
	if policyID(raw) != args[0] {
		return req, nil, fmt.Errorf("the sandbox policy in %s is not policy %s; refusing to run the command", PolicyEnv, args[0])
	}
	if err := json.Unmarshal([]byte(raw), &req); err != nil {
		return req, nil, fmt.Errorf("the sandbox policy in %s: %w", PolicyEnv, err)
	}
	if req.ArgsHash != argsHash(argv) {
		return req, nil, errors.New("the sandbox policy was prepared for another command; refusing to run this one")
	}
	if req.Path == "" {
		return req, nil, errors.New("the sandbox policy names no program")
	}
	return req, argv, nil
}

func (pl plan) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Writable []string `json:"writable,omitempty"`
		ReadOnly []string `json:"readOnly,omitempty"`
		Hidden   []string `json:"hidden,omitempty"`
		Locked   []string `json:"locked,omitempty"`
		Visible  []string `json:"visible,omitempty"`
		Network  bool     `json:"network,omitempty"`
	}{pl.writable, pl.readOnly, pl.hidden, pl.locked, pl.visible, pl.network})
}

func (pl *plan) UnmarshalJSON(b []byte) error {
	var v struct {
		Writable []string `json:"writable"`
		ReadOnly []string `json:"readOnly"`
		Hidden   []string `json:"hidden"`
		Locked   []string `json:"locked"`
		Visible  []string `json:"visible"`
		Network  bool     `json:"network"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*pl = plan{writable: v.Writable, readOnly: v.ReadOnly, hidden: v.Hidden, locked: v.Locked, visible: v.Visible, network: v.Network}
	return nil
}

// Init must be the first statement of main (and of TestMain in packages
// whose tests sandbox commands). When the program was started as the
// sandbox helper it applies the policy and executes the command, or exits
// with status 126 and a message on stderr when it cannot; it never returns
// then. Otherwise it returns at once.
func Init() {
	if len(os.Args) < 2 {
		return
	}
	switch os.Args[1] {
	case probeArg:
		os.Exit(0)
	case visibleArg:
		if len(os.Args) < 3 || os.Args[2] != policyFlag {
			return // acpd's own sandbox sub-command
		}
		raw, set := os.LookupEnv(PolicyEnv)
		os.Unsetenv(PolicyEnv) // the command never sees it
		req, argv, err := fromEnv(os.Args[3:], raw, set)
		if err != nil {
			fail(err)
		}
		fail(stage1(req, argv))
	case helperArg, stage1Arg, initArg:
	default:
		return
	}
	if len(os.Args) < 4 {
		fail(errors.New("bad helper arguments"))
	}
	var req helperRequest
	if err := json.Unmarshal([]byte(os.Args[2]), &req); err != nil {
		fail(err)
	}
	switch os.Args[1] {
	case stage1Arg:
		fail(stage1(req, os.Args[3:]))
	case initArg:
		fail(runInit(req, os.Args[3:]))
	}
	fail(apply(req, os.Args[3:]))
}

// HelperExitCode is the exit status of a command whose sandbox could not be
// set up.
const HelperExitCode = 126

func fail(err error) {
	fmt.Fprintf(os.Stderr, "acpd sandbox: %v\n", err)
	os.Exit(HelperExitCode)
}

// Unwrap recognises a command that Command prepared (this program's
// helper, say from an agent that is acpd itself) and returns the command
// inside it, so that a client can apply its own policy instead of nesting
// sandboxes. The policy (in PolicyEnv) is not looked at: it came from the
// agent, which a client does not trust; the client must drop it.
func Unwrap(_ string, args []string) (path string, argv []string, ok bool) {
	if len(args) < 5 || args[0] != visibleArg || args[1] != policyFlag || args[3] != "--" || args[4] == "" {
		return "", nil, false
	}
	return args[4], args[4:], true
}
