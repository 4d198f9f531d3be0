package permissions

import (
	"os"
	"path/filepath"
)

// ProjectKey returns the key remembered choices are filed under for a
// working directory: the nearest directory at or above cwd that contains a
// .git entry (a directory, or the file of a worktree or submodule), else cwd
// itself. The result is absolute and cleaned; symbolic links are not
// resolved, so the same project reached through two different paths gets
// two keys (choices are never shared wider than intended).
func ProjectKey(cwd string) string {
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return filepath.Clean(cwd)
	}
	for dir := abs; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		dir = parent
	}
}
