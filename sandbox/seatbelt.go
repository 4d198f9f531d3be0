package sandbox

import (
	"fmt"
	"strings"
)

// seatbeltBase is the fixed part of the macOS profile: deny by default, let
// processes run, fork and talk to themselves, read everything (minus the
// hidden paths, added below), and use terminals and the devices shells
// need. It follows the base policies of Codex and Chromium.
const seatbeltBase = `(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup)
(allow ipc-posix-sem)
(allow ipc-posix-shm)
(allow user-preference-read)
(allow pseudo-tty)
(allow file-ioctl (literal "/dev/tty") (regex #"^/dev/ttys[0-9]+$"))
(allow file-read* file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/tty") (literal "/dev/dtracehelper") (regex #"^/dev/ttys[0-9]+$"))
`

// seatbeltProfile renders pl as a Seatbelt profile and the -D parameters
// it refers to: paths travel as parameters, never inside the profile text,
// so no path can change the profile's syntax.
func seatbeltProfile(pl plan) (profile string, params []string) {
	var b strings.Builder
	b.WriteString(seatbeltBase)
	param := func(prefix string, i int, path string) string {
		name := fmt.Sprintf("%s_%d", prefix, i)
		params = append(params, fmt.Sprintf("-D%s=%s", name, path))
		return fmt.Sprintf("(param %q)", name)
	}
	var hidden []string
	for i, h := range pl.hidden {
		hidden = append(hidden, fmt.Sprintf("(require-not (subpath %s))", param("HIDDEN", i, h)))
	}
	if len(hidden) == 0 {
		b.WriteString("(allow file-read*)\n")
	} else {
		fmt.Fprintf(&b, "(allow file-read* (require-all (subpath \"/\") %s))\n", strings.Join(hidden, " "))
	}
	var protected []string
	for i, r := range pl.readOnly {
		protected = append(protected, fmt.Sprintf("(require-not (subpath %s))", param("PROTECTED", i, r)))
	}
	protected = append(protected, hidden...)
	for i, w := range pl.writable {
		tree := fmt.Sprintf("(subpath %s)", param("WRITABLE", i, w))
		if len(protected) == 0 {
			fmt.Fprintf(&b, "(allow file-write* %s)\n", tree)
		} else {
			fmt.Fprintf(&b, "(allow file-write* (require-all %s %s))\n", tree, strings.Join(protected, " "))
		}
	}
	// Seatbelt takes the last matching rule: these denials come after the
	// writes allowed above. Renaming or removing a directory above a
	// protected or hidden path (to put a directory of the command's
	// choosing in its place) is refused, as the Linux backend's mount
	// points refuse it.
	if len(pl.locked) > 0 {
		var locked []string
		for i, a := range pl.locked {
			locked = append(locked, fmt.Sprintf("(literal %s)", param("LOCKED", i, a)))
		}
		fmt.Fprintf(&b, "(deny file-write-unlink %s)\n", strings.Join(locked, " "))
	}
	// Unix sockets: none of the host's is reachable, whether the network
	// is on or off (services behind them act for their clients outside the
	// sandbox: container engines, SSH and GPG agents, tmux), except the
	// system's name resolver when the network is on.
	if pl.network {
		b.WriteString(seatbeltNetwork)
	}
	b.WriteString("(deny network-outbound (remote unix-socket))\n")
	if pl.network {
		b.WriteString("(allow network-outbound (remote unix-socket (path-literal \"/private/var/run/mDNSResponder\")))\n")
	}
	return b.String(), params
}

// seatbeltNetwork is what the network on allows: IP in and out, and the
// sockets to do it.
const seatbeltNetwork = `(allow network-outbound (remote ip "*:*"))
(allow network-inbound (local ip "*:*"))
(allow network-bind (local ip "*:*"))
(allow system-socket)
`
