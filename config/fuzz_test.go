package config

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// FuzzLoadFile feeds arbitrary documents to the user and project file
// loaders: they must never panic, and a project file they accept must not
// have loosened anything.
func FuzzLoadFile(f *testing.F) {
	if data, err := os.ReadFile("example.toml"); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"model = \"a/b\"\n[agent]\ndefault_mode = \"plan\"\n",
		"permissions.rules = [{ action = \"deny\", tool = \"x\" }]\n",
		"[[permissions.rules]]\naction = \"ask\"\ntool = \"t\"\n[[permissions.rules]]\naction = \"allow\"\ntool = \"t\"\n",
		"[[a]]\n[[a.b]]\n[a.b.c]\n",
		"[providers.\"x.y\"]\ndialect = \"exec\"\ncommand = [\"p\"]\n[[providers.\"x.y\".models]]\nid = \"m\"\n",
		"LOG.file = \"x\"\n",
		"env = { allow = [\"A\"] }\n",
		"[log\n",
		"x = [[[[[[1]]]]]]\n",
		"[sandbox]\nmode = \"off\"\nnetwork = true\nwritable = [\"/a\", \"/c\"]\n",
	} {
		f.Add([]byte(s))
	}
	getenv := env{"HOME": "/home/u"}.get
	f.Fuzz(func(t *testing.T, data []byte) {
		u := defaults()
		if err := loadUser(&u, "/cfg/config.toml", data, getenv); err == nil {
			if (u.Model != "" && checkModelRef(u.Model) != nil) || !slices.Contains(logLevels, u.Log.Level) || !slices.Contains(modeNames(), u.Agent.DefaultMode) {
				t.Fatalf("user file accepted with invalid values: %+v", u)
			}
			for _, r := range u.Permissions.Rules {
				if !slices.Contains(actions, r.Action) {
					t.Fatalf("user file accepted rule %+v", r)
				}
			}
			if !slices.Contains(sandboxModes, u.Sandbox.Mode) || slices.ContainsFunc(u.Sandbox.Writable, func(w string) bool { return !filepath.IsAbs(w) }) {
				t.Fatalf("user file accepted sandbox %+v", u.Sandbox)
			}
		}

		base := defaults()
		base.Agent.DefaultMode = "full"
		base.Sandbox = SandboxConfig{Mode: "workspace-write", Writable: []string{"/a", "/b"}}
		p := base.clone()
		if err := loadProject(&p, "/proj/.acpd/config.toml", data); err != nil {
			if !reflect.DeepEqual(p, base) {
				t.Fatalf("failed project load changed the config: %+v", p)
			}
			return
		}
		if p.Log != base.Log || p.State != base.State || p.Protocol != base.Protocol ||
			!reflect.DeepEqual(p.Env, base.Env) || !reflect.DeepEqual(p.Providers, base.Providers) {
			t.Fatalf("project file changed a user-only setting: %+v", p)
		}
		if sandboxRank(p.Sandbox.Mode) > sandboxRank(base.Sandbox.Mode) || p.Sandbox.Network ||
			slices.ContainsFunc(p.Sandbox.Writable, func(w string) bool { return !slices.Contains(base.Sandbox.Writable, w) }) {
			t.Fatalf("project file loosened the sandbox: %+v", p.Sandbox)
		}
		if p.Agent.DefaultMode != "full" && !slices.Contains(projectModes, p.Agent.DefaultMode) {
			t.Fatalf("project file set mode %q", p.Agent.DefaultMode)
		}
		for _, r := range p.Permissions.Rules {
			if r.Action != "ask" && r.Action != "deny" {
				t.Fatalf("project file added rule %+v", r)
			}
		}
	})
}
