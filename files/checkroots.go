package files

import (
	"fmt"
	"os"
	"path/filepath"
)

// CheckRoots checks the directories an editor names for a session, its
// working directory cwd and its additional directories: absolute paths of
// existing directories. The error says which one is wrong and why, in
// words for the editor to show.
func CheckRoots(cwd string, additional []string) error {
	if cwd == "" || !filepath.IsAbs(cwd) {
		return fmt.Errorf("cwd must be an absolute path, got %q", cwd)
	}
	for _, d := range additional {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("additionalDirectories entries must be absolute paths, got %q", d)
		}
	}
	for i, d := range append([]string{cwd}, additional...) {
		what := "cwd"
		if i > 0 {
			what = "additionalDirectories entry"
		}
		if st, err := os.Stat(d); err != nil {
			return fmt.Errorf("%s %q is not an existing directory", what, d)
		} else if !st.IsDir() {
			return fmt.Errorf("%s %q is not a directory", what, d)
		}
	}
	return nil
}
