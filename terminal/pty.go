package terminal

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"acpd/internal/procgroup"
	"acpd/internal/tailbuf"
)

const (
	ptyCols = 120
	ptyRows = 40

	readChunk = 32 << 10

	// After the direct child has exited, output is read until the PTY
	// reports its end, or until nothing arrives for drainIdle, or until
	// drainMax has passed (a descendant holding the terminal open and
	// writing forever).
	drainIdle = 100 * time.Millisecond
	drainMax  = time.Second
)

// ptyTerminal is a command running on a local PTY (a pseudo console on
// Windows). Its reader goroutine copies PTY output into buf; its supervisor
// goroutine reaps the command, ends the reader once the output is drained,
// closes the PTY and publishes the exit status. Both goroutines are counted in Manager.wg.
type ptyTerminal struct {
	id    string
	m     *Manager
	pid   int // on Unix also the process group and session ID
	group *procgroup.Group
	tee   io.Writer // Spec.Tee; written by the reader goroutine only
	ptyIO

	mu       sync.Mutex
	buf      *tailbuf.Buffer // nil once released
	exit     *ExitStatus     // set (before done closes) once exited and drained
	released bool

	done chan struct{}
}

// newPTYTerminal returns the terminal of a command started in group,
// keeping at most limit bytes of output. The caller sets its ptyIO and
// then calls run.
func newPTYTerminal(m *Manager, id string, group *procgroup.Group, limit int, tee io.Writer) *ptyTerminal {
	return &ptyTerminal{
		id:    id,
		tee:   tee,
		m:     m,
		pid:   group.Pid(),
		group: group,
		buf:   tailbuf.New(limit),
		done:  make(chan struct{}),
	}
}

// run starts the reader and supervisor goroutines, both counted in m.wg.
// The caller holds m.mu.
func (t *ptyTerminal) run() {
	readerDone := make(chan struct{})
	t.m.wg.Go(func() {
		defer close(readerDone)
		t.readLoop()
	})
	t.m.wg.Go(func() { t.supervise(readerDone) })
}

// supervise reaps the command, has its output drained (see drain, per
// platform; readerDone closes when the reader ends) and publishes the exit
// status.
func (t *ptyTerminal) supervise(readerDone <-chan struct{}) {
	err := t.group.Wait()
	status := exitStatusOf(t.group.ProcessState())
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.m.log.Warn("terminal: wait", "id", t.id, "err", err)
	}
	t.drain(readerDone)

	t.mu.Lock()
	t.exit = &status
	t.mu.Unlock()
	close(t.done)
	t.m.log.Debug("terminal exited", "id", t.id, "pid", t.pid, "status", status.String())
}

func (t *ptyTerminal) append(p []byte) {
	if len(p) == 0 {
		return
	}
	if t.tee != nil {
		_, _ = t.tee.Write(p)
	}
	t.mu.Lock()
	if t.buf != nil {
		_, _ = t.buf.Write(p)
	}
	t.mu.Unlock()
}

// String formats the status for logs, e.g. "exit 3" or "signal SIGKILL".
func (s ExitStatus) String() string {
	switch {
	case s.Signal != nil:
		return "signal " + *s.Signal
	case s.ExitCode != nil:
		return "exit " + strconv.Itoa(*s.ExitCode)
	default:
		return "unknown"
	}
}

func (t *ptyTerminal) ID() string { return t.id }

func (t *ptyTerminal) Output(ctx context.Context) (Output, error) {
	if err := ctx.Err(); err != nil {
		return Output{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.released {
		return Output{}, ErrReleased
	}
	var out Output
	out.Output, out.Truncated = t.buf.Snapshot(t.exit != nil)
	if t.exit != nil {
		e := t.exit.clone()
		out.Exit = &e
	}
	return out, nil
}

func (t *ptyTerminal) WaitForExit(ctx context.Context) (ExitStatus, error) {
	t.mu.Lock()
	released := t.released
	t.mu.Unlock()
	if released {
		return ExitStatus{}, ErrReleased
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return ExitStatus{}, ctx.Err()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.exit.clone(), nil
}

func (t *ptyTerminal) Kill(ctx context.Context) error {
	t.mu.Lock()
	released := t.released
	t.mu.Unlock()
	if released {
		return ErrReleased
	}
	return t.terminate(ctx)
}

func (t *ptyTerminal) Release(ctx context.Context) error {
	t.mu.Lock()
	if t.released {
		t.mu.Unlock()
		return ErrReleased
	}
	t.released = true
	t.buf = nil
	t.mu.Unlock()
	t.m.remove(t.id)
	return t.terminate(ctx)
}

// terminate ends the process group (SIGTERM, SIGKILL after the grace
// period or when ctx ends; see procgroup.Group.Stop) if any member is alive,
// then waits until the command has been reaped and drained.
func (t *ptyTerminal) terminate(ctx context.Context) error {
	err := t.group.Stop(ctx, nil, t.m.killGrace)
	select {
	case <-t.done:
		return err
	default:
	}
	select {
	case <-t.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
