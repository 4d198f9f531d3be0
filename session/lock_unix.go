//go:build !windows

package session

// unlinkOpen is whether a file can be unlinked while open.
const unlinkOpen = true

// inUse reports whether a removal failed because another process has the
// file open; never where open files can be unlinked.
func inUse(error) bool { return false }
