package config

import (
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// UserDir returns acpd's user configuration directory: $XDG_CONFIG_HOME/acpd
// on every platform when XDG_CONFIG_HOME is absolute; else on Windows
// %APPDATA%\acpd (or %USERPROFILE%\AppData\Roaming\acpd), elsewhere
// $HOME/.config/acpd (macOS too, as gh and git do). It returns "" when no
// variable is usable.
func UserDir(getenv func(string) string) string {
	return userDir(runtime.GOOS, getenv, "XDG_CONFIG_HOME", ".config", "APPDATA", "Roaming")
}

// DefaultStateDir returns acpd's default state directory:
// $XDG_STATE_HOME/acpd on every platform when XDG_STATE_HOME is absolute;
// else on Windows %LOCALAPPDATA%\acpd (or
// %USERPROFILE%\AppData\Local\acpd), elsewhere $HOME/.local/state/acpd.
// It returns "" when no variable is usable.
func DefaultStateDir(getenv func(string) string) string {
	return userDir(runtime.GOOS, getenv, "XDG_STATE_HOME", ".local/state", "LOCALAPPDATA", "Local")
}

// OutputsDir returns the directory under which acpd's sessions keep the
// whole outputs of their commands, each session in a private directory of
// its own: $XDG_CACHE_HOME/acpd/outputs when XDG_CACHE_HOME is absolute,
// else $HOME/.cache/acpd/outputs; "" on Windows (the temp directory is
// used) and when no variable is usable. Sandboxed commands cannot read it
// (it is hidden like acpd's configuration and state).
func OutputsDir(getenv func(string) string) string {
	if runtime.GOOS == "windows" {
		return ""
	}
	d := userDir(runtime.GOOS, getenv, "XDG_CACHE_HOME", ".cache", "", "")
	if d == "" {
		return ""
	}
	return path.Join(d, "outputs")
}

// userDir implements UserDir and DefaultStateDir for goos. Relative values
// are ignored, as the XDG base directory specification requires.
func userDir(goos string, getenv func(string) string, xdgVar, homeRel, winVar, winAppData string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	// The rules are those of goos whatever acpd runs on (they are tested
	// for every platform on any): Unix paths are slash-separated.
	abs, join := func(p string) bool { return strings.HasPrefix(p, "/") }, path.Join
	if goos == "windows" {
		abs = func(p string) bool { return filepath.IsAbs(p) || windowsAbs(p) }
		join = filepath.Join
	}
	if d := getenv(xdgVar); abs(d) {
		return join(d, "acpd")
	}
	if goos == "windows" {
		if d := getenv(winVar); abs(d) {
			return filepath.Join(d, "acpd")
		}
		if d := getenv("USERPROFILE"); abs(d) {
			return filepath.Join(d, "AppData", winAppData, "acpd")
		}
		return ""
	}
	if h := getenv("HOME"); abs(h) {
		return join(h, homeRel, "acpd")
	}
	return ""
}

// windowsAbs reports whether p is an absolute Windows path (C:\x, C:/x,
// \\server\share), whatever the platform acpd runs on.
func windowsAbs(p string) bool {
	if len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') {
		c := p[0] | 0x20
		return 'a' <= c && c <= 'z'
	}
	return len(p) >= 3 && (p[0] == '\\' || p[0] == '/') && (p[1] == '\\' || p[1] == '/') && p[2] != '\\' && p[2] != '/'
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
