//go:build !linux

package sandbox

// runInit is Linux's (the PID namespace's init).
func runInit(helperRequest, []string) error { return ErrUnavailable }
