//go:build windows

package main

// platformNotes is what acpd doctor says about this platform: what it uses,
// then what acpd cannot do here (one "note" line each).
func platformNotes() (uses string, limits []string) {
	return "terminals on ConPTY pseudo consoles, command trees in job objects, LockFileEx locks, atomic replacement by rename (POSIX semantics where the volume has them)",
		[]string{
			"a command's standard input is the console, not end of file: a command that reads it waits until its timeout",
			"a stopped command's tree is killed at once: Windows has no SIGTERM to let it clean up",
			"no Unix file modes: acpd's files are private through the per-user ACLs of %APPDATA% and %LOCALAPPDATA% (or the XDG_* folders)",
			"a file another program holds open without delete sharing (some editors, virus scanners, indexers) cannot be replaced: a write retries for 2 s, then fails and keeps the old content",
		}
}

// homeVariable names the variable the default locations derive from.
func homeVariable() string { return "APPDATA (or USERPROFILE)" }
