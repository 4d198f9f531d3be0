// Package procgroup starts a child process in a group of its own and stops
// the whole group: the child and everything it started. It is the one copy
// of acpd's child shutdown ladder, used by terminals, exec model plug-ins,
// MCP stdio servers and the `acpd run` agent transport.
//
// On Unix the group is a process group (Setpgid, or the caller's Setsid,
// which also makes a new group); [Group.Terminate] sends SIGTERM (and
// SIGCONT, so a stopped member can act on it) and [Group.Kill] SIGKILL to
// the group. On Windows the group is a job object the child is assigned to
// right after it starts (a grandchild it spawns in those first microseconds
// may escape) with kill-on-close set, so the tree also dies with acpd;
// Terminate sends CTRL_BREAK to the child's console process group, which
// only works when acpd and the child share a console (otherwise Stop goes
// from closing stdin straight to Kill), and Kill terminates the job.
//
// Contract: exactly one goroutine waits for the child. Either the owner
// calls [Group.Wait] (never cmd.Wait) — [Group.Stop] relies on that, and
// starts the wait itself if nobody has — or, for a child started and
// reaped by someone else (the MCP SDK's command transport), the owner uses
// only [Prepare], [Adopt], [Group.Kill] and [Group.Close] after the child
// was reaped. Signalling a process group after its leader was reaped and
// every member exited could reach a new group that reuses the number; the
// window is the same as for any pid and is accepted.
package procgroup

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// pollInterval is how often Stop checks whether the group is gone.
const pollInterval = 10 * time.Millisecond

// Group is a started child and its process group (job object on Windows).
// Its methods are safe for concurrent use.
type Group struct {
	pid  int
	wait func() (*os.ProcessState, error)
	sys  sysGroup
	ps   *os.ProcessState // set once reaped

	started  atomic.Bool // some goroutine waits for the child
	waitOnce sync.Once
	waitErr  error
	done     chan struct{} // closed once the child was reaped
	// gone is set once the child was reaped and no member was left: the
	// group number may then be reused and is never signalled again.
	gone atomic.Bool

	closeOnce sync.Once
}

// Prepare makes cmd start in a new process group. Call it before cmd.Start
// when something else starts cmd; [Start] calls it itself. A SysProcAttr
// the caller set is kept (on Unix, Setsid already makes a new group and
// Setpgid is then not added).
func Prepare(cmd *exec.Cmd) { prepare(cmd) }

// Start prepares cmd, starts it and returns its Group. On Windows a failure
// to create or assign the job object kills the child and is returned: a
// tree that could not be stopped is not started.
func Start(cmd *exec.Cmd) (*Group, error) {
	prepare(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g, err := Adopt(cmd)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, err
	}
	return g, nil
}

// Adopt returns the Group of cmd, which was prepared with [Prepare] and has
// been started (cmd.Process is set).
func Adopt(cmd *exec.Cmd) (*Group, error) {
	if cmd.Process == nil {
		return nil, errors.New("procgroup: command not started")
	}
	wait := func() (*os.ProcessState, error) {
		err := cmd.Wait()
		return cmd.ProcessState, err
	}
	return adopt(cmd.Process.Pid, wait)
}

// AdoptProcess returns the Group of p, a process started in a new process
// group by other means than os/exec (a pseudo console's spawn, say). Wait
// then waits with p.Wait and reports a failed exit as an *exec.ExitError.
func AdoptProcess(p *os.Process) (*Group, error) {
	wait := func() (*os.ProcessState, error) {
		ps, err := p.Wait()
		if err == nil && !ps.Success() {
			err = &exec.ExitError{ProcessState: ps}
		}
		return ps, err
	}
	return adopt(p.Pid, wait)
}

func adopt(pid int, wait func() (*os.ProcessState, error)) (*Group, error) {
	g := &Group{pid: pid, wait: wait, done: make(chan struct{})}
	if err := g.sys.adopt(pid); err != nil {
		return nil, err
	}
	return g, nil
}

// Pid is the child's process id (on Unix also the process group id).
func (g *Group) Pid() int { return g.pid }

// ProcessState is the child's exit state once [Group.Wait] has reaped it,
// else nil.
func (g *Group) ProcessState() *os.ProcessState {
	select {
	case <-g.done:
		return g.ps
	default:
		return nil
	}
}

// Wait waits for the child to exit and reaps it, like cmd.Wait; later and
// concurrent calls return the same result once it has been reaped. Members
// of the group other than the child are not waited for (see [Group.Alive]).
func (g *Group) Wait() error {
	g.started.Store(true)
	g.reap()
	return g.waitErr
}

func (g *Group) reap() {
	g.waitOnce.Do(func() {
		g.ps, g.waitErr = g.wait()
		close(g.done)
	})
}

// Done is closed once [Group.Wait] has reaped the child.
func (g *Group) Done() <-chan struct{} { return g.done }

// Terminate asks every member of the group to stop: SIGTERM on Unix; on
// Windows CTRL_BREAK, which reaches the child only if it shares acpd's
// console. sent reports whether the request was delivered (Stop waits for
// the group only then). A group that is gone is not an error.
func (g *Group) Terminate() (sent bool, err error) {
	if g.gone.Load() {
		return false, nil
	}
	return g.sys.terminate(g.pid)
}

// Kill kills every member of the group (SIGKILL; TerminateJobObject on
// Windows). A group that is gone is not an error.
func (g *Group) Kill() error {
	if g.gone.Load() {
		return nil
	}
	return g.sys.kill(g.pid)
}

// Alive reports whether some member of the group still runs. Zombies count
// as gone: orphaned descendants are reaped by init, which may be slow or, in
// some containers, never happen. The unreaped child itself counts as alive
// until it has exited.
func (g *Group) Alive() bool {
	if g.gone.Load() {
		return false
	}
	reaped := false
	select {
	case <-g.done:
		reaped = true
	default:
	}
	alive := g.sys.alive(g.pid)
	if !alive && reaped {
		g.gone.Store(true)
	}
	return alive
}

// Close kills whatever is left of the group and releases its resources (the
// job handle on Windows). Call it once the child has been reaped; it is
// idempotent. Afterwards the group is never signalled again and Alive
// reports false.
func (g *Group) Close() error {
	var err error
	g.closeOnce.Do(func() {
		err = g.Kill()
		g.gone.Store(true)
		g.sys.close()
	})
	return err
}

// Stop runs the shutdown ladder and returns once the child has been reaped:
//
//  1. if stdin is not nil, it is closed and the group gets grace to exit
//     (the polite request for stdio servers and agents);
//  2. [Group.Terminate], and grace again if it was delivered;
//  3. [Group.Kill];
//  4. the child is reaped ([Group.Wait], started here if nobody has), the
//     other members get grace to die, and [Group.Close] kills what is left.
//
// A step is skipped once the group is gone. When ctx ends, Stop goes
// straight to step 3. The error is the first failure to signal the group;
// the child's exit status is Wait's.
func (g *Group) Stop(ctx context.Context, stdin io.Closer, grace time.Duration) error {
	if !g.started.Swap(true) {
		go g.reap() // ends once the child is reaped, before Stop returns
	}
	var err error
	if stdin != nil {
		_ = stdin.Close()
		g.waitGone(ctx, grace)
	}
	if ctx.Err() == nil && g.Alive() {
		var sent bool
		sent, err = g.Terminate()
		if sent {
			g.waitGone(ctx, grace)
		}
	}
	if g.Alive() {
		err = errors.Join(err, g.Kill())
	}
	<-g.done
	// SIGKILL is not instantaneous: give the members grace to die, so
	// that none is left when Stop returns (ctx does not shorten this).
	g.waitGone(context.Background(), grace)
	return errors.Join(err, g.Close())
}

// waitGone waits until the group is gone, grace has passed or ctx ended.
func (g *Group) waitGone(ctx context.Context, grace time.Duration) {
	t := time.NewTimer(grace)
	defer t.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for g.Alive() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			return
		case <-tick.C:
		}
	}
}
