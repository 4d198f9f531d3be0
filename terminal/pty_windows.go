//go:build windows

package terminal

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"acpd/internal/procgroup"

	"github.com/charmbracelet/x/conpty"
	"golang.org/x/sys/windows"
)

// ptyIO is the Windows side of a ptyTerminal: the pseudo console and acpd's
// own handle on the read end of its output pipe.
type ptyIO struct {
	cpty *conpty.ConPty
	out  *os.File
	// muted is set when the drain deadline passed: the reader keeps
	// reading until the console is gone but keeps nothing.
	muted atomic.Bool
}

// start creates a pseudo console and starts the command on it, in a job
// object (see internal/procgroup). Spec.StdinEOF cannot be honoured: the
// command's standard input is the pseudo console, which nobody types into.
// The caller holds m.mu.
func start(m *Manager, id, prog string, spec Spec, env []string, limit int) (_ *ptyTerminal, err error) {
	inR, inW, outR, outW, err := conpty.CreatePipes()
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	// acpd reads output through a handle of its own, so that closing the
	// pseudo console (which closes the handles it was given) ends the
	// reader with EOF instead of closing the handle under it.
	self := windows.CurrentProcess()
	var out windows.Handle
	if err := windows.DuplicateHandle(self, windows.Handle(outR), self, &out, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		for _, h := range []uintptr{inR, inW, outR, outW} {
			windows.CloseHandle(windows.Handle(h))
		}
		return nil, fmt.Errorf("terminal: %w", err)
	}
	outFile := os.NewFile(uintptr(out), "conpty-output")
	cpty, err := conpty.NewWithPipes(inR, inW, outR, outW, ptyCols, ptyRows, 0)
	if err != nil {
		outFile.Close()
		for _, h := range []uintptr{inR, inW, outR, outW} {
			windows.CloseHandle(windows.Handle(h))
		}
		return nil, fmt.Errorf("terminal: create pseudo console: %w", err)
	}
	defer func() {
		if err != nil {
			cpty.Close()
			outFile.Close()
		}
	}()
	pid, handle, err := cpty.Spawn(prog, append([]string{spec.Command}, spec.Args...), &syscall.ProcAttr{
		Dir: spec.Cwd,
		Env: env,
		Sys: &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP},
	})
	if err != nil {
		return nil, fmt.Errorf("terminal: start %q: %w", spec.Command, err)
	}
	// The spawn's handle keeps the pid from being reused until FindProcess
	// has its own.
	proc, err := os.FindProcess(pid)
	windows.CloseHandle(windows.Handle(handle))
	if err != nil {
		return nil, fmt.Errorf("terminal: start %q: %w", spec.Command, err)
	}
	group, err := procgroup.AdoptProcess(proc)
	if err != nil {
		_ = proc.Kill()
		_, _ = proc.Wait()
		return nil, fmt.Errorf("terminal: start %q: %w", spec.Command, err)
	}

	t := newPTYTerminal(m, id, group, limit, spec.Tee)
	t.cpty, t.out = cpty, outFile
	t.run()
	return t, nil
}

// readLoop copies console output into the buffer until the pseudo console
// is closed (EOF) or the output handle is.
func (t *ptyTerminal) readLoop() {
	buf := make([]byte, readChunk)
	for {
		n, err := t.out.Read(buf)
		if !t.muted.Load() {
			t.append(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// drain closes the pseudo console once the command has exited (conhost
// flushes what it holds and exits, which ends the reader) and waits at most
// drainMax for the output.
func (t *ptyTerminal) drain(readerDone <-chan struct{}) {
	t.m.wg.Go(func() {
		if err := t.cpty.Close(); err != nil {
			t.m.log.Warn("terminal: close pseudo console", "id", t.id, "err", err)
		}
	})
	deadline := time.NewTimer(drainMax)
	select {
	case <-readerDone:
	case <-deadline.C:
		// A descendant keeps the console busy: stop keeping its output,
		// and unblock the reader.
		t.muted.Store(true)
		_ = t.out.Close()
	}
	deadline.Stop()
	<-readerDone
	_ = t.out.Close()
}

func exitStatusOf(ps *os.ProcessState) ExitStatus {
	if ps == nil {
		return ExitStatus{}
	}
	code := ps.ExitCode()
	return ExitStatus{ExitCode: &code}
}
