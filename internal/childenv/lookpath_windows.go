//go:build windows

package childenv

import (
	"os"
	"path/filepath"
	"strings"
)

// findIn returns dir\command, or dir\command plus a PATHEXT extension, if
// it is a regular file.
func findIn(dir, command string) (string, bool) {
	candidates := []string{command}
	if filepath.Ext(command) == "" {
		candidates = nil
		for _, ext := range pathExt() {
			candidates = append(candidates, command+ext)
		}
	}
	for _, c := range candidates {
		p := filepath.Join(dir, c)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}

// pathExt returns the extensions Windows runs without naming them.
func pathExt() []string {
	var exts []string
	for _, e := range strings.Split(os.Getenv("PATHEXT"), ";") {
		if e = strings.TrimSpace(e); e != "" {
			if e[0] != '.' {
				e = "." + e
			}
			exts = append(exts, strings.ToLower(e))
		}
	}
	if len(exts) == 0 {
		exts = []string{".com", ".exe", ".bat", ".cmd"}
	}
	return exts
}
