package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestUserDirsPerPlatform checks the location rules of every platform,
// whatever this one is.
func TestUserDirsPerPlatform(t *testing.T) {
	j := filepath.Join
	for _, tc := range []struct {
		goos               string
		env                env
		wantUser, wantStat string
	}{
		// XDG_* wins everywhere.
		{"linux", env{"XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s", "HOME": "/h"}, "/c/acpd", "/s/acpd"},
		{"darwin", env{"XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s", "HOME": "/Users/u"}, "/c/acpd", "/s/acpd"},
		{"windows", env{"XDG_CONFIG_HOME": `D:\xdg\config`, "XDG_STATE_HOME": `D:\xdg\state`, "APPDATA": `C:\Users\u\AppData\Roaming`}, j(`D:\xdg\config`, "acpd"), j(`D:\xdg\state`, "acpd")},
		// macOS uses the same folders as Linux (as gh and git do).
		{"darwin", env{"HOME": "/Users/u"}, "/Users/u/.config/acpd", "/Users/u/.local/state/acpd"},
		// Windows: %APPDATA% and %LOCALAPPDATA%, then the profile; HOME
		// (set by Git's shells) is not used.
		{"windows", env{"APPDATA": `C:\Users\u\AppData\Roaming`, "LOCALAPPDATA": `C:\Users\u\AppData\Local`, "HOME": "/h"}, j(`C:\Users\u\AppData\Roaming`, "acpd"), j(`C:\Users\u\AppData\Local`, "acpd")},
		{"windows", env{"USERPROFILE": `C:\Users\u`}, j(`C:\Users\u`, "AppData", "Roaming", "acpd"), j(`C:\Users\u`, "AppData", "Local", "acpd")},
		{"windows", env{"APPDATA": `relative`, "XDG_CONFIG_HOME": "rel", "HOME": "/h"}, "", ""},
		{"windows", env{"LOCALAPPDATA": `\\server\share\u`}, "", j(`\\server\share\u`, "acpd")},
	} {
		if got := userDir(tc.goos, tc.env.get, "XDG_CONFIG_HOME", ".config", "APPDATA", "Roaming"); got != tc.wantUser {
			t.Errorf("%s user dir of %v = %q, want %q", tc.goos, tc.env, got, tc.wantUser)
		}
		if got := userDir(tc.goos, tc.env.get, "XDG_STATE_HOME", ".local/state", "LOCALAPPDATA", "Local"); got != tc.wantStat {
			t.Errorf("%s state dir of %v = %q, want %q", tc.goos, tc.env, got, tc.wantStat)
		}
	}
	for p, want := range map[string]bool{`C:\x`: true, `c:/x`: true, `\\srv\share`: true, `C:x`: false, `\x`: false, `\\\x`: false, `rel`: false, ``: false} {
		if windowsAbs(p) != want {
			t.Errorf("windowsAbs(%q) = %v", p, !want)
		}
	}
}

// TestDefaultStateDirFromEnvironment: the session store's default
// directory as acpd's own environment gives it (moved here from session,
// which no longer knows a default).
func TestDefaultStateDirFromEnvironment(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/xdg/state")
	if d := DefaultStateDir(os.Getenv); d != "/xdg/state/acpd" {
		t.Fatalf("XDG: %q", d)
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"", "relative/path"} {
		t.Setenv("XDG_STATE_HOME", v)
		if d := DefaultStateDir(os.Getenv); d != filepath.Join(home, ".local/state/acpd") {
			t.Fatalf("XDG_STATE_HOME=%q: %q", v, d)
		}
	}
}
