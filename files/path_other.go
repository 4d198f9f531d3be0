//go:build !windows

package files

import (
	"io/fs"
	"strings"
)

// cleanInput returns a tool path in the form Resolve compares (unchanged
// outside Windows).
func cleanInput(p string) (string, error) { return p, nil }

// diskName returns the name of the existing entry name in dir as the
// filesystem spells it (unchanged outside Windows: see Resolve).
func diskName(dir, name string) string { return name }

// reparseTarget is for Windows reparse points that are not symlinks
// (junctions); elsewhere there are none.
func reparseTarget(string, fs.FileInfo) (string, bool, error) { return "", false, nil }

// foldPrefix reports whether s starts with prefix, byte for byte outside
// Windows.
func foldPrefix(s, prefix string) bool { return strings.HasPrefix(s, prefix) }
