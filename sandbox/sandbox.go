package sandbox

import (
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

// probeArg makes Init exit 0 at once: the availability probe runs it
// through the whole helper.
const probeArg = "__sandbox-probe"

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

// helperRequest is what the parent hands the helper in its argv.
type helperRequest struct {
	Plan plan     `json:"plan"`
	Path string   `json:"path"`
	Args []string `json:"args"`
	// Unconfined runs the command without a sandbox (mode off, or an
	// approved escalation): only the working directory is checked.
	Unconfined bool `json:"unconfined,omitempty"`
	// Dir, Dev and Ino pin the working directory: the helper refuses to
	// run unless its working directory is the directory Dir named when the
	// command was prepared.
	Dir string `json:"dir,omitempty"`
	Dev uint64 `json:"dev,omitempty"`
	Ino uint64 `json:"ino,omitempty"`
}

// Command prepares path (argv args, args[0] its name) to run under p
// in the working directory dir, for any starter: a local PTY or an
// editor's terminal. It returns the program and argv to start instead (this
// program's executable as the helper, where the backend has one). Call it
// before asking the user: the helper refuses to run unless its working
// directory is still the directory dir named now, so a directory swapped
// (for a symbolic link to elsewhere, say) after approval is refused rather
// than entered. With mode Off the command runs unconfined but the directory
// is still pinned. When the machine offers no sandbox and p is not Off the
// error wraps ErrUnavailable.
func (p Policy) Command(path string, args []string, dir string) (prog string, argv []string, err error) {
	if path == "" || len(args) == 0 {
		return "", nil, errors.New("sandbox: command has no path")
	}
	if !strings.Contains(path, "/") {
		lp, err := exec.LookPath(path)
		if err != nil {
			return "", nil, err
		}
		path = lp
	}
	req := helperRequest{Path: path, Args: args, Unconfined: p.Mode == Off, Dir: dir}
	if !req.Unconfined {
		if st := Available(); st.Err != nil {
			return "", nil, fmt.Errorf("%w: %v", ErrUnavailable, st.Err)
		}
		if req.Plan, err = p.resolve(); err != nil {
			return "", nil, err
		}
	}
	return command(req)
}

func (pl plan) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Writable []string `json:"writable,omitempty"`
		ReadOnly []string `json:"readOnly,omitempty"`
		Hidden   []string `json:"hidden,omitempty"`
		Network  bool     `json:"network,omitempty"`
	}{pl.writable, pl.readOnly, pl.hidden, pl.network})
}

func (pl *plan) UnmarshalJSON(b []byte) error {
	var v struct {
		Writable []string `json:"writable"`
		ReadOnly []string `json:"readOnly"`
		Hidden   []string `json:"hidden"`
		Network  bool     `json:"network"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*pl = plan{writable: v.Writable, readOnly: v.ReadOnly, hidden: v.Hidden, network: v.Network}
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
	case helperArg, stage1Arg:
	default:
		return
	}
	if len(os.Args) != 3 {
		fail(errors.New("bad helper arguments"))
	}
	var req helperRequest
	if err := json.Unmarshal([]byte(os.Args[2]), &req); err != nil {
		fail(err)
	}
	if os.Args[1] == stage1Arg {
		fail(stage1(os.Args[2], req))
	}
	fail(apply(req))
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
// sandboxes. Everything else in the request (policy, pinning) is dropped:
// it came from the agent, which a client does not trust.
func Unwrap(_ string, args []string) (path string, argv []string, ok bool) {
	if len(args) != 2 || args[0] != stage1Arg {
		return "", nil, false
	}
	var req helperRequest
	if err := json.Unmarshal([]byte(args[1]), &req); err != nil || req.Path == "" || len(req.Args) == 0 {
		return "", nil, false
	}
	return req.Path, req.Args, true
}
