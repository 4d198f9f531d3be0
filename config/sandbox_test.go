package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"acpd/sandbox"
)

// The session's command policy takes the configured sandbox, defaults to
// workspace-write, and hides the user file unless it lives in a .acpd
// directory, without touching the caller's hidden list.
func TestSandboxPolicy(t *testing.T) {
	hidden := []string{"/state"}
	c := &Config{Sandbox: SandboxConfig{Network: true, Writable: []string{"/w"}}, Files: []string{filepath.Join("/home", "u", "acpd.toml")}}
	p := c.SandboxPolicy([]string{"/r"}, hidden)
	want := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Roots: []string{"/r"}, Writable: []string{"/w"}, TempDir: os.TempDir(), Network: true, Hidden: []string{"/state", c.Files[0]}}
	if p.Mode != want.Mode || !slices.Equal(p.Roots, want.Roots) || !slices.Equal(p.Writable, want.Writable) || p.TempDir != want.TempDir || !p.Network || !slices.Equal(p.Hidden, want.Hidden) {
		t.Errorf("policy %+v, want %+v", p, want)
	}
	if len(hidden) != 1 {
		t.Errorf("hidden changed: %v", hidden)
	}
	// The user's git configuration stays read-only (a root at the home
	// folder could plant a core.fsmonitor there).
	if !slices.Equal(p.ReadOnly, sandbox.UserGitConfig()) || len(p.ReadOnly) == 0 {
		t.Errorf("read-only %q, want the user's git configuration", p.ReadOnly)
	}
	c = &Config{Sandbox: SandboxConfig{Mode: "read-only"}, Files: []string{filepath.Join("/p", ".acpd", "config.toml")}}
	if p := c.SandboxPolicy(nil, hidden); p.Mode != sandbox.ReadOnly || p.Network || !slices.Equal(p.Hidden, hidden) {
		t.Errorf("policy %+v", p)
	}
}

// A session's children lose the providers' key variables, whatever their
// names, unless [env] allow names them.
func TestChildEnv(t *testing.T) {
	base := []string{"PATH=/bin", "CORP_LLM=k1", "OTHER_KEY_VAR=k2"}
	c := &Config{Providers: map[string]Provider{"a": {APIKeyEnv: "CORP_LLM"}, "b": {APIKeyEnv: "OTHER_KEY_VAR"}}, Env: EnvConfig{Allow: []string{"OTHER_*"}}}
	if got := c.ChildEnv(base); !slices.Equal(got, []string{"PATH=/bin", "OTHER_KEY_VAR=k2"}) {
		t.Errorf("ChildEnv = %v", got)
	}
	if len(base) != 3 {
		t.Errorf("base changed: %v", base)
	}
	if got := (&Config{}).ChildEnv(nil); len(got) == 0 && len(os.Environ()) > 0 {
		t.Errorf("nil base gave no environment")
	}
}
