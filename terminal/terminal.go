package terminal

import (
	"context"
	"errors"
	"io"
)

// Terminal is a running (or finished) command, whether on a local PTY
// started by [Manager.Start] or in the editor (the agent package implements
// an editor-backed Terminal over ACP with the same semantics).
//
// All methods are safe for concurrent use. After Release returns (whatever
// its result), every method except ID returns [ErrReleased]; a WaitForExit
// that was already blocked still returns the exit status.
type Terminal interface {
	// ID identifies the terminal; it is the ACP terminalId.
	ID() string
	// Output returns the retained output (the tail within the output byte
	// limit) and, once the command has exited and its output has been
	// drained, its exit status. It does not block.
	Output(ctx context.Context) (Output, error)
	// WaitForExit blocks until the command has exited and its output has
	// been drained, or until ctx ends (returning ctx.Err()).
	WaitForExit(ctx context.Context) (ExitStatus, error)
	// Kill ends the command's whole process group (including descendants
	// still running after the command itself exited) and waits until the
	// command has been reaped. The terminal stays valid: Output and
	// WaitForExit keep working. If ctx ends before the command has been
	// reaped, Kill escalates to SIGKILL at once and returns ctx.Err(); the
	// process is still reaped in the background.
	Kill(ctx context.Context) error
	// Release kills the command's process group if anything in it is still
	// running, frees the retained output and forgets the terminal. Later
	// calls return ErrReleased. If ctx ends before the command has been
	// reaped, the group gets SIGKILL and Release returns ctx.Err(); the
	// terminal is released regardless.
	Release(ctx context.Context) error
}

// Output is a snapshot of a terminal's output (ACP TerminalOutputResponse).
type Output struct {
	// Output is the retained output: raw bytes as the command wrote them,
	// starting at a UTF-8 character boundary when Truncated.
	Output string
	// Truncated reports that bytes were dropped from the beginning to stay
	// within the output byte limit.
	Truncated bool
	// Exit is the exit status once the command has exited, else nil.
	Exit *ExitStatus
}

// ExitStatus is how a command ended (ACP TerminalExitStatus). Exactly one
// field is set: ExitCode when the process exited normally, Signal (a name
// such as "SIGKILL") when a signal terminated it.
type ExitStatus struct {
	ExitCode *int
	Signal   *string
}

// EnvVar is one environment variable of [Spec.Env] (ACP EnvVariable).
type EnvVar struct {
	Name  string
	Value string
}

// Spec describes a command to start (ACP CreateTerminalRequest).
type Spec struct {
	// Command is the program to execute (no shell is involved). Required.
	Command string
	// Args are the arguments after the program name.
	Args []string
	// Env overrides variables of the base environment (see the package
	// documentation). Names must be non-empty and contain neither '=' nor
	// NUL; values must not contain NUL.
	Env []EnvVar
	// Cwd is the working directory; it must be an absolute path to an
	// existing directory. Empty means the daemon's working directory.
	Cwd string
	// OutputByteLimit is the maximum number of output bytes retained (ACP
	// outputByteLimit). ACP leaves the output unlimited when the field is
	// absent; to keep memory bounded, 0 (absent) and values above
	// MaxOutputByteLimit retain MaxOutputByteLimit bytes. Negative values
	// are rejected. The retained output can be up to 3 bytes shorter than
	// the limit, because it starts at a character boundary.
	OutputByteLimit int64
	// BaseEnv is the environment to start from, as "NAME=value" entries.
	// Nil means FilterEnv(os.Environ(), nil); an empty non-nil slice
	// means an empty base environment.
	BaseEnv []string
	// StdinEOF connects standard input to /dev/null instead of the PTY, so
	// programs reading stdin see end of file at once. Standard output and
	// standard error stay on the PTY.
	StdinEOF bool
	// Tee, when not nil, is given every byte of output, in order and
	// however much there is, as it is read, before WaitForExit returns
	// (also after Release, until the output is drained); the retained
	// output is still only the tail. Writes come from the terminal's
	// reader goroutine, so Tee must not block for long (the command waits
	// meanwhile); its errors are ignored. Local terminals only: the
	// editor's terminals keep only what they keep.
	Tee io.Writer
}

// MaxOutputByteLimit is the largest number of output bytes a terminal
// retains, and the limit applied when [Spec.OutputByteLimit] is 0.
const MaxOutputByteLimit = 16 << 20

// DefaultPath is searched for the command when the child's environment has
// no PATH variable.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// defaultTerm is added to the child's environment when it has no TERM.
const defaultTerm = "xterm-256color"

var (
	// ErrReleased is returned by calls on a terminal after Release.
	ErrReleased = errors.New("terminal: released")
	// ErrClosed is returned by Manager.Start after Manager.Close.
	ErrClosed = errors.New("terminal: manager closed")
)

func (s ExitStatus) clone() ExitStatus {
	var c ExitStatus
	if s.ExitCode != nil {
		v := *s.ExitCode
		c.ExitCode = &v
	}
	if s.Signal != nil {
		v := *s.Signal
		c.Signal = &v
	}
	return c
}
