//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// nativeArch is the AUDIT_ARCH of the system calls the filter knows.
const nativeArch = unix.AUDIT_ARCH_AARCH64

// x32Bit is 0: arm64 has no second ABI sharing its AUDIT_ARCH (32-bit
// ARM tasks have their own, refused by the architecture check).
const x32Bit = 0

// archDenied are refused on this architecture only.
var archDenied = []uint32{unix.SYS_NFSSERVCTL, unix.SYS_LOOKUP_DCOOKIE}
