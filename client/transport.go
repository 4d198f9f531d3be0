package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"acpd/internal/procgroup"
)

// Transport reaches an agent. Dial calls Connect once.
type Transport interface {
	// Connect starts (or reaches) the agent and returns the stream to it.
	// ctx bounds the start only, not the life of the stream.
	Connect(ctx context.Context) (*Stream, error)
}

// Stream is a connected agent: R reads what it writes, W writes its input.
// The connection closes both; Stop then ends the agent.
type Stream struct {
	R io.ReadCloser
	W io.WriteCloser
	// Stop is called once, after R and W have been closed (the agent's
	// input is at end of file). It ends the agent, waits until it has been
	// reaped and returns how it ended (nil for a clean exit).
	Stop func() error
	// Exited, when not nil, is closed once the agent has ended by itself
	// (or been stopped); ExitErr then reports how.
	Exited  <-chan struct{}
	ExitErr func() error
}

// DefaultGrace is how long CommandTransport waits after the agent's input
// closed before it sends SIGTERM, and again before SIGKILL. Agents that save
// state at end of input (acpd does) need a moment; agents that ignore it
// (claude-code-acp does) cost exactly this much per run.
const DefaultGrace = 500 * time.Millisecond

// CommandTransport starts the agent as a child process speaking ACP on its
// standard input and output.
//
// The child leads a process group of its own (internal/procgroup), so an agent started
// through a wrapper (sh -c, npx) is stopped with everything it started: Stop
// closes its input, waits Grace for it to exit, signals the whole group
// SIGTERM, waits Grace again, then SIGKILL, and always reaps the child.
// Members of the group left behind by a child that exited on its own are
// stopped the same way.
type CommandTransport struct {
	// Command is the program and its arguments; no shell is involved.
	Command []string
	// Dir is its working directory; empty means the current one.
	Dir string
	// Env is its environment; nil means os.Environ().
	Env []string
	// Stderr receives its standard error; nil discards it.
	Stderr io.Writer
	// Grace is the wait of each stop step; 0 means DefaultGrace.
	Grace time.Duration
}

// Connect implements Transport.
func (t *CommandTransport) Connect(ctx context.Context) (*Stream, error) {
	if len(t.Command) == 0 {
		return nil, errors.New("client: empty agent command")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command(t.Command[0], t.Command[1:]...)
	cmd.Dir = t.Dir
	cmd.Env = t.Env
	if t.Stderr != io.Discard {
		cmd.Stderr = t.Stderr
	}
	grace := t.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	// A writer that is not a file is fed by a goroutine of exec; what the
	// agent started may keep its end open, so Wait gives up after grace.
	cmd.WaitDelay = grace
	// Pipes of our own (not StdinPipe/StdoutPipe): Wait, which runs as soon
	// as the child exits, must not close the agent's output before the
	// connection has read it.
	g, inW, outR, err := procgroup.StartPiped(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting the agent: %w", err)
	}
	p := &proc{g: g, grace: grace, exited: make(chan struct{}), r: outR, w: inW}
	go p.wait()
	return &Stream{R: outR, W: inW, Stop: p.stop, Exited: p.exited, ExitErr: p.exitErr}, nil
}

// proc is a started agent command. Its wait goroutine ends when the child
// has exited; stop always waits for it.
type proc struct {
	g      *procgroup.Group
	grace  time.Duration
	r, w   io.Closer
	exited chan struct{}
	err    error // set before exited closes
}

func (p *proc) wait() {
	p.err = p.g.Wait()
	close(p.exited)
}

func (p *proc) exitErr() error {
	select {
	case <-p.exited:
		return p.err
	default:
		return nil
	}
}

// stop runs procgroup's ladder: the input (already closed by the
// connection) and grace, SIGTERM to the group and grace, SIGKILL; it
// returns once the child was reaped and no member of its group is left.
func (p *proc) stop() error {
	p.r.Close()
	p.g.Stop(context.Background(), p.w, p.grace)
	<-p.exited
	return p.err
}

// ServeTransport runs an agent in this process: Serve is called on its own
// goroutine with the agent's input and output and must return once its
// input reaches end of file or ctx ends.
type ServeTransport struct {
	Serve func(ctx context.Context, r io.Reader, w io.WriteCloser) error
	// Grace is how long Stop waits for Serve to return after its input
	// closed before it cancels Serve's context; 0 means 5 s (an in-process
	// agent saves its sessions on the way out).
	Grace time.Duration
}

// Connect implements Transport.
func (t *ServeTransport) Connect(ctx context.Context) (*Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	agentIn, toAgent := io.Pipe()
	fromAgent, agentOut := io.Pipe()
	serveCtx, stopServe := context.WithCancel(context.Background())
	exited := make(chan struct{})
	var serveErr error
	go func() {
		defer close(exited)
		serveErr = t.Serve(serveCtx, agentIn, agentOut)
		agentOut.Close()
		agentIn.Close()
	}()
	grace := t.Grace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	return &Stream{
		R: fromAgent,
		W: toAgent,
		Stop: func() error {
			timer := time.NewTimer(grace)
			defer timer.Stop()
			select {
			case <-exited:
			case <-timer.C:
			}
			stopServe()
			<-exited
			return serveErr
		},
		Exited: exited,
		ExitErr: func() error {
			select {
			case <-exited:
				return serveErr
			default:
				return nil
			}
		},
	}, nil
}
