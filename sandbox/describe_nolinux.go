//go:build !linux

package sandbox

// backendDescription is what Describe adds for this platform's backend.
func backendDescription(Policy) string { return "" }
