//go:build linux && (amd64 || arm64)

package sandbox

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The syscall filter (seccomp BPF, assembled here: no cgo, no library)
// that the sandbox's init installs on the thread that starts the command,
// after dropping capabilities and before the fork, so the command and
// everything it starts inherit it. It refuses, with EPERM so that programs
// degrade rather than die:
//
//   - the kernel keyrings (add_key, request_key, keyctl): the session
//     keyring is shared with processes outside the sandbox;
//   - io_uring (its operations bypass the other rules), ptrace and
//     process_vm_readv/writev, bpf, perf_event_open, userfaultfd;
//   - mounts (mount, umount2, pivot_root, the new mount API), setns, new
//     namespaces of any kind (unshare with a namespace flag, clone with
//     one; clone3 answers ENOSYS, whose flags a filter cannot read, so libc
//     falls back to clone), kexec, modules, swap, reboot, acct, quotactl,
//     open_by_handle_at;
//   - the TIOCSTI and TIOCLINUX ioctls, which push input into a terminal;
//   - with the network off: Unix sockets other than connected pairs
//     (socket(AF_UNIX) and datagram socketpairs), the only way left to
//     reach a service outside the sandbox through a path-named socket;
//   - every system call of another ABI (32-bit x86, x32), whose numbers
//     differ and would slip past the rules above.
type filterRules struct {
	// noUnixSockets refuses socket(AF_UNIX, ...) and datagram
	// socketpair(AF_UNIX, ...).
	noUnixSockets bool
}

// Offsets in struct seccomp_data; arguments are 64-bit, and on the
// little-endian architectures the filter supports the low word comes first.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

func argLow(i int) uint32 { return offArgs + 8*uint32(i) }

// namespaceFlags are the clone/unshare flags that create namespaces
// (CLONE_NEWTIME shares its bit with CSIGNAL in clone, so it is checked
// for unshare only).
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// deniedAlways are refused whatever their arguments (besides the
// architecture's own list, archDenied).
var deniedAlways = []uint32{
	unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_SETNS,
	unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG,
	unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_REBOOT, unix.SYS_ACCT,
	unix.SYS_QUOTACTL, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_VHANGUP,
}

// insn is one BPF instruction with symbolic jump targets: jt and jf name
// a label of the same rule ("" is the next instruction).
type insn struct {
	op     uint16
	k      uint32
	jt, jf string
	label  string
}

func ld(off uint32) insn { return insn{op: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, k: off} }
func jeq(k uint32, jt, jf string) insn {
	return insn{op: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, k: k, jt: jt, jf: jf}
}
func jset(k uint32, jt, jf string) insn {
	return insn{op: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, k: k, jt: jt, jf: jf}
}
func jge(k uint32, jt, jf string) insn {
	return insn{op: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, k: k, jt: jt, jf: jf}
}
func and(k uint32) insn         { return insn{op: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, k: k} }
func ret(k uint32) insn         { return insn{op: unix.BPF_RET | unix.BPF_K, k: k} }
func errno(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e)&unix.SECCOMP_RET_DATA }

// labelled gives in a label a jump may name.
func labelled(label string, in insn) insn { in.label = label; return in }

// assembler collects blocks whose labels are local to each block; "next"
// is the first instruction after the block.
type assembler struct {
	prog []unix.SockFilter
	err  error
}

// block appends insns, resolving their labels within the block.
func (a *assembler) block(insns ...insn) {
	at := map[string]int{"next": len(insns)}
	for i, in := range insns {
		if in.label != "" {
			at[in.label] = i
		}
	}
	off := func(i int, l string) uint8 {
		if l == "" {
			return 0
		}
		j, ok := at[l]
		if !ok || j <= i || j-i-1 > 255 {
			a.err = fmt.Errorf("sandbox: seccomp: bad jump to %q", l)
			return 0
		}
		return uint8(j - i - 1)
	}
	for i, in := range insns {
		a.prog = append(a.prog, unix.SockFilter{Code: in.op, Jt: off(i, in.jt), Jf: off(i, in.jf), K: in.k})
	}
}

// rule refuses system call nr with e, always, or when test says so: test
// may clobber A (which holds the syscall number before and after the
// rule) and jumps to "deny" or "keep".
func (a *assembler) rule(nr uint32, e unix.Errno, test ...insn) {
	if len(test) == 0 {
		a.block(jeq(nr, "", "next"), ret(errno(e)))
		return
	}
	b := []insn{jeq(nr, "", "next")}
	b = append(b, test...)
	b = append(b, labelled("deny", ret(errno(e))), labelled("keep", ld(offNr)))
	a.block(b...)
}

// assemble returns the filter for r on this architecture.
func assemble(r filterRules) ([]unix.SockFilter, error) {
	var a assembler
	a.block(ld(offArch), jeq(nativeArch, "next", ""), ret(errno(unix.EPERM)))
	a.block(ld(offNr))
	if x32Bit != 0 {
		a.block(jge(x32Bit, "", "next"), ret(errno(unix.EPERM)))
	}
	for _, nr := range append(append([]uint32(nil), deniedAlways...), archDenied...) {
		a.rule(nr, unix.EPERM)
	}
	a.rule(unix.SYS_CLONE3, unix.ENOSYS)
	a.rule(unix.SYS_CLONE, unix.EPERM, ld(argLow(0)), jset(namespaceFlags, "deny", "keep"))
	a.rule(unix.SYS_UNSHARE, unix.EPERM, ld(argLow(0)), jset(namespaceFlags|unix.CLONE_NEWTIME, "deny", "keep"))
	a.rule(unix.SYS_IOCTL, unix.EPERM, ld(argLow(1)), jeq(unix.TIOCSTI, "deny", ""), jeq(unix.TIOCLINUX, "deny", "keep"))
	if r.noUnixSockets {
		a.rule(unix.SYS_SOCKET, unix.EPERM, ld(argLow(0)), jeq(unix.AF_UNIX, "deny", "keep"))
		a.rule(unix.SYS_SOCKETPAIR, unix.EPERM, ld(argLow(0)), jeq(unix.AF_UNIX, "", "keep"),
			ld(argLow(1)), and(0xf), jeq(unix.SOCK_STREAM, "keep", ""), jeq(unix.SOCK_SEQPACKET, "keep", "deny"))
	}
	a.block(ret(unix.SECCOMP_RET_ALLOW))
	if a.err != nil {
		return nil, a.err
	}
	return a.prog, nil
}

// installFilter applies the filter for r to the calling thread (which must
// be locked to its goroutine and have no_new_privs set); what it starts
// inherits it.
func installFilter(r filterRules) error {
	prog, err := assemble(r)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp: %w", e)
	}
	return nil
}
