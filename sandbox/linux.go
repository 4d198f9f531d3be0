//go:build linux

package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// minABI is the oldest Landlock ABI the backend accepts: ABI 3 (Linux 6.2)
// restricts truncation, and ABI 2's "refer" right is needed for renames
// across directories (git does them); go-landlock's best-effort mode would
// otherwise drop enforcement entirely on ABI 1.
const minABI = 3

// selfExe re-executes this very binary, even if it was replaced on disk.
const selfExe = "/proc/self/exe"

func probe() Status {
	st := Status{Backend: "landlock"}
	abi, err := ll.LandlockGetABIVersion()
	if err != nil {
		st.Err = fmt.Errorf("landlock is not enabled in this kernel: %v", err)
		st.Detail = st.Err.Error()
		return st
	}
	if abi < minABI {
		st.Err = fmt.Errorf("landlock ABI %d is older than %d (Linux 6.2)", abi, minABI)
		st.Detail = st.Err.Error()
		return st
	}
	st.Detail = fmt.Sprintf("Landlock ABI %d, user+mount+network namespaces", abi)
	// In /: the process's own directory may be below the private /tmp.
	cmd := &exec.Cmd{Path: selfExe, Args: []string{"acpd", probeArg}, Dir: "/"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := wrap(plan{}, cmd); err != nil {
		st.Err = err
	} else if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		st.Err = fmt.Errorf("cannot start a sandboxed process (are user namespaces allowed?): %s", msg)
	}
	if st.Err != nil {
		st.Detail = st.Err.Error()
	}
	return st
}

// wrap makes cmd start the helper in new user and mount namespaces (and a
// network namespace when the network is off). The process is root inside
// its user namespace only while the helper sets up mounts; the helper drops
// every capability before it executes the command.
//
// A non-dumpable parent that is not root cannot write the uid map of its
// own fork (the child's /proc files belong to root until it executes), so
// such a parent starts a plain first stage of the helper, which is dumpable
// again after its exec and starts the namespaced helper in turn.
func wrap(pl plan, cmd *exec.Cmd) error {
	r := helperRequest{Plan: pl, Path: cmd.Path, OwnTTY: ownTTY(cmd)}
	req, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Credential != nil {
		return errors.New("sandbox: a command with its own credentials cannot be sandboxed")
	}
	stage := helperArg
	if needStage1() {
		stage = stage1Arg
	} else {
		namespaced(cmd, pl.network)
	}
	cmd.Args = append([]string{"acpd-sandbox", stage, string(req)}, cmd.Args...)
	cmd.Path = selfExe
	return nil
}

// command implements Policy.Command: the first stage of the helper, which
// works from any parent (it needs no SysProcAttr), in its visible form.
func command(req helperRequest, args []string) (string, []string, []string, error) {
	if req.Dir != "" {
		var st unix.Stat_t
		if err := unix.Stat(req.Dir, &st); err != nil {
			return "", nil, nil, fmt.Errorf("sandbox: working directory: %w", err)
		}
		req.Dev, req.Ino = st.Dev, st.Ino
	}
	self, err := os.Executable()
	if err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	return visible(self, req, args)
}

// checkDir verifies that the working directory is the one the request pins.
func checkDir(req helperRequest) error {
	if req.Dir == "" {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Stat(".", &st); err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	if st.Dev != req.Dev || st.Ino != req.Ino {
		return fmt.Errorf("working directory %s was replaced after the command was approved; refusing to run it", req.Dir)
	}
	return nil
}

// forceStage1 makes every wrap use the first stage (tests).
var forceStage1 = false

func needStage1() bool {
	if forceStage1 {
		return true
	}
	d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err == nil && d != 1 && os.Geteuid() != 0
}

// namespaced adds the namespaces and id maps to cmd's SysProcAttr (a copy).
func namespaced(cmd *exec.Cmd, network bool) {
	attr := cmd.SysProcAttr
	if attr == nil {
		attr = &syscall.SysProcAttr{}
	} else {
		c := *attr
		attr = &c
	}
	attr.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWNS
	if !network {
		attr.Cloneflags |= unix.CLONE_NEWNET
	}
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	cmd.SysProcAttr = attr
}

// stage1 runs the namespaced helper as its child with the same standard
// descriptors (and so the same controlling terminal and process group),
// relays the signals a terminal or a supervisor sends, and ends as the
// child ended.
func stage1(req helperRequest, args []string) error {
	if err := checkDir(req); err != nil {
		return err
	}
	if req.Unconfined {
		err := unix.Exec(req.Path, args, os.Environ())
		return fmt.Errorf("exec %s: %w", req.Path, err)
	}
	raw, err := json.Marshal(helperRequest{Plan: req.Plan, Path: req.Path, Dir: req.Dir, Dev: req.Dev, Ino: req.Ino, OwnTTY: req.OwnTTY || leadsTerminalSession()})
	if err != nil {
		return err
	}
	cmd := &exec.Cmd{Path: selfExe, Args: append([]string{"acpd-sandbox", helperArg, string(raw)}, args...), Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
	namespaced(cmd, req.Plan.network)
	sigs := make(chan os.Signal, 8)
	relayed := []os.Signal{unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2, unix.SIGWINCH}
	signal.Notify(sigs, relayed...)
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	signal.Stop(sigs)
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return err
	}
	if ws.Signaled() {
		signal.Reset(ws.Signal())
		unix.Kill(os.Getpid(), ws.Signal())
		time.Sleep(time.Second)
		os.Exit(128 + int(ws.Signal()))
	}
	os.Exit(ws.ExitStatus())
	return nil
}

// apply runs in the helper: it is single-threaded with respect to the
// credentials it changes (the OS thread is locked and never unlocked, and
// the exec happens on it).
func apply(req helperRequest, args []string) error {
	runtime.LockOSThread()
	pl := req.Plan
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	if err := checkDir(req); err != nil {
		return err
	}
	var before unix.Stat_t
	if err := unix.Stat(".", &before); err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private mounts: %w", err)
	}
	if err := privateTmp(slices.Concat(pl.visible, pl.writable, pl.readOnly)); err != nil {
		return fmt.Errorf("private /tmp: %w", err)
	}
	if err := privateShm(); err != nil {
		return fmt.Errorf("private /dev/shm: %w", err)
	}
	if err := protectPaths(pl); err != nil {
		return err
	}
	for _, h := range pl.hidden {
		if _, err := os.Lstat(h); errors.Is(err, os.ErrNotExist) {
			continue // below the private /tmp
		}
		if err := hide(h); err != nil {
			return fmt.Errorf("hide %s: %w", h, err)
		}
	}
	if abi, _ := ll.LandlockGetABIVersion(); abi < resolveUnixABI && pl.network {
		if err := hideHostSockets(); err != nil {
			return fmt.Errorf("hide sockets: %w", err)
		}
	}
	if !pl.network {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("loopback: %w", err)
		}
	}
	// Re-enter the working directory through the new mounts (a cwd inside
	// a protected folder must see the read-only mount), and refuse if the
	// path now leads elsewhere.
	if err := unix.Chdir(wd); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("working directory %s is outside the session's roots, below the sandbox's private /tmp", wd)
		}
		return fmt.Errorf("working directory: %w", err)
	}
	var after unix.Stat_t
	if err := unix.Stat(".", &after); err != nil || after.Dev != before.Dev || after.Ino != before.Ino {
		return fmt.Errorf("working directory %s changed while the command started", wd)
	}
	return spawnInit(req, args)
}

// ownTTY reports whether cmd starts in a new session with its terminal as
// controlling terminal (a PTY of its own, as the terminal package makes).
func ownTTY(cmd *exec.Cmd) bool {
	a := cmd.SysProcAttr
	return a != nil && a.Setsid && a.Setctty
}

// mountFlags are the per-mount flags a remount must repeat: in a user
// namespace the kernel refuses to clear those the parent mount locked.
const mountFlags = unix.ST_NOSUID | unix.ST_NODEV | unix.ST_NOEXEC | unix.ST_NOATIME | unix.ST_NODIRATIME | unix.ST_RELATIME

// bindReadOnly mounts src on dst and makes that mount read-only.
func bindReadOnly(src, dst string) error {
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dst, &st); err != nil {
		return err
	}
	flags := uintptr(st.Flags) & mountFlags
	return unix.Mount("", dst, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|flags, "")
}

// hide covers a directory with an empty read-only tmpfs that nobody may
// enter, and a file with a read-only /dev/null.
func hide(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return bindReadOnly(os.DevNull, path)
	}
	return unix.Mount("tmpfs", path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, "mode=000,size=4k")
}

// resolveUnixABI is the Landlock ABI that restricts connecting to pathname
// Unix sockets of processes outside the sandbox (LANDLOCK_ACCESS_FS_RESOLVE_UNIX).
const resolveUnixABI = 9

// socketRoots are where services that act for their clients listen: D-Bus
// and systemd (which start processes unconfined for root), container
// engines (which start anything), SSH agents (which sign with the user's
// keys), X servers (which take keystrokes). With depth: how far below to
// look.
var socketRoots = []struct {
	dir   string
	depth int
}{{"/run", 4}, {"/var/run", 4}, {"/var/tmp", 2}} // /tmp is private

// maxSocketScan bounds the entries hideHostSockets looks at.
const maxSocketScan = 20000

// hideHostSockets covers with a read-only /dev/null every Unix socket that
// exists in socketRoots (and $SSH_AUTH_SOCK), so that a command cannot ask
// a service outside the sandbox to act for it. It is best effort, used
// only with the network on below Landlock ABI 9 (with the network off the
// syscall filter refuses Unix sockets; from ABI 9 Landlock refuses such
// connections itself): sockets created later or elsewhere stay reachable.
func hideHostSockets() error {
	var socks []string
	if a := os.Getenv("SSH_AUTH_SOCK"); filepath.IsAbs(a) {
		socks = append(socks, a)
	}
	seen := 0
	for _, r := range socketRoots {
		root, err := filepath.EvalSymlinks(r.dir)
		if err != nil {
			continue
		}
		base := strings.Count(root, "/")
		filepath.WalkDir(root, func(p string, d iofs.DirEntry, err error) error {
			if seen++; seen > maxSocketScan {
				return filepath.SkipAll
			}
			if err != nil {
				return nil
			}
			if d.IsDir() && strings.Count(p, "/")-base >= r.depth {
				return filepath.SkipDir
			}
			if d.Type()&iofs.ModeSocket != 0 {
				socks = append(socks, p)
			}
			return nil
		})
	}
	for _, s := range socks {
		fi, err := os.Lstat(s)
		if err != nil || fi.Mode()&iofs.ModeSocket == 0 {
			continue
		}
		if err := bindReadOnly(os.DevNull, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// loopbackUp brings up lo in the new network namespace, so servers a
// command starts for itself (tests) work while nothing outside is reachable.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// Secure bits: uid 0 gets no capabilities from exec, and nothing can give
// them back (all locked).
const securebits = 1<<0 | 1<<1 | // NOROOT, NOROOT_LOCKED
	1<<2 | 1<<3 | // NO_SETUID_FIXUP, _LOCKED
	1<<5 | // KEEP_CAPS_LOCKED
	1<<6 | 1<<7 // NO_CAP_AMBIENT_RAISE, _LOCKED

// dropCapabilities leaves the thread, and what it executes, with no
// capabilities in its user namespace: it cannot undo the mounts.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, securebits, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	for c := 0; ; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) && c > 0 {
				break
			}
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("ambient: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

// deviceFiles may be opened for writing (and ioctl) in every mode.
var deviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// restrictSelf enforces the plan's file rules with Landlock on this thread:
// read and execute everywhere, write only in the writable trees (and the
// terminal devices). IPC scoping keeps signals and abstract sockets inside
// the sandbox; Landlock also denies ptrace-mode access (and so
// /proc/PID/environ) to processes outside it. The network is the network
// namespace's job: Landlock's TCP rules (ABI 4+) do not cover UDP or
// Multipath TCP, and they would also break servers a command starts on its
// own loopback.
func restrictSelf(pl plan) error {
	// The newest ABI go-landlock knows, downgraded to the kernel's: from
	// ABI 9 on, connecting to pathname Unix sockets outside the sandbox is
	// refused too (no rule grants it).
	cfg := landlock.V11.BestEffort()
	cfg.HandledAccessNet = 0
	var dirs, files []string
	for _, w := range pl.writable {
		if fi, err := os.Stat(w); err == nil && fi.IsDir() {
			dirs = append(dirs, w)
		} else if err == nil {
			files = append(files, w)
		}
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(deviceFiles...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts", "/dev/shm").WithIoctlDev().IgnoreIfMissing(),
	}
	if len(dirs) > 0 {
		rules = append(rules, landlock.RWDirs(dirs...).WithRefer())
	}
	if len(files) > 0 {
		rules = append(rules, landlock.RWFiles(files...))
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return errors.New("nothing enforced (Landlock unavailable)")
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	return ll.LandlockRestrictSelf(fd, flags)
}
