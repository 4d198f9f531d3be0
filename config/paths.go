package config

import (
	"os"
	"path/filepath"
)

// UserDir returns acpd's user configuration directory,
// $XDG_CONFIG_HOME/acpd, or $HOME/.config/acpd when XDG_CONFIG_HOME is unset
// or not absolute. It returns "" when neither variable is usable.
func UserDir(getenv func(string) string) string {
	return xdgDir(getenv, "XDG_CONFIG_HOME", ".config")
}

// DefaultStateDir returns acpd's default state directory,
// $XDG_STATE_HOME/acpd, or $HOME/.local/state/acpd when XDG_STATE_HOME is
// unset or not absolute. It returns "" when neither variable is usable.
func DefaultStateDir(getenv func(string) string) string {
	return xdgDir(getenv, "XDG_STATE_HOME", filepath.Join(".local", "state"))
}

// xdgDir implements the XDG base directory lookup: relative values are
// ignored, as the specification requires.
func xdgDir(getenv func(string) string, xdgVar, homeRel string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv(xdgVar); filepath.IsAbs(d) {
		return filepath.Join(d, "acpd")
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, homeRel, "acpd")
	}
	return ""
}

// ProjectRoot returns the root of the git work tree containing cwd (the
// nearest ancestor, cwd included, that holds a .git directory or file), or
// filepath.Clean(cwd) when there is none.
func ProjectRoot(cwd string) string {
	cwd = filepath.Clean(cwd)
	for dir := cwd; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return cwd
		}
		dir = parent
	}
}
