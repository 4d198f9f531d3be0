//go:build unix

package main

// platformNotes is what acpd doctor says about this platform.
const platformNotes = "terminals on PTYs, commands stopped by process group, flock locks"

// homeVariable names the variable the default locations derive from.
func homeVariable() string { return "HOME" }
