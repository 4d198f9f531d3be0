//go:build linux && (amd64 || arm64)

package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The filter test's child: with seccompChildEnv set this test binary
// installs the filter (its value says which) on its main thread and
// re-executes itself as the probe, which makes each system call of
// probeCalls and prints its errno.
const (
	seccompChildEnv = "ACPD_TEST_SECCOMP_CHILD"
	seccompProbeEnv = "ACPD_TEST_SECCOMP_PROBE"
)

func init() {
	if v := os.Getenv(seccompChildEnv); v != "" {
		runtime.LockOSThread()
		os.Unsetenv(seccompChildEnv)
		os.Setenv(seccompProbeEnv, "1")
		if v != "none" {
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				fmt.Println("no_new_privs:", err)
				os.Exit(2)
			}
			if err := installFilter(filterRules{noUnixSockets: v == "nounix"}); err != nil {
				fmt.Println(err)
				os.Exit(2)
			}
		}
		self, _ := os.Executable()
		fmt.Println(unix.Exec(self, []string{self}, os.Environ()))
		os.Exit(2)
	}
	if os.Getenv(seccompProbeEnv) != "" {
		for _, c := range probeCalls() {
			fmt.Printf("%s=%s\n", c.name, errName(c.call()))
		}
		os.Exit(0)
	}
}

func errName(e unix.Errno) string {
	if e == 0 {
		return "ok"
	}
	return unix.ErrnoName(e)
}

type probeCall struct {
	name string
	call func() unix.Errno
}

func sys(nr uintptr, a ...uintptr) unix.Errno {
	a = append(a, 0, 0, 0, 0, 0, 0)
	r, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	if e == 0 && (nr == unix.SYS_SOCKET || nr == unix.SYS_IO_URING_SETUP) {
		unix.Close(int(r))
	}
	return e
}

func probeCalls() []probeCall {
	var params [120]byte
	var pair [2]int32
	ptmx, _ := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	c := []byte("x")
	return []probeCall{
		{"getpid", func() unix.Errno { return sys(unix.SYS_GETPID) }},
		{"keyctl", func() unix.Errno {
			return sys(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, ^uintptr(2) /* KEY_SPEC_SESSION_KEYRING */, 0)
		}},
		{"add_key", func() unix.Errno {
			return sys(unix.SYS_ADD_KEY, uintptr(unsafe.Pointer(&[]byte("user\x00")[0])), uintptr(unsafe.Pointer(&[]byte("acpd-test\x00")[0])), uintptr(unsafe.Pointer(&c[0])), 1, ^uintptr(3) /* KEY_SPEC_PROCESS_KEYRING */)
		}},
		{"io_uring_setup", func() unix.Errno { return sys(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0]))) }},
		{"bpf", func() unix.Errno { return sys(unix.SYS_BPF, 0xffff, 0, 0) }},
		{"mount", func() unix.Errno {
			return sys(unix.SYS_MOUNT, 0, uintptr(unsafe.Pointer(&[]byte("/nonexistent-acpd\x00")[0])), 0, 0, 0)
		}},
		{"unshare_user", func() unix.Errno { return sys(unix.SYS_UNSHARE, unix.CLONE_NEWUSER) }},
		{"unshare_fs", func() unix.Errno { return sys(unix.SYS_UNSHARE, unix.CLONE_FS) }},
		{"clone3", func() unix.Errno { return sys(unix.SYS_CLONE3, 0, 0) }},
		{"clone_newuser", func() unix.Errno {
			cmd := exec.Command("/proc/self/exe")
			cmd.Env = []string{seccompProbeEnv + "="}
			cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER}
			err := cmd.Run()
			if e, ok := err.(*os.PathError); ok {
				if n, ok := e.Err.(syscall.Errno); ok {
					return n
				}
			}
			if n, ok := err.(syscall.Errno); ok {
				return n
			}
			return 0
		}},
		{"tiocsti", func() unix.Errno {
			// The upper half of the request is ignored by the kernel, and
			// must be by the filter.
			return sys(unix.SYS_IOCTL, ptmx.Fd(), 0xdead<<32|unix.TIOCSTI, uintptr(unsafe.Pointer(&c[0])))
		}},
		{"tiocgwinsz", func() unix.Errno {
			var ws unix.Winsize
			return sys(unix.SYS_IOCTL, ptmx.Fd(), unix.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws)))
		}},
		{"socket_unix", func() unix.Errno { return sys(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM, 0) }},
		{"socket_inet", func() unix.Errno { return sys(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, 0) }},
		{"socketpair_stream", func() unix.Errno {
			return sys(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0, uintptr(unsafe.Pointer(&pair[0])))
		}},
		{"socketpair_dgram", func() unix.Errno {
			return sys(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0, uintptr(unsafe.Pointer(&pair[0])))
		}},
	}
}

// probeFilter runs the probe child under filter ("none", "unix", "nounix") and
// returns what each call answered.
func probeFilter(t *testing.T, filter string) map[string]string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), seccompChildEnv+"="+filter)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("probe under %s: %v\n%s", filter, err, out.String())
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		k, v, _ := strings.Cut(l, "=")
		got[k] = v
	}
	return got
}

// TestFilterRefusesInAChild runs a child under the filter and one without
// (the control: the same calls get through, so the refusals are the
// filter's).
func TestFilterRefusesInAChild(t *testing.T) {
	none := probeFilter(t, "none")
	for _, c := range []string{"getpid", "keyctl", "io_uring_setup", "unshare_fs", "socket_unix", "socket_inet", "socketpair_stream", "socketpair_dgram", "tiocgwinsz"} {
		if none[c] != "ok" {
			t.Logf("control: %s = %s without the filter", c, none[c])
		}
	}
	if none["clone3"] == "ENOSYS" || none["socket_unix"] != "ok" || none["keyctl"] == "EPERM" {
		t.Fatalf("control: clone3 %s, socket_unix %s, keyctl %s: the refusals below would prove nothing", none["clone3"], none["socket_unix"], none["keyctl"])
	}
	want := map[string]string{
		"getpid": "ok", "unshare_fs": "ok", "socket_inet": "ok", "socketpair_stream": "ok", "tiocgwinsz": "ok",
		"keyctl": "EPERM", "add_key": "EPERM", "io_uring_setup": "EPERM", "bpf": "EPERM", "mount": "EPERM",
		"unshare_user": "EPERM", "clone3": "ENOSYS", "clone_newuser": "EPERM", "tiocsti": "EPERM",
	}
	for _, filter := range []string{"unix", "nounix"} {
		got := probeFilter(t, filter)
		w := map[string]string{"socket_unix": "ok", "socketpair_dgram": "ok"}
		if filter == "nounix" {
			w = map[string]string{"socket_unix": "EPERM", "socketpair_dgram": "EPERM"}
		}
		for k, v := range want {
			w[k] = v
		}
		for k, v := range w {
			if got[k] != v {
				t.Errorf("filter %s: %s = %q, want %s", filter, k, got[k], v)
			}
		}
	}
}

// TestFilterAssembles: the program is within the kernel's bounds and
// every path ends in a return.
func TestFilterAssembles(t *testing.T) {
	for _, r := range []filterRules{{}, {noUnixSockets: true}} {
		prog, err := assemble(r)
		if err != nil {
			t.Fatal(err)
		}
		if len(prog) == 0 || len(prog) > 4096 {
			t.Fatalf("%d instructions", len(prog))
		}
		for i, in := range prog {
			if in.Code&0x07 == unix.BPF_JMP && in.Code != unix.BPF_JMP|unix.BPF_JA && (i+1+int(in.Jt) >= len(prog) || i+1+int(in.Jf) >= len(prog)) {
				t.Fatalf("instruction %d jumps out of the program", i)
			}
		}
		if last := prog[len(prog)-1]; last.Code != unix.BPF_RET|unix.BPF_K || last.K != unix.SECCOMP_RET_ALLOW {
			t.Fatalf("last instruction %+v, want RET ALLOW", last)
		}
	}
}
