//go:build !windows

package childenv

import (
	"os"
	"path/filepath"
)

// findIn returns dir/command if it is an executable regular file.
func findIn(dir, command string) (string, bool) {
	p := filepath.Join(dir, command)
	fi, err := os.Stat(p)
	return p, err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
