//go:build !linux

package main

// hardenProcess has nothing to do here: macOS has no /proc, and a
// sandboxed command's Seatbelt profile limits process inspection to its own
// sandbox.
func hardenProcess() error { return nil }
