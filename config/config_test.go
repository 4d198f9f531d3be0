package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// env is a fake environment for getenv.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// testEnv returns an environment whose HOME, XDG_CONFIG_HOME and
// XDG_STATE_HOME are fresh temporary directories.
func testEnv(t *testing.T) env {
	t.Helper()
	d := t.TempDir()
	return env{
		"HOME":            filepath.Join(d, "home"),
		"XDG_CONFIG_HOME": filepath.Join(d, "config"),
		"XDG_STATE_HOME":  filepath.Join(d, "state"),
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func userFile(t *testing.T, e env, content string) string {
	t.Helper()
	return writeFile(t, filepath.Join(e["XDG_CONFIG_HOME"], "acpd", "config.toml"), content)
}

// project creates a git work tree with the given project file content (none
// if content is "") and returns its root.
func project(t *testing.T, content string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if content != "" {
		writeFile(t, filepath.Join(root, ".acpd", "config.toml"), content)
	}
	return root
}

func mustLoader(t *testing.T, o Overrides, e env) *Loader {
	t.Helper()
	l, err := NewLoader(o, e.get)
	if err != nil {
		t.Fatalf("NewLoader: %v", err)
	}
	return l
}

// wantErr asserts that err is non-nil and matches every regexp.
func wantErr(t *testing.T, err error, res ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one matching %q", res)
	}
	for _, re := range res {
		if !regexp.MustCompile(re).MatchString(err.Error()) {
			t.Errorf("error %q does not match %q", err, re)
		}
	}
}

func TestDefaults(t *testing.T) {
	e := testEnv(t)
	l := mustLoader(t, Overrides{}, e)
	want := &Config{
		Log:      LogConfig{Level: "info"},
		State:    StateConfig{Dir: filepath.Join(e["XDG_STATE_HOME"], "acpd")},
		Protocol: ProtocolConfig{MaxLineBytes: 33554432},
		Agent:    AgentConfig{MaxTurnRequests: 100, DefaultMode: "ask"},
		Sandbox:  SandboxConfig{Mode: "workspace-write"},
	}
	if got := l.User(); !reflect.DeepEqual(got, want) {
		t.Errorf("User() = %+v, want %+v", got, want)
	}
	dir := project(t, "")
	got, err := l.ForProject(dir)
	if err != nil {
		t.Fatal(err)
	}
	want.Root = ProjectRoot(dir)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ForProject() = %+v, want %+v", got, want)
	}
}

func TestMissingFilesAreFine(t *testing.T) {
	e := testEnv(t)
	delete(e, "XDG_CONFIG_HOME")
	delete(e, "HOME")
	e["ACPD_STATE_DIR"] = osAbs("/var/lib/acpd")
	l := mustLoader(t, Overrides{}, e)
	c, err := l.ForProject(t.TempDir()) // no git, no .acpd
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Files) != 0 || c.State.Dir != osAbs("/var/lib/acpd") {
		t.Errorf("got Files %q, State.Dir %q", c.Files, c.State.Dir)
	}
}

func TestNoStateDir(t *testing.T) {
	_, err := NewLoader(Overrides{}, env{}.get)
	wantErr(t, err, "state directory")
}

func TestExplicitConfigFileMustExist(t *testing.T) {
	e := testEnv(t)
	missing := filepath.Join(t.TempDir(), "nope.toml")
	_, err := NewLoader(Overrides{ConfigFile: missing}, e.get)
	wantErr(t, err, regexp.QuoteMeta(missing))
	e["ACPD_CONFIG"] = missing
	_, err = NewLoader(Overrides{}, e.get)
	wantErr(t, err, regexp.QuoteMeta(missing))
}

func TestPrecedence(t *testing.T) {
	e := testEnv(t)
	uf := userFile(t, e, `
model = "p/user"
instructions = "user text"
[log]
file = "`+tomlPath("/logs/user.log")+`"
level = "error"
[state]
dir = "`+tomlPath("/state/user")+`"
[agent]
max_turn_requests = 7
default_mode = "auto-edit"
`)
	root := project(t, `
model = "p/project"
instructions = "project text"
[agent]
max_turn_requests = 3
default_mode = "plan"
`)
	type layers struct{ project, env, flags bool }
	for _, tc := range []struct {
		layers
		model, logFile, level, state string
	}{
		{layers{}, "p/user", "/logs/user.log", "error", "/state/user"},
		{layers{project: true}, "p/project", "/logs/user.log", "error", "/state/user"},
		{layers{project: true, env: true}, "p/env", "/logs/env.log", "warn", "/state/env"},
		{layers{env: true}, "p/env", "/logs/env.log", "warn", "/state/env"},
		{layers{project: true, env: true, flags: true}, "p/flag", "/logs/flag.log", "debug", "/state/flag"},
		{layers{flags: true}, "p/flag", "/logs/flag.log", "debug", "/state/flag"},
	} {
		tc.logFile, tc.state = osAbs(tc.logFile), osAbs(tc.state)
		e := copyEnv(e)
		var o Overrides
		if tc.env {
			e["ACPD_MODEL"], e["ACPD_LOG_FILE"], e["ACPD_LOG_LEVEL"], e["ACPD_STATE_DIR"] = "p/env", osAbs("/logs/env.log"), "warn", osAbs("/state/env")
		}
		if tc.flags {
			o = Overrides{Model: "p/flag", LogFile: osAbs("/logs/flag.log"), LogLevel: "debug", StateDir: osAbs("/state/flag")}
		}
		l := mustLoader(t, o, e)
		var c *Config
		if tc.project {
			var err error
			if c, err = l.ForProject(root); err != nil {
				t.Fatal(err)
			}
		} else {
			c = l.User()
		}
		got := []string{c.Model, c.Log.File, c.Log.Level, c.State.Dir}
		want := []string{tc.model, tc.logFile, tc.level, tc.state}
		if !slices.Equal(got, want) {
			t.Errorf("%+v: got %q, want %q", tc.layers, got, want)
		}
		wantFiles := []string{uf}
		wantAgent := AgentConfig{MaxTurnRequests: 7, DefaultMode: "auto-edit"}
		wantInstr := "user text"
		if tc.project {
			wantFiles = append(wantFiles, filepath.Join(root, ".acpd", "config.toml"))
			wantAgent = AgentConfig{MaxTurnRequests: 3, DefaultMode: "plan"}
			wantInstr = "user text\n\nproject text"
		}
		if !slices.Equal(c.Files, wantFiles) || c.Agent != wantAgent || c.Instructions != wantInstr {
			t.Errorf("%+v: got Files %q, Agent %+v, Instructions %q; want %q, %+v, %q",
				tc.layers, c.Files, c.Agent, c.Instructions, wantFiles, wantAgent, wantInstr)
		}
	}
}

func copyEnv(e env) env {
	d := env{}
	for k, v := range e {
		d[k] = v
	}
	return d
}

func TestConfigFileSelection(t *testing.T) {
	e := testEnv(t)
	userFile(t, e, `model = "p/default-location"`)
	envFile := writeFile(t, filepath.Join(t.TempDir(), "env.toml"), `model = "p/env-file"`)
	flagFile := writeFile(t, filepath.Join(t.TempDir(), "flag.toml"), `model = "p/flag-file"`)

	if got := mustLoader(t, Overrides{}, e).User().Model; got != "p/default-location" {
		t.Errorf("default location: model %q", got)
	}
	e["ACPD_CONFIG"] = envFile
	if c := mustLoader(t, Overrides{}, e).User(); c.Model != "p/env-file" || !slices.Equal(c.Files, []string{envFile}) {
		t.Errorf("ACPD_CONFIG: model %q, files %q", c.Model, c.Files)
	}
	if c := mustLoader(t, Overrides{ConfigFile: flagFile}, e).User(); c.Model != "p/flag-file" || !slices.Equal(c.Files, []string{flagFile}) {
		t.Errorf("--config: model %q, files %q", c.Model, c.Files)
	}
	delete(e, "XDG_CONFIG_HOME")
	delete(e, "ACPD_CONFIG")
	// Without XDG_CONFIG_HOME: ~/.config/acpd, or %APPDATA%\acpd on Windows.
	fallback := filepath.Join(e["HOME"], ".config", "acpd", "config.toml")
	if runtime.GOOS == "windows" {
		e["APPDATA"] = filepath.Join(e["HOME"], "AppData", "Roaming")
		fallback = filepath.Join(e["APPDATA"], "acpd", "config.toml")
	}
	writeFile(t, fallback, `model = "p/home"`)
	if got := mustLoader(t, Overrides{}, e).User().Model; got != "p/home" {
		t.Errorf("HOME fallback: model %q", got)
	}
}

func TestEnvValidation(t *testing.T) {
	for _, tc := range []struct {
		env  env
		o    Overrides
		want string
	}{
		{env: env{"ACPD_MODEL": "no-slash"}, want: `^ACPD_MODEL: .*want provider/model`},
		{env: env{"ACPD_LOG_LEVEL": "loud"}, want: `^ACPD_LOG_LEVEL: invalid log level "loud"`},
		{o: Overrides{Model: "/x"}, want: `^--model: `},
		{o: Overrides{LogLevel: "trace"}, want: `^--log-level: invalid log level "trace"`},
		{env: env{"ACPD_STATE_DIR": "~/state", "HOME": ""}, want: `^ACPD_STATE_DIR: .*HOME is not set`},
	} {
		e := testEnv(t)
		for k, v := range tc.env {
			e[k] = v
		}
		_, err := NewLoader(tc.o, e.get)
		wantErr(t, err, tc.want)
	}
}

func TestEnvPathsAreAbsolute(t *testing.T) {
	e := testEnv(t)
	e["ACPD_STATE_DIR"] = "~/st"
	e["ACPD_LOG_FILE"] = "rel.log"
	c := mustLoader(t, Overrides{}, e).User()
	wd, _ := os.Getwd()
	if c.State.Dir != filepath.Join(e["HOME"], "st") || c.Log.File != filepath.Join(wd, "rel.log") {
		t.Errorf("State.Dir %q, Log.File %q", c.State.Dir, c.Log.File)
	}
}

func TestUserFileRelativePaths(t *testing.T) {
	e := testEnv(t)
	uf := userFile(t, e, "[log]\nfile = \"logs/acpd.log\"\n[state]\ndir = \"~/state\"\n")
	c := mustLoader(t, Overrides{}, e).User()
	if want := filepath.Join(filepath.Dir(uf), "logs", "acpd.log"); c.Log.File != want {
		t.Errorf("Log.File = %q, want %q", c.Log.File, want)
	}
	if want := filepath.Join(e["HOME"], "state"); c.State.Dir != want {
		t.Errorf("State.Dir = %q, want %q", c.State.Dir, want)
	}
}

func TestUnknownKeyNamesFileAndLine(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want []string
	}{
		{"model = \"a/b\"\n\n[agent]\nmax_turns = 3\n", []string{`:4:1: unknown key agent\.max_turns$`}},
		{"[log]\nlevel = \"info\"\ncolour = true\n[[providers.x.models]]\nid = \"m\"\nprice = 1\n",
			[]string{`:3:1: unknown key log\.colour`, `:6:1: unknown key providers\.x\.models\[0\]\.price`}},
		{"permissions = { rules = [ { action = \"deny\", tool = \"t\", tols = 1 } ] }\n",
			[]string{`:1:58: unknown key permissions\.rules\[0\]\.tols`}},
		{"Files = [\"x\"]\n", []string{`:1:1: unknown key Files`}},
		{"MODEL = \"a/b\"\n", []string{`:1:1: unknown key MODEL \(did you mean "model"\?\)`}},
		{"[agent]\nDefault_Mode = \"full\"\n", []string{`:2:1: unknown key agent\.Default_Mode`}},
	} {
		e := testEnv(t)
		uf := userFile(t, e, tc.doc)
		_, err := NewLoader(Overrides{}, e.get)
		res := []string{"^" + regexp.QuoteMeta(uf) + ":"}
		for _, w := range tc.want {
			res = append(res, "(?m)"+regexp.QuoteMeta(uf)+w)
		}
		wantErr(t, err, res...)
	}
}

func TestTypeErrorNamesFileAndLine(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"\n[agent]\nmax_turn_requests = \"many\"\n", `:3:21: agent\.max_turn_requests: want an integer, got a TOML string$`},
		{"model = 42\n", `:1:9: model: want a string, got a TOML integer$`},
		{"[env]\nallow = \"X\"\n", `:2:9: env\.allow: want an array of strings, got a TOML string$`},
		{"[[providers.p.models]]\nid = \"m\"\nimages = \"yes\"\n", `:3:10: .*images: want a boolean, got a TOML string$`},
		{"model = \"a/b\"\nmodel = \"c/d\"\n", `:2:1: .*already defined`},
		{"[log\nlevel = 1\n", `:1:5: `},
	} {
		e := testEnv(t)
		uf := userFile(t, e, tc.doc)
		_, err := NewLoader(Overrides{}, e.get)
		wantErr(t, err, "^"+regexp.QuoteMeta(uf)+tc.want)
	}
}

func TestValidationNamesFileAndLine(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"\nmodel = \"sonnet\"\n", `:2:1: model: model "sonnet": want provider/model`},
		{"[log]\nlevel = \"verbose\"\n", `:2:1: invalid log\.level "verbose"`},
		{"[agent]\ndefault_mode = \"yolo\"\n", `:2:1: invalid agent\.default_mode "yolo"`},
		{"[agent]\nmax_turn_requests = 0\n", `:2:1: agent\.max_turn_requests must be at least 1`},
		{"[protocol]\nmax_line_bytes = 10\n", `:2:1: protocol\.max_line_bytes must be at least`},
		{"[env]\nallow = [\"OK\",\n  \"[\"]\n", `:3:3: env\.allow\[1\]: invalid pattern`},
		{"[[permissions.rules]]\naction = \"permit\"\ntool = \"x\"\n", `:2:1: invalid permissions\.rules\[0\]\.action "permit"`},
		{"[[permissions.rules]]\naction = \"deny\"\n", `:1:3: permissions\.rules\[0\]: tool is required`},
		{"[providers.p]\nbase_url = \"https://x\"\n", `:1:2: providers\.p: dialect is required`},
		{"[providers.p]\ndialect = \"soap\"\n", `:2:1: invalid providers\.p\.dialect "soap"`},
		{"[providers.\"a/b\"]\ndialect = \"openai\"\n", `:1:2: .*invalid provider name "a/b"`},
		{"[providers.p]\ndialect = \"exec\"\n", `:1:2: providers\.p: the exec dialect requires command`},
		{"[providers.p]\ndialect = \"exec\"\ncommand = [\"x\"]\nbase_url = \"http://h\"\n", `:4:1: providers\.p\.base_url is not used by the exec dialect`},
		{"[providers.p]\ndialect = \"openai\"\ncommand = [\"x\"]\n", `:3:1: providers\.p\.command is only used by the exec dialect`},
		{"[providers.p]\ndialect = \"openai\"\nbase_url = \"ftp://h\"\n", `:3:1: providers\.p\.base_url: "ftp://h": want an http`},
		{"[providers.p]\ndialect = \"openai\"\nbase_url = \"https://u:pw@h\"\n", `:3:1: .*credentials`},
		{"[providers.p]\ndialect = \"openai\"\napi_key_env = \"MY KEY\"\n", `:3:1: .*not an environment variable name`},
		{"[providers.p]\ndialect = \"openai\"\nheaders = { \"Bad Header\" = \"v\" }\n", `:3:13: .*invalid HTTP header name`},
		{"[providers.p]\ndialect = \"openai\"\n[[providers.p.models]]\nid = \"m\"\n[[providers.p.models]]\nid = \"m\"\n", `:6:1: providers\.p\.models\[1\]\.id: model "m" is already defined`},
		{"[providers.p]\ndialect = \"openai\"\n[[providers.p.models]]\nid = \"m\"\ninput_price = nan\n", `:5:1: .*input_price must be a finite number`},
		{"[providers.p]\ndialect = \"openai\"\n[[providers.p.models]]\ncontext_window = 5\n", `:3:3: providers\.p\.models\[0\]: id is required`},
	} {
		e := testEnv(t)
		uf := userFile(t, e, tc.doc)
		_, err := NewLoader(Overrides{}, e.get)
		wantErr(t, err, "(?m)^"+regexp.QuoteMeta(uf)+tc.want)
	}
}

func TestProjectFileRestrictions(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"model = \"a/b\"\n[[permissions.rules]]\naction = \"allow\"\ntool = \"run_command\"\n",
			`:3:1: not allowed in a project file: permissions\.rules\[0\]\.action = "allow"`},
		{"permissions.rules = [{ action = \"deny\", tool = \"x\" }, { action = \"allow\", tool = \"y\" }]\n",
			`:1:57: not allowed in a project file: permissions\.rules\[1\]\.action`},
		{"[agent]\ndefault_mode = \"full\"\n", `:2:1: not allowed in a project file: agent\.default_mode = "full"`},
		{"[agent]\ndefault_mode = \"auto-edit\"\n", `:2:1: not allowed in a project file: agent\.default_mode = "auto-edit"`},
		{"model = \"a/b\"\n\n[env]\nallow = [\"AWS_*\"]\n", `:3:2: not allowed in a project file: env `},
		{"env.allow = []\n", `:1:1: not allowed in a project file: env `},
		{"[providers.evil]\ndialect = \"openai\"\nbase_url = \"https://evil.example\"\n", `:1:2: not allowed in a project file: providers `},
		{"[[providers.evil.models]]\nid = \"x\"\n", `:1:3: not allowed in a project file: providers `},
		{"[state]\ndir = \"/tmp/x\"\n", `:1:2: not allowed in a project file: state `},
		{"instructions = \"x\"\n[log]\nfile = \"/tmp/leak.log\"\n", `:2:2: not allowed in a project file: log `},
		{"[log]\n", `:1:2: not allowed in a project file: log `},
		{"[protocol]\nmax_line_bytes = 4096\n", `:1:2: not allowed in a project file: protocol `},
		{"[LOG]\nfile = \"/tmp/leak.log\"\n", `:1:2: unknown key LOG`},
		{"[[permissions.rules]]\naction = \"Allow\"\ntool = \"x\"\n", `:2:1: invalid permissions\.rules\[0\]\.action "Allow"`},
	} {
		e := testEnv(t)
		root := project(t, tc.doc)
		l := mustLoader(t, Overrides{}, e)
		_, err := l.ForProject(filepath.Join(root))
		pf := filepath.Join(root, ".acpd", "config.toml")
		wantErr(t, err, "(?m)^"+regexp.QuoteMeta(pf)+tc.want)
	}
}

func TestProjectFileMerges(t *testing.T) {
	e := testEnv(t)
	userFile(t, e, `
instructions = "user"
[[permissions.rules]]
action = "allow"
tool = "run_command"
match = "go test *"
[agent]
default_mode = "full"
[env]
allow = ["GOFLAGS"]
`)
	root := project(t, `
model = "p/m"
instructions = "project"
[agent]
max_turn_requests = 5
default_mode = "ask"
[[permissions.rules]]
action = "deny"
tool = "run_command"
match = "rm *"
[[permissions.rules]]
action = "ask"
tool = "write_file"
`)
	l := mustLoader(t, Overrides{}, e)
	c, err := l.ForProject(root)
	if err != nil {
		t.Fatal(err)
	}
	wantRules := []Rule{
		{"allow", "run_command", "go test *"},
		{"deny", "run_command", "rm *"},
		{"ask", "write_file", ""},
	}
	if !reflect.DeepEqual(c.Permissions.Rules, wantRules) {
		t.Errorf("rules = %+v, want %+v", c.Permissions.Rules, wantRules)
	}
	if c.Model != "p/m" || c.Instructions != "user\n\nproject" || c.Agent != (AgentConfig{MaxTurnRequests: 5, DefaultMode: "ask"}) ||
		!slices.Equal(c.Env.Allow, []string{"GOFLAGS"}) {
		t.Errorf("got %+v", c)
	}
	// The project file does not leak into User() or other projects.
	if u := l.User(); len(u.Permissions.Rules) != 1 || u.Model != "" || u.Agent.DefaultMode != "full" {
		t.Errorf("User() = %+v", u)
	}
	other, err := l.ForProject(project(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(other.Permissions.Rules) != 1 || other.Instructions != "user" {
		t.Errorf("other project = %+v", other)
	}
}

func TestProjectFileInSubdirectory(t *testing.T) {
	e := testEnv(t)
	root := project(t, `model = "p/root"`)
	sub := filepath.Join(root, "a", "b")
	writeFile(t, filepath.Join(root, "a", ".acpd", "config.toml"), `model = "p/ignored"`)
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := mustLoader(t, Overrides{}, e).ForProject(sub)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "p/root" {
		t.Errorf("model %q, want the git root's", c.Model)
	}
	// Without git, the working directory's own file is used.
	plain := t.TempDir()
	writeFile(t, filepath.Join(plain, ".acpd", "config.toml"), `model = "p/plain"`)
	c, err = mustLoader(t, Overrides{}, e).ForProject(plain)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "p/plain" {
		t.Errorf("model %q, want the cwd's", c.Model)
	}
	if _, err := mustLoader(t, Overrides{}, e).ForProject("relative/dir"); err == nil {
		t.Error("ForProject(relative) succeeded")
	}
}

func TestUserFileInsideProjectIsNotRestricted(t *testing.T) {
	e := testEnv(t)
	root := project(t, "[log]\nlevel = \"debug\"\n")
	pf := filepath.Join(root, ".acpd", "config.toml")
	l := mustLoader(t, Overrides{ConfigFile: pf}, e)
	c, err := l.ForProject(root)
	if err != nil {
		t.Fatal(err)
	}
	if c.Log.Level != "debug" || !slices.Equal(c.Files, []string{pf}) {
		t.Errorf("got level %q, files %q", c.Log.Level, c.Files)
	}
}

func TestProjectFileUnreadable(t *testing.T) {
	e := testEnv(t)
	root := project(t, "")
	if err := os.MkdirAll(filepath.Join(root, ".acpd", "config.toml"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := mustLoader(t, Overrides{}, e).ForProject(root)
	wantErr(t, err, "not a regular file")
}

func TestFileTooLarge(t *testing.T) {
	e := testEnv(t)
	userFile(t, e, "# "+strings.Repeat("x", maxFileBytes)+"\n")
	_, err := NewLoader(Overrides{}, e.get)
	wantErr(t, err, "larger than")
}

func TestProjectRoot(t *testing.T) {
	root := project(t, "")
	sub := filepath.Join(root, "x", "y")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := ProjectRoot(sub + "/"); got != root {
		t.Errorf("ProjectRoot(sub) = %q, want %q", got, root)
	}
	// A .git file (worktrees, submodules) marks a root too.
	wt := filepath.Join(root, "wt")
	writeFile(t, filepath.Join(wt, ".git"), "gitdir: ../.git/worktrees/wt\n")
	if got := ProjectRoot(filepath.Join(wt)); got != wt {
		t.Errorf("ProjectRoot(worktree) = %q, want %q", got, wt)
	}
	plain := t.TempDir()
	if got := ProjectRoot(plain); got != plain {
		t.Errorf("ProjectRoot(no git) = %q, want %q", got, plain)
	}
}

func TestXDGDirs(t *testing.T) {
	for _, tc := range []struct {
		env                env
		wantUser, wantStat string
	}{
		{env{"XDG_CONFIG_HOME": "/c", "XDG_STATE_HOME": "/s", "HOME": "/h"}, "/c/acpd", "/s/acpd"},
		{env{"HOME": "/h"}, "/h/.config/acpd", "/h/.local/state/acpd"},
		{env{"XDG_CONFIG_HOME": "rel", "XDG_STATE_HOME": "rel", "HOME": "/h"}, "/h/.config/acpd", "/h/.local/state/acpd"},
		{env{}, "", ""},
	} {
		if got := UserDir(tc.env.get); got != tc.wantUser {
			t.Errorf("UserDir(%v) = %q, want %q", tc.env, got, tc.wantUser)
		}
		if got := DefaultStateDir(tc.env.get); got != tc.wantStat {
			t.Errorf("DefaultStateDir(%v) = %q, want %q", tc.env, got, tc.wantStat)
		}
	}
}

func TestToolsDefaultsToTrue(t *testing.T) {
	e := testEnv(t)
	userFile(t, e, `
[providers.p]
dialect = "anthropic"
models = [{ id = "a" }, { id = "b", tools = false }]
[[providers.q.models]]
id = "c"
[providers.q]
dialect = "gemini"
`)
	c := mustLoader(t, Overrides{}, e).User()
	got := []bool{c.Providers["p"].Models[0].Tools, c.Providers["p"].Models[1].Tools, c.Providers["q"].Models[0].Tools}
	if !slices.Equal(got, []bool{true, false, true}) {
		t.Errorf("Tools = %v, want [true false true]", got)
	}
}

func TestResultsAreIndependentCopies(t *testing.T) {
	e := testEnv(t)
	userFile(t, e, "[env]\nallow = [\"A\"]\n[providers.p]\ndialect = \"openai\"\nheaders = { X = \"1\" }\n[[providers.p.models]]\nid = \"m\"\n")
	l := mustLoader(t, Overrides{}, e)
	c := l.User()
	c.Env.Allow[0] = "changed"
	c.Providers["p"].Headers["X"] = "changed"
	c.Providers["p"].Models[0].ID = "changed"
	c.Files[0] = "changed"
	d, err := l.ForProject(project(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*Config{l.User(), d} {
		if c.Env.Allow[0] != "A" || c.Providers["p"].Headers["X"] != "1" || c.Providers["p"].Models[0].ID != "m" || c.Files[0] == "changed" {
			t.Errorf("mutation leaked: %+v", c)
		}
	}
}

func TestExampleParses(t *testing.T) {
	e := testEnv(t)
	abs, err := filepath.Abs("example.toml")
	if err != nil {
		t.Fatal(err)
	}
	c := mustLoader(t, Overrides{ConfigFile: abs}, e).User()
	if c.Model != "anthropic/claude-sonnet-4-5" || len(c.Permissions.Rules) != 2 || len(c.Providers) != 2 ||
		c.Providers["local"].Models[0].ID != "qwen3-coder" || !c.Providers["local"].Models[0].Tools {
		t.Errorf("example parsed to %+v", c)
	}
}

// TestExampleDocumentsEveryKey checks that example.toml sets every key of
// the schema, so that adding a key without documenting it fails.
func TestExampleDocumentsEveryKey(t *testing.T) {
	data, err := os.ReadFile("example.toml")
	if err != nil {
		t.Fatal(err)
	}
	idx, err := buildIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, en := range idx.entries {
		var parts []string
		for i, s := range en.path {
			switch {
			case s.idx >= 0:
				parts = append(parts, "[]")
			case i == 1 && (en.path[0].key == "providers" || en.path[0].key == "mcp_servers" || en.path[0].key == "hooks"):
				parts = append(parts, "*")
			default:
				parts = append(parts, s.key)
			}
		}
		documented[strings.Join(parts, ".")] = true
	}
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		switch typ.Kind() {
		case reflect.Struct:
			for i := range typ.NumField() {
				f := typ.Field(i)
				if name := tagName(f); name != "-" {
					walk(strings.TrimPrefix(prefix+"."+name, "."), f.Type)
				}
			}
		case reflect.Map:
			if typ.Elem().Kind() == reflect.Struct {
				walk(prefix+".*", typ.Elem())
				return
			}
			if typ.Elem().Kind() == reflect.Slice && typ.Elem().Elem().Kind() == reflect.Struct {
				walk(prefix+".*.[]", typ.Elem().Elem())
				return
			}
			fallthrough
		default:
			if !documented[prefix] {
				t.Errorf("example.toml does not document %s", prefix)
			}
		case reflect.Slice:
			if typ.Elem().Kind() == reflect.Struct {
				walk(prefix+".[]", typ.Elem())
				return
			}
			if !documented[prefix] {
				t.Errorf("example.toml does not document %s", prefix)
			}
		}
	}
	walk("", reflect.TypeFor[Config]())
}

func TestErrorCountIsBounded(t *testing.T) {
	e := testEnv(t)
	userFile(t, e, "[env]\nallow = ["+strings.Repeat(`"[", `, 100)+"]\n")
	_, err := NewLoader(Overrides{}, e.get)
	wantErr(t, err, `\.\.\. and 80 more errors$`)
	if n := strings.Count(err.Error(), "invalid pattern"); n != maxErrors {
		t.Errorf("%d errors reported, want %d", n, maxErrors)
	}
}

func TestSandboxProjectOnlyTightens(t *testing.T) {
	e := testEnv(t)
	userFile(t, e, `
[sandbox]
mode = "workspace-write"
network = true
writable = ["`+tomlPath("/a")+`", "`+tomlPath("/b")+`"]
`)
	l := mustLoader(t, Overrides{}, e)
	if u := l.User(); u.Sandbox.Mode != "workspace-write" || !u.Sandbox.Network || !slices.Equal(u.Sandbox.Writable, []string{osAbs("/a"), osAbs("/b")}) {
		t.Fatalf("user sandbox %+v", u.Sandbox)
	}
	c, err := l.ForProject(project(t, `
[sandbox]
mode = "read-only"
network = false
writable = ["`+tomlPath("/b")+`", "`+tomlPath("/c")+`"]
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Sandbox.Mode != "read-only" || c.Sandbox.Network || !slices.Equal(c.Sandbox.Writable, []string{osAbs("/b")}) {
		t.Errorf("tightened sandbox %+v", c.Sandbox)
	}
	// Looser wishes are ignored, not errors.
	c, err = l.ForProject(project(t, `
[sandbox]
mode = "off"
network = true
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Sandbox.Mode != "workspace-write" || !c.Sandbox.Network || len(c.Sandbox.Writable) != 2 {
		t.Errorf("loosened sandbox %+v", c.Sandbox)
	}
	// ... but said, with file, line and key, in the session's warning.
	strict := mustLoader(t, Overrides{}, testEnv(t))
	root := project(t, "[sandbox]\nmode = \"off\"\nnetwork = true\n")
	c, w, err := strict.ForSession(root)
	if err != nil || c.Sandbox.Mode != "workspace-write" || c.Sandbox.Network {
		t.Fatalf("ForSession: %+v, %v", c.Sandbox, err)
	}
	for _, want := range []string{"config.toml:2", `sandbox.mode = "off" would loosen`, "config.toml:3", "sandbox.network = true"} {
		if w == nil || !strings.Contains(w.Error(), want) {
			t.Errorf("ForSession warning %v lacks %q", w, want)
		}
	}
	if d := mustLoader(t, Overrides{}, testEnv(t)).User().Sandbox; d.Mode != "workspace-write" || d.Network || d.Writable != nil {
		t.Errorf("default sandbox %+v", d)
	}
}

func TestSandboxValidation(t *testing.T) {
	e := testEnv(t)
	name := userFile(t, e, "[sandbox]\nmode = \"open\"\nwritable = [\"rel/path\"]\n")
	_, err := NewLoader(Overrides{}, e.get)
	wantErr(t, err, regexp.QuoteMeta(name)+`:2`, `sandbox.mode`, `:3.*not an absolute path`)
}

func TestForSessionIgnoresBrokenProjectFile(t *testing.T) {
	e := testEnv(t)
	userFile(t, e, "instructions = \"user\"\n")
	l := mustLoader(t, Overrides{}, e)
	root := project(t, "model = \"p/m\"\n[log]\nlevel = \"debug\"\n")
	c, warning, err := l.ForSession(root)
	if err != nil || c == nil {
		t.Fatalf("ForSession: %v", err)
	}
	wantErr(t, warning, `project configuration ignored`, regexp.QuoteMeta(filepath.Join(root, ".acpd", "config.toml"))+`:2`)
	if c.Model != "" || c.Instructions != "user" || len(c.Files) != 1 {
		t.Errorf("the broken project file was applied: %+v", c)
	}
	good := project(t, "model = \"p/m\"\n")
	if c, warning, err := l.ForSession(good); err != nil || warning != nil || c.Model != "p/m" {
		t.Errorf("a valid project file: %+v %v %v", c, warning, err)
	}
	if _, _, err := l.ForSession("relative"); err == nil {
		t.Error("a relative directory was accepted")
	}
}

// tomlPath is osAbs(p) as the content of a TOML basic string.
func tomlPath(p string) string { return strings.ReplaceAll(osAbs(p), `\`, `\\`) }

// osAbs makes the slash path p, absolute on Unix, an absolute path of this
// platform: C:\ and backslashes on Windows.
func osAbs(p string) string {
	if runtime.GOOS == "windows" {
		return "C:" + filepath.FromSlash(p)
	}
	return p
}

// TestWindowsPathsInFiles: on Windows a path rooted without a drive in a
// configuration file is on that file's drive, and "~" is %USERPROFILE%
// when HOME is not set.
func TestWindowsPathsInFiles(t *testing.T) {
	if runtime.GOOS != "windows" {
		t.Skip("Windows path forms")
	}
	e := testEnv(t)
	profile := e["HOME"]
	delete(e, "HOME")
	e["USERPROFILE"] = profile
	uf := userFile(t, e, "[log]\nfile = \"/logs/x.log\"\n[state]\ndir = \"~/st\"\n")
	c := mustLoader(t, Overrides{}, e).User()
	if want := filepath.VolumeName(uf) + `\logs\x.log`; c.Log.File != want {
		t.Errorf("log.file = %q, want %q", c.Log.File, want)
	}
	if want := filepath.Join(profile, "st"); c.State.Dir != want {
		t.Errorf("state.dir = %q, want %q", c.State.Dir, want)
	}
}

// Fallback serves without a broken user file; ForSession warns with its
// file, line and key until the file is fixed, and then says a restart
// applies it.
func TestFallbackWarnsEverySession(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(file, []byte("model = 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		switch k {
		case "ACPD_CONFIG":
			return file
		case "ACPD_STATE_DIR":
			return filepath.Join(dir, "state")
		}
		return ""
	}
	_, cause := NewLoader(Overrides{}, env)
	if cause == nil {
		t.Fatal("NewLoader accepted model = 3")
	}
	l, err := Fallback(Overrides{}, env, cause)
	if err != nil {
		t.Fatal(err)
	}
	if l.UserError() == nil || l.User().Model != "" {
		t.Fatalf("fallback: UserError %v, model %q", l.UserError(), l.User().Model)
	}
	for range 2 {
		_, w, err := l.ForSession(dir)
		if err != nil || w == nil || !strings.Contains(w.Error(), file+":1") || !strings.Contains(w.Error(), "model") {
			t.Errorf("ForSession warning %v (err %v), want the file, line and key", w, err)
		}
	}
	if err := os.WriteFile(file, []byte("model = \"openai/x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, w, _ := l.ForSession(dir); w == nil || !strings.Contains(w.Error(), "restart acpd") {
		t.Errorf("after the fix: warning %v, want the restart hint", w)
	}
}

// TestHooks: the user file's hooks come first, then the project's, marked
// as the project's (they run only once trusted), each naming its file; an
// unknown event and a hook without a command are errors with file and line.
func TestHooks(t *testing.T) {
	e := testEnv(t)
	user := userFile(t, e, "[[hooks.PreToolUse]]\nmatcher = \"run_command\"\ncommand = \"guard\"\ntimeout = 5\n")
	l := mustLoader(t, Overrides{}, e)
	root := project(t, "[[hooks.PreToolUse]]\ncommand = \"project-guard\"\n[[hooks.PostToolUse]]\nmatcher = \"Edit|Write\"\ncommand = \"fmt\"\n")
	c, w, err := l.ForSession(root)
	if err != nil || w != nil {
		t.Fatal(err, w)
	}
	pf := filepath.Join(root, ".acpd", "config.toml")
	want := map[string][]Hook{
		"PreToolUse":  {{Matcher: "run_command", Command: "guard", Timeout: 5, Source: user}, {Command: "project-guard", Source: pf, Project: true}},
		"PostToolUse": {{Matcher: "Edit|Write", Command: "fmt", Source: pf, Project: true}},
	}
	if !reflect.DeepEqual(c.Hooks, want) {
		t.Errorf("hooks %+v, want %+v", c.Hooks, want)
	}
	if u := l.User(); len(u.Hooks["PreToolUse"]) != 1 || u.Hooks["PostToolUse"] != nil {
		t.Errorf("the project's hooks leaked into the user configuration: %+v", u.Hooks)
	}
	e = testEnv(t)
	name := userFile(t, e, "[[hooks.BeforeEverything]]\ncommand = \"x\"\n[[hooks.Stop]]\nmatcher = \"\"\n")
	_, err = NewLoader(Overrides{}, e.get)
	wantErr(t, err, regexp.QuoteMeta(name)+`:1`, `hooks.BeforeEverything: unknown event`, `:3.*hooks.Stop\[0\]: command is required`)
}

// TestRootOfSession: a session's configuration names the project root
// above its cwd, also when the project file was ignored.
func TestRootOfSession(t *testing.T) {
	e := testEnv(t)
	l := mustLoader(t, Overrides{}, e)
	root := project(t, "[bad toml")
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	c, warning, err := l.ForSession(sub)
	if err != nil || warning == nil {
		t.Fatalf("ForSession: %v, warning %v", err, warning)
	}
	if c.Root != root {
		t.Fatalf("Root = %q, want %q", c.Root, root)
	}
}
