//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// nativeArch is the AUDIT_ARCH of the system calls the filter knows.
const nativeArch = unix.AUDIT_ARCH_X86_64

// x32Bit marks x32 system calls, which share the x86-64 AUDIT_ARCH.
const x32Bit = 0x40000000

// archDenied are refused on this architecture only.
var archDenied = []uint32{unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_USELIB, unix.SYS_NFSSERVCTL, unix.SYS_LOOKUP_DCOOKIE}
