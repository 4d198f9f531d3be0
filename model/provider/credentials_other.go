//go:build !unix

package provider

import (
	"os"
	"time"
)

// lockFile is a no-op where flock(2) is unavailable: concurrent `acpd
// login` processes may then lose one of two simultaneous updates.
func lockFile(string, time.Duration) (func(), error) { return func() {}, nil }

// checkPrivate accepts every file where modes and owners are not unix ones.
func checkPrivate(os.FileInfo) error { return nil }
