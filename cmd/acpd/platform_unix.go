//go:build unix

package main

import "runtime"

// platformNotes is what acpd doctor says about this platform: what it uses,
// then what acpd cannot do here (one "note" line each).
func platformNotes() (uses string, limits []string) {
	uses = "terminals on PTYs, commands stopped by process group, flock locks, atomic replacement by rename"
	if runtime.GOOS == "darwin" {
		limits = []string{
			"macOS builds are compiled and vetted, but acpd's tests have never run on a Mac",
			"volumes are often case-insensitive: another spelling of a path under a workspace root counts as outside it, which asks",
		}
	}
	return uses, limits
}

// homeVariable names the variable the default locations derive from.
func homeVariable() string { return "HOME" }
