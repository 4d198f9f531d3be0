//go:build linux

package sandbox

// backendDescription is what Describe adds for the Linux backend: what
// the PID namespace, the private mounts and the syscall filter do.
func backendDescription(p Policy) string {
	s := "; /tmp and /dev/shm private to the command; no process outlives it; no keyring, io_uring, ptrace, mounts, namespaces or terminal input injection"
	switch {
	case landlockResolvesUnix():
		s += "; host services' Unix sockets unreachable"
	case p.Network:
		s += "; host services' Unix sockets reachable (the network is on)"
	default:
		s += "; no Unix sockets but socket pairs"
	}
	return s
}
