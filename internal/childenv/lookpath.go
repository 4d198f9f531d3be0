package childenv

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// LookPath finds the executable command in the absolute directories of
// pathList (a child's PATH, not necessarily acpd's). Relative entries,
// including "" and ".", are skipped so that a project's own directory can
// never shadow a command. A command containing a path separator is returned
// unchanged (it is relative to the child's working directory). On Windows a
// command without an extension is also tried with each extension of
// PATHEXT (default .COM;.EXE;.BAT;.CMD), and executability is not checked
// beyond being a regular file. The error wraps [exec.ErrNotFound].
func LookPath(command, pathList string) (string, error) {
	if strings.ContainsRune(command, '/') || strings.ContainsRune(command, filepath.Separator) {
		return command, nil
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if p, ok := findIn(dir, command); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q: %w", command, exec.ErrNotFound)
}
