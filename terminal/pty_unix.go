//go:build unix

package terminal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"acpd/internal/procgroup"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

const (
	// finalDrainReads bounds the non-blocking reads of data that was
	// already buffered in the kernel when the drain deadline passed.
	finalDrainReads = 16
)

// ptyIO is the Unix side of a ptyTerminal: the PTY master and the drain
// clock.
type ptyIO struct {
	master *os.File

	// drainStart is the UnixNano time the drain began, 0 while the
	// direct child runs.
	drainStart atomic.Int64
}

// start opens a PTY and starts the command on it. The caller holds m.mu.
func start(m *Manager, id, prog string, spec Spec, env []string, limit int) (_ *ptyTerminal, err error) {
	blockingMaster, tty, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("terminal: open pty: %w", err)
	}
	// The parent's copy of the slave is closed as soon as the child has
	// it, so that the master reports EIO once the child (and whatever
	// inherited the terminal) is gone.
	defer tty.Close()
	master, err := pollable(blockingMaster)
	blockingMaster.Close()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			master.Close()
		}
	}()
	if err := configureTTY(tty); err != nil {
		return nil, err
	}

	var stdin *os.File = tty
	if spec.StdinEOF {
		devNull, err := os.Open(os.DevNull)
		if err != nil {
			return nil, fmt.Errorf("terminal: %w", err)
		}
		defer devNull.Close()
		stdin = devNull
	}
	if err := closeOnExecAll(); err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:   prog,
		Args:   append([]string{spec.Command}, spec.Args...),
		Env:    env,
		Dir:    spec.Cwd,
		Stdin:  stdin,
		Stdout: tty,
		Stderr: tty,
		SysProcAttr: &syscall.SysProcAttr{
			Setsid:  true,
			Setctty: true,
			Ctty:    1, // the child's stdout, which is always the PTY
		},
	}
	group, err := procgroup.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("terminal: start %q: %w", spec.Command, err)
	}
	tty.Close()

	t := newPTYTerminal(m, id, group, limit, spec.Tee)
	t.master = master
	t.run()
	return t, nil
}

// markCloexecIn marks every descriptor >= 3 listed in dir (/proc/self/fd,
// /dev/fd) close-on-exec, so that descriptors the daemon inherited without
// the flag (from an editor, say) do not leak into commands. os/exec clears
// the flag on the descriptors it passes on purpose, so this does not affect
// other users of os/exec.
func markCloexecIn(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("terminal: cannot mark descriptors close-on-exec: %w", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("terminal: cannot mark descriptors close-on-exec: %w", err)
	}
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd < 3 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // closed meanwhile (the directory's own), or already marked
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err != nil {
			return fmt.Errorf("terminal: mark descriptor %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}

// configureTTY sets the window size and switches off output
// post-processing (ONLCR) so output keeps the program's line endings.
func configureTTY(tty *os.File) error {
	if err := pty.Setsize(tty, &pty.Winsize{Rows: ptyRows, Cols: ptyCols}); err != nil {
		return fmt.Errorf("terminal: set pty size: %w", err)
	}
	fd := int(tty.Fd())
	tio, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return fmt.Errorf("terminal: get termios: %w", err)
	}
	tio.Oflag &^= unix.ONLCR
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, tio); err != nil {
		return fmt.Errorf("terminal: set termios: %w", err)
	}
	return nil
}

// pollable returns a non-blocking, poller-registered duplicate of the PTY
// master (pty.Open leaves it in blocking mode), so that read deadlines
// work. The caller still owns and closes f.
func pollable(f *os.File) (*os.File, error) {
	var dupErr error
	fd := -1
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("terminal: pty master: %w", err)
	}
	if err := rc.Control(func(s uintptr) {
		fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, fmt.Errorf("terminal: pty master: %w", err)
	}
	if dupErr != nil {
		return nil, fmt.Errorf("terminal: dup pty master: %w", dupErr)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("terminal: pty master: %w", err)
	}
	nf := os.NewFile(uintptr(fd), "/dev/ptmx")
	if err := nf.SetReadDeadline(time.Time{}); err != nil {
		nf.Close()
		return nil, fmt.Errorf("terminal: pty master is not pollable: %w", err)
	}
	return nf, nil
}

// readLoop copies PTY output into the buffer until the PTY reports end of
// output (EIO on Linux once no process holds the slave open) or the drain
// deadline passes.
func (t *ptyTerminal) readLoop() {
	buf := make([]byte, readChunk)
	for {
		n, err := t.master.Read(buf)
		t.append(buf[:n])
		if err == nil {
			t.extendDrain()
			continue
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			t.finalDrain(buf)
		case errors.Is(err, syscall.EIO), errors.Is(err, io.EOF):
		default:
			t.m.log.Warn("terminal: reading pty", "id", t.id, "err", err)
		}
		return
	}
}

// extendDrain pushes the read deadline out by drainIdle after output
// arrived while draining, but never past drainStart+drainMax.
func (t *ptyTerminal) extendDrain() {
	s := t.drainStart.Load()
	if s == 0 {
		return
	}
	d := time.Now().Add(drainIdle)
	if limit := time.Unix(0, s).Add(drainMax); d.After(limit) {
		d = limit
	}
	_ = t.master.SetReadDeadline(d)
}

// finalDrain reads, without waiting, output the kernel had already buffered
// when the drain deadline passed (the reader may simply not have been
// scheduled in time).
func (t *ptyTerminal) finalDrain(buf []byte) {
	_ = t.master.SetReadDeadline(time.Time{})
	rc, err := t.master.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Read(func(fd uintptr) bool {
		for range finalDrainReads {
			n, err := unix.Read(int(fd), buf)
			if n <= 0 || err != nil {
				break
			}
			t.append(buf[:n])
		}
		return true // never wait for more
	})
}

// drain waits, once the command has exited, for its output to be drained
// (the reader stops at the PTY's end, after drainIdle without output or
// after drainMax) and closes the PTY master.
func (t *ptyTerminal) drain(readerDone <-chan struct{}) {
	t.drainStart.Store(time.Now().UnixNano())
	_ = t.master.SetReadDeadline(time.Now().Add(drainIdle))
	<-readerDone // bounded by drainMax plus a final non-blocking read
	if err := t.master.Close(); err != nil {
		t.m.log.Warn("terminal: close pty", "id", t.id, "err", err)
	}
}

func exitStatusOf(ps *os.ProcessState) ExitStatus {
	if ps == nil {
		return ExitStatus{}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		name := unix.SignalName(ws.Signal())
		if name == "" {
			name = "SIG" + strconv.Itoa(int(ws.Signal()))
		}
		return ExitStatus{Signal: &name}
	}
	code := ps.ExitCode()
	return ExitStatus{ExitCode: &code}
}
