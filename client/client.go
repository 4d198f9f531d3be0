// Package client implements the client side of ACP (the Agent Client
// Protocol) for running an agent headless: it serves the agent's fs/*,
// terminal/* and session/request_permission requests locally and hands
// session/update notifications and form elicitations to the caller.
// `acpd run` uses it to host acpd's own agent or any other ACP agent
// without an editor.
//
// # Files
//
// fs/read_text_file and fs/write_text_file accept only absolute paths whose
// real location (symlinks resolved, see files.Roots.Resolve) lies inside one of
// the client's roots; anything else is answered with a JSON-RPC error and
// nothing is read or written. Reads open the file through an os.Root of the
// containing root, so a symlink swapped in after the check cannot lead the
// open outside. Writes replace the file atomically, creating missing parent
// directories inside the root (files.WriteFileConfined: no symbolic link in
// any directory of the path, and no protected directory the path does not
// name).
//
// # Terminals
//
// terminal/* map one to one onto a terminal.Manager: commands are executed
// directly (no shell; but see commandLine) on a PTY with standard input at end of file, in the
// requested cwd (default Options.Cwd), with Options.Env as the base
// environment plus the request's env. A terminal belongs to the session that
// created it; other sessions cannot see it.
package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/files"
	"acpd/permissions"
	"acpd/sandbox"
	"acpd/terminal"
)

// maxReadBytes bounds the content one fs/read_text_file returns.
const maxReadBytes = files.MaxFileSize

// Options configures a Client.
type Options struct {
	// Cwd is the default working directory of terminals and the first root
	// of file access. It must be an absolute path to a directory; empty
	// means the process's working directory.
	Cwd string
	// Roots are further directories the agent may read and write.
	Roots []string
	// Protected are absolute directories (acpd's configuration and state)
	// that an fs/write_text_file may reach only by naming them, as
	// directories named like permissions.ProtectedNames (".git") may
	// (see files.WriteFileConfined): a path that is swapped to lead there
	// after the agent asked permission for it is refused.
	Protected []string
	// Permission answers session/request_permission. It may block (asking
	// a person, say) and must return promptly once ctx ends. Nil answers
	// every request with the first reject_once option (see Select): the
	// client fails closed.
	Permission func(ctx context.Context, req acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error)
	// Elicit answers elicitation/create in form mode (an agent's question
	// to the user, or an MCP server's form it forwards). It may block and
	// must return promptly once ctx ends (the agent withdrew the request).
	// When set, Dial advertises form elicitation; nil answers every
	// request "decline". URL elicitation is always declined.
	Elicit func(ctx context.Context, req acp.CreateElicitationRequest) (acp.CreateElicitationResponse, error)
	// OnUpdate receives every session/update notification, on the
	// connection's notification goroutine (or its read loop when the Conn's
	// Options.Immediate selects session/update, which keeps updates in
	// order with responses), one at a time. Nil drops them.
	OnUpdate func(acp.SessionNotification)
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// Env is the base environment of terminal commands ("NAME=value").
	// Nil means terminal.FilterEnv(os.Environ(), nil): the process's
	// environment without secrets.
	Env []string
	// Sandbox, when non-nil, confines terminal commands (an agent's
	// command that is itself wrapped for acpd's sandbox is unwrapped
	// first, so the client's policy applies). Where the machine offers no
	// sandbox and the policy is not off, terminal/create fails: commands
	// never run unconfined silently.
	Sandbox *sandbox.Policy
	// OnTerminalRelease, when not nil, receives a terminal's last output
	// as terminal/release is served, before the terminal goes: what the
	// command printed stays known after the agent let go of it.
	OnTerminalRelease func(sid acp.SessionID, id acp.TerminalID, out acp.TerminalOutputResponse)
}

// Client serves the client side of one ACP connection. Its methods are safe
// for concurrent use. The caller must Close it, after the connection has
// ended, to stop the commands it started.
type Client struct {
	o        Options
	log      *slog.Logger
	roots    *files.Roots
	rootsErr error
	terms    *terminal.Manager

	mu   sync.Mutex
	byID map[string]owned // by terminal id, until released
}

// owned is a terminal and the session that created it.
type owned struct {
	sid acp.SessionID
	t   terminal.Terminal
}

// New returns a Client for o. Invalid roots are not reported here: every
// file request then fails, so the client fails closed.
func New(o Options) *Client {
	lg := o.Logger
	if lg == nil {
		lg = slog.Default()
	}
	c := &Client{o: o, log: lg, byID: map[string]owned{}}
	cwd := o.Cwd
	if cwd == "" {
		cwd, c.rootsErr = os.Getwd()
	}
	c.o.Cwd = cwd
	if c.rootsErr == nil {
		c.roots, c.rootsErr = files.NewRoots(cwd, o.Roots...)
	}
	if c.rootsErr != nil {
		lg.Warn("client roots are invalid; file requests will fail", "err", c.rootsErr)
	}
	c.terms = terminal.NewManager(terminal.ManagerOptions{Logger: lg})
	return c
}

// Close kills every command the client started (SIGTERM, then SIGKILL after
// terminal.DefaultKillGrace), waits until they have been reaped, and makes
// later terminal/create requests fail. It is idempotent.
func (c *Client) Close() error {
	return c.terms.Close()
}

// Handler returns the jsonrpc.Handler serving the client methods (see
// acp.ClientHandler); other methods are answered with jsonrpc.ErrMethodNotFound.
func (c *Client) Handler() jsonrpc.Handler {
	return acp.ClientHandler(handlers{c})
}

// handlers adapts a Client to acp.Client.
type handlers struct{ c *Client }

// The methods the client serves: a schema upgrade that adds a required
// method breaks this assertion until the method is handled.
var _ interface {
	acp.Client
	acp.ClientReadTextFile
	acp.ClientWriteTextFile
	acp.ClientCreateTerminal
	acp.ClientTerminalOutput
	acp.ClientWaitForTerminalExit
	acp.ClientKillTerminal
	acp.ClientReleaseTerminal
	acp.ClientCreateElicitation
} = handlers{}

func (h handlers) CreateElicitation(ctx context.Context, req *acp.CreateElicitationRequest) (*acp.CreateElicitationResponse, error) {
	if h.c.o.Elicit == nil || req.Form == nil {
		return &acp.CreateElicitationResponse{Decline: &acp.CreateElicitationResponseDecline{}}, nil
	}
	resp, err := h.c.o.Elicit(ctx, *req)
	if err != nil {
		return nil, err
	}
	return &resp, nil
}

func (h handlers) SessionUpdate(_ context.Context, n *acp.SessionNotification) error {
	if h.c.o.OnUpdate != nil {
		h.c.o.OnUpdate(*n)
	}
	return nil
}

func (h handlers) RequestPermission(ctx context.Context, req *acp.RequestPermissionRequest) (*acp.RequestPermissionResponse, error) {
	if h.c.o.Permission == nil {
		resp := Select(req.Options, acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways)
		return &resp, nil
	}
	resp, err := h.c.o.Permission(ctx, *req)
	if err != nil {
		return nil, err
	}
	return &resp, nil
}

func (h handlers) ReadTextFile(ctx context.Context, req *acp.ReadTextFileRequest) (*acp.ReadTextFileResponse, error) {
	resp, err := h.c.readTextFile(ctx, *req)
	if err != nil {
		return nil, err
	}
	return &resp, nil
}

func (h handlers) WriteTextFile(_ context.Context, req *acp.WriteTextFileRequest) (*acp.WriteTextFileResponse, error) {
	resp, err := h.c.writeTextFile(*req)
	if err != nil {
		return nil, err
	}
	return &resp, nil
}

func (h handlers) CreateTerminal(ctx context.Context, req *acp.CreateTerminalRequest) (*acp.CreateTerminalResponse, error) {
	resp, err := h.c.createTerminal(ctx, *req)
	if err != nil {
		return nil, err
	}
	return &resp, nil
}

func (h handlers) TerminalOutput(ctx context.Context, req *acp.TerminalOutputRequest) (*acp.TerminalOutputResponse, error) {
	t, err := h.c.terminal(req.SessionID, req.TerminalID)
	if err != nil {
		return nil, err
	}
	out, err := t.Output(ctx)
	if err != nil {
		return nil, err
	}
	return &acp.TerminalOutputResponse{Output: out.Output, Truncated: out.Truncated, ExitStatus: exitStatus(out.Exit)}, nil
}

func (h handlers) WaitForTerminalExit(ctx context.Context, req *acp.WaitForTerminalExitRequest) (*acp.WaitForTerminalExitResponse, error) {
	t, err := h.c.terminal(req.SessionID, req.TerminalID)
	if err != nil {
		return nil, err
	}
	st, err := t.WaitForExit(ctx)
	if err != nil {
		return nil, err
	}
	es := exitStatus(&st)
	return &acp.WaitForTerminalExitResponse{ExitCode: es.ExitCode, Signal: es.Signal}, nil
}

func (h handlers) KillTerminal(ctx context.Context, req *acp.KillTerminalRequest) (*acp.KillTerminalResponse, error) {
	t, err := h.c.terminal(req.SessionID, req.TerminalID)
	if err != nil {
		return nil, err
	}
	if err := t.Kill(ctx); err != nil {
		return nil, err
	}
	return &acp.KillTerminalResponse{}, nil
}

func (h handlers) ReleaseTerminal(ctx context.Context, req *acp.ReleaseTerminalRequest) (*acp.ReleaseTerminalResponse, error) {
	c := h.c
	t, err := c.terminal(req.SessionID, req.TerminalID)
	if err != nil {
		return nil, err
	}
	if f := c.o.OnTerminalRelease; f != nil {
		if out, err := t.Output(ctx); err == nil {
			f(req.SessionID, req.TerminalID, acp.TerminalOutputResponse{Output: out.Output, Truncated: out.Truncated, ExitStatus: exitStatus(out.Exit)})
		}
	}
	c.mu.Lock()
	delete(c.byID, string(req.TerminalID))
	c.mu.Unlock()
	if err := t.Release(ctx); err != nil && !errors.Is(err, terminal.ErrReleased) {
		return nil, err
	}
	return &acp.ReleaseTerminalResponse{}, nil
}

// Select answers a permission request with the first option whose kind is
// kinds[0], else the first of kinds[1], and so on; when no option has any of
// the kinds, the outcome is "cancelled", which every agent treats as a
// refusal.
func Select(options []acp.PermissionOption, kinds ...acp.PermissionOptionKind) acp.RequestPermissionResponse {
	for _, k := range kinds {
		for _, o := range options {
			if o.Kind == k {
				return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
					Selected: &acp.SelectedPermissionOutcome{OptionID: o.OptionID},
				}}
			}
		}
	}
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}
}

// refused is the error for paths the client does not serve.
func refused(path, why string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: -32602, Message: fmt.Sprintf("%s: %s", path, why)}
}

// confine resolves an absolute path and requires it to lie inside a root.
func (c *Client) confine(p string) (files.Resolved, error) {
	if c.rootsErr != nil {
		return files.Resolved{}, fmt.Errorf("file access is unavailable: %w", c.rootsErr)
	}
	if !filepath.IsAbs(p) {
		return files.Resolved{}, refused(p, "path must be absolute")
	}
	res, err := c.roots.Resolve(p)
	if err != nil {
		return files.Resolved{}, refused(p, err.Error())
	}
	if !res.Inside() {
		return files.Resolved{}, refused(p, "path is outside the session roots")
	}
	return res, nil
}

// readTextFile serves fs/read_text_file: the whole file, or limit lines
// (all when absent) from the 1-based line (1 when absent), line terminators
// kept.
func (c *Client) readTextFile(ctx context.Context, req acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	res, err := c.confine(req.Path)
	if err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	root, err := os.OpenRoot(res.Root)
	if err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	defer root.Close()
	// Non-blocking: a FIFO must not hang the request; it is refused below.
	f, err := root.OpenFile(filepath.FromSlash(res.Rel), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		// As Zed answers: agents take it as "no such file" (the old
		// content of a file a write creates), not as a failure.
		return acp.ReadTextFileResponse{}, &jsonrpc.Error{Code: int(acp.ErrorCodeResourceNotFound), Message: fmt.Sprintf("Resource not found: %s", req.Path)}
	}
	if err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	if !st.Mode().IsRegular() {
		return acp.ReadTextFileResponse{}, refused(req.Path, files.ErrNotRegular.Error())
	}
	content, err := readWindow(ctx, f, req.Line, req.Limit)
	if err != nil {
		return acp.ReadTextFileResponse{}, fmt.Errorf("%s: %w", req.Path, err)
	}
	return acp.ReadTextFileResponse{Content: content}, nil
}

// readWindow returns limit lines of r starting at the 1-based line (nil line
// or 0 means 1, nil limit means to the end), at most maxReadBytes.
func readWindow(ctx context.Context, r io.Reader, line, limit *uint32) (string, error) {
	first := uint64(1)
	if line != nil && *line > 1 {
		first = uint64(*line)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var out []byte
	var n, taken uint64
	for {
		if limit != nil && taken >= uint64(*limit) {
			return string(out), nil
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n++
		keep := n >= first
		var err error
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			if keep {
				if len(out)+len(frag) > maxReadBytes {
					return "", files.ErrTooLarge
				}
				out = append(out, frag...)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if keep {
			taken++
		}
		if err == io.EOF {
			return string(out), nil
		}
		if err != nil {
			return "", err
		}
	}
}

// writeTextFile serves fs/write_text_file.
func (c *Client) writeTextFile(req acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	res, err := c.confine(req.Path)
	if err != nil {
		return acp.WriteTextFileResponse{}, err
	}
	if res.Rel == "." {
		return acp.WriteTextFileResponse{}, refused(req.Path, "is a session root, not a file")
	}
	if err := files.WriteFileConfined(c.roots, req.Path, []byte(req.Content), files.WriteOptions{Protected: c.o.Protected, ProtectedNames: permissions.ProtectedNames()}); err != nil {
		return acp.WriteTextFileResponse{}, err
	}
	return acp.WriteTextFileResponse{}, nil
}

// maxTerminals bounds the terminals an agent holds at once (each keeps a
// PTY and up to terminal.MaxOutputByteLimit bytes until released); further
// terminal/create requests fail until it releases some.
const maxTerminals = 64

// createTerminal serves terminal/create.
func (c *Client) createTerminal(ctx context.Context, req acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	c.mu.Lock()
	held := len(c.byID)
	c.mu.Unlock()
	if held >= maxTerminals {
		return acp.CreateTerminalResponse{}, fmt.Errorf("too many terminals (%d): release some with terminal/release first", held)
	}
	command, args := commandLine(req.Command, req.Args)
	spec := terminal.Spec{
		Command:  command,
		Args:     args,
		Cwd:      c.o.Cwd,
		BaseEnv:  c.o.Env,
		StdinEOF: true,
	}
	if req.Cwd != nil && *req.Cwd != "" {
		spec.Cwd = *req.Cwd
	}
	for _, e := range req.Env {
		if c.o.Sandbox != nil && e.Name == sandbox.PolicyEnv {
			continue // the agent does not choose our sandbox's policy
		}
		spec.Env = append(spec.Env, terminal.EnvVar{Name: e.Name, Value: e.Value})
	}
	if c.o.Sandbox != nil {
		path, argv := command, append([]string{command}, args...)
		if p, a, ok := sandbox.Unwrap(command, args); ok {
			path, argv = p, a
		}
		prog, wrapped, env, err := c.o.Sandbox.Command(path, argv, spec.Cwd)
		if err != nil {
			return acp.CreateTerminalResponse{}, fmt.Errorf("terminal/create: %w; refusing to run the command unconfined", err)
		}
		spec.Command, spec.Args = prog, wrapped[1:]
		for _, e := range env {
			name, value, _ := strings.Cut(e, "=")
			spec.Env = append(spec.Env, terminal.EnvVar{Name: name, Value: value})
		}
	}
	// ACP's absent limit means "unlimited"; the terminal retains at most
	// MaxOutputByteLimit bytes (its meaning of 0) to keep memory bounded.
	if req.OutputByteLimit != nil {
		spec.OutputByteLimit = int64(min(*req.OutputByteLimit, terminal.MaxOutputByteLimit))
	}
	t, err := c.terms.Start(ctx, spec)
	if err != nil {
		return acp.CreateTerminalResponse{}, err
	}
	c.mu.Lock()
	c.byID[t.ID()] = owned{sid: req.SessionID, t: t}
	c.mu.Unlock()
	return acp.CreateTerminalResponse{TerminalID: acp.TerminalID(t.ID())}, nil
}

// terminal returns the terminal id of session sid.
func (c *Client) terminal(sid acp.SessionID, id acp.TerminalID) (terminal.Terminal, error) {
	c.mu.Lock()
	o, ok := c.byID[string(id)]
	c.mu.Unlock()
	if ok && o.sid == sid {
		return o.t, nil
	}
	return nil, refused(string(id), "no such terminal")
}

// exitStatus converts a terminal exit status; nil stays nil.
func exitStatus(s *terminal.ExitStatus) *acp.TerminalExitStatus {
	if s == nil {
		return nil
	}
	es := &acp.TerminalExitStatus{Signal: s.Signal}
	if s.ExitCode != nil && *s.ExitCode >= 0 {
		code := uint32(*s.ExitCode)
		es.ExitCode = &code
	}
	return es
}
