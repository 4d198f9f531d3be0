//go:build windows

package main

// platformNotes is what acpd doctor says about this platform.
const platformNotes = "terminals on ConPTY pseudo consoles (a command's standard input is the console, not end of file), command trees stopped through job objects, LockFileEx locks, no OS sandbox"

// homeVariable names the variable the default locations derive from.
func homeVariable() string { return "APPDATA (or USERPROFILE)" }
