//go:build linux

package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// relayedSignals are what a terminal or a supervisor sends that the
// sandbox's processes pass on to the command.
var relayedSignals = []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2, unix.SIGWINCH}

// statusFD is the descriptor on which the init reports the command's wait
// status to the helper.
const statusFD = 3

// spawnInit runs in the helper once the mounts are in place, on its locked
// thread: it puts the children of that thread into a new PID namespace and
// starts the sandbox's init there (this program again, pid 1), which
// confines itself and starts the command. When pid 1 of a PID namespace
// ends the kernel kills every process left in it, so nothing the command
// starts (a daemon after setsid, a double fork) outlives it; and the init
// dies with the helper (parent-death signal), the helper with its parent's
// SIGKILL of the group. The helper relays signals to the init and ends as
// the command ended (the same exit status or signal).
func spawnInit(req helperRequest, args []string) error {
	if err := unix.Unshare(unix.CLONE_NEWPID); err != nil {
		return fmt.Errorf("pid namespace: %w", err)
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, relayedSignals...)
	// Not os/exec: its first start probes clone(CLONE_PIDFD) with a child
	// that exits at once, which would be pid 1 of the new namespace and
	// end it.
	pid, err := syscall.ForkExec(selfExe, append([]string{"acpd-sandbox", initArg, string(raw)}, args...), &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2, w.Fd()},
		Sys:   &syscall.SysProcAttr{Pdeathsig: unix.SIGKILL},
	})
	w.Close()
	if err != nil {
		return fmt.Errorf("start the sandbox's init: %w", err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				unix.Kill(pid, s.(unix.Signal))
			case <-done:
				return
			}
		}
	}()
	var ws unix.WaitStatus
	for {
		_, err = unix.Wait4(pid, &ws, 0, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	close(done)
	signal.Stop(sigs)
	if err != nil {
		return fmt.Errorf("wait for the sandbox's init: %w", err)
	}
	var st [4]byte
	if n, _ := io.ReadFull(r, st[:]); n == len(st) {
		exitAs(syscall.WaitStatus(binary.NativeEndian.Uint32(st[:])))
	}
	// The init failed before starting the command (its message is on
	// stderr) or was killed.
	exitAs(syscall.WaitStatus(ws))
	return nil
}

// exitAs ends this process as ws says a child ended: with its exit status,
// or killed by its signal.
func exitAs(ws syscall.WaitStatus) {
	if ws.Signaled() {
		signal.Reset(ws.Signal())
		unix.Kill(os.Getpid(), ws.Signal())
		time.Sleep(time.Second)
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(ws.ExitStatus())
}

// runInit is pid 1 of the command's PID namespace, still holding the
// capabilities of the sandbox's user namespace: it mounts a /proc of the
// namespace (where the kernel allows it; a /proc partly masked, as in some
// containers, cannot be), makes itself non-dumpable, drops every
// capability, enforces Landlock, installs the syscall filter and starts
// the command from this thread, which all of it applies to. The command
// gets a session of its own unless its terminal is a private one (ownTTY),
// so it cannot push input into a terminal it shares with its invoker. The
// init reaps every orphan, relays signals to the command and, once the
// command ended, reports its wait status on statusFD and exits, which
// kills whatever is left in the namespace.
func runInit(req helperRequest, args []string) error {
	runtime.LockOSThread()
	status := os.NewFile(statusFD, "status")
	if status == nil {
		return errors.New("no status descriptor")
	}
	unix.CloseOnExec(statusFD)
	_ = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("non-dumpable: %w", err)
	}
	if err := dropCapabilities(); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	if err := restrictSelf(req.Plan); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	if err := installFilter(commandFilter(req.Plan)); err != nil {
		return fmt.Errorf("syscall filter: %w", err)
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, relayedSignals...)
	pid, err := syscall.ForkExec(req.Path, args, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: []uintptr{0, 1, 2},
		Sys:   &syscall.SysProcAttr{Setsid: !req.OwnTTY},
	})
	if err != nil {
		return fmt.Errorf("exec %s: %w", req.Path, err)
	}
	target := pid
	if !req.OwnTTY {
		target = -pid // the command's process group, as a terminal signals
	}
	go func() {
		for s := range sigs {
			unix.Kill(target, s.(unix.Signal))
		}
	}()
	for {
		var ws unix.WaitStatus
		wpid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("wait: %w", err)
		}
		if wpid != pid {
			continue // an orphan
		}
		var st [4]byte
		binary.NativeEndian.PutUint32(st[:], uint32(ws))
		status.Write(st[:])
		if ws.Signaled() {
			os.Exit(128 + int(ws.Signal()))
		}
		os.Exit(ws.ExitStatus())
	}
}

// leadsTerminalSession reports whether this process leads its session and
// one of its standard descriptors is that session's controlling terminal:
// a terminal private to what runs in it (a PTY its starter made for it),
// not one shared with whoever started it.
func leadsTerminalSession() bool {
	sid, err := unix.Getsid(0)
	if err != nil || sid != os.Getpid() {
		return false
	}
	for fd := 0; fd <= 2; fd++ {
		if s, err := unix.IoctlGetInt(fd, unix.TIOCGSID); err == nil && s == sid {
			return true
		}
	}
	return false
}

// commandFilter is the syscall filter for pl: Unix sockets are refused
// with the network off, unless Landlock itself refuses connections to
// sockets outside the sandbox (ABI 9), which leaves the command's own.
func commandFilter(pl plan) filterRules {
	return filterRules{noUnixSockets: !pl.network && !landlockResolvesUnix()}
}

// landlockResolvesUnix reports whether this kernel's Landlock refuses
// connections to pathname Unix sockets outside the sandbox.
func landlockResolvesUnix() bool {
	abi, _ := ll.LandlockGetABIVersion()
	return abi >= resolveUnixABI
}
