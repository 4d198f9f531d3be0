package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCLIConsistency: what a person sees from the small subcommands, through
// the binary: usage errors exit 2 with a hint to the help, empty listings
// stay valid JSON, and nothing-to-do answers say so once.
func TestCLIConsistency(t *testing.T) {
	t.Parallel()
	iso := newIsolation(t)
	for _, tc := range []struct {
		args       []string
		code       int
		stdout     string // exact, when not "-"
		stderrHas  []string
		stderrOnce string // appears exactly once in stderr
	}{
		{[]string{"--frobnicate"}, 2, "", []string{"unknown flag: --frobnicate", "Run 'acpd --help' for usage."}, ""},
		{[]string{"frobnicate"}, 2, "", []string{`unknown command "frobnicate"`, "Run 'acpd --help'"}, ""},
		{[]string{"sessions", "rm"}, 2, "", []string{"Run 'acpd sessions rm --help'"}, ""},
		{[]string{"mcp", "list", "--json"}, 0, "[]\n", []string{"no MCP servers configured"}, ""},
		{[]string{"mcp", "list", "--servers", "--json"}, 0, "[]\n", nil, ""},
		{[]string{"sandbox", "--cwd", filepath.Join(iso.Home, "nonexistent"), "--", "true"}, 2, "", []string{"the directory does not exist"}, ""},
		{[]string{"logout"}, 0, "", []string{"No stored keys: nothing to delete."}, ""},
		{[]string{"logout", "openai"}, 0, "", []string{"No stored key for openai"}, ""},
		{[]string{"sessions", "rm", "s_0123456789abcdef"}, 1, "", []string{"no session s_0123456789abcdef"}, "s_0123456789abcdef"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			stdout, stderr, code := runCLI(t, iso.Env(), tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, stderr)
			}
			if tc.stdout != "-" && stdout != tc.stdout {
				t.Errorf("stdout %q, want %q", stdout, tc.stdout)
			}
			for _, w := range tc.stderrHas {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if tc.stderrOnce != "" && strings.Count(stderr, tc.stderrOnce) != 1 {
				t.Errorf("stderr names %q %d times, want once: %s", tc.stderrOnce, strings.Count(stderr, tc.stderrOnce), stderr)
			}
		})
	}
}

// TestBrokenUserConfig: a broken user config file does not kill the
// editor's connection: initialize is answered, every session says what is
// wrong (file, line, key), and acpd sessions and doctor keep working,
// doctor running every check.
func TestBrokenUserConfig(t *testing.T) {
	t.Parallel()
	iso := newIsolation(t)
	iso.writeUserConfig(t, "model = 3\n")
	env := withEnv(iso, "ACPD_DISCOVER=0")
	project := t.TempDir()

	p := startProc(t, env)
	p.initialize()
	for range 2 {
		p.newSession(project)
		p.waitUpdate("the broken config's warning", func(kind string, u json.RawMessage) bool {
			return strings.Contains(string(u), "config.toml:1") && strings.Contains(string(u), "model")
		})
	}
	p.close()

	if _, stderr, code := runCLI(t, env, "sessions", "list"); code != 0 {
		t.Errorf("acpd sessions list with a broken config: exit %d: %s", code, stderr)
	}
	stdout, _, code := runCLI(t, env, "doctor")
	if code != 1 || !strings.Contains(stdout, "FAIL config") || !strings.Contains(stdout, "config.toml:1") || !strings.Contains(stdout, "state") || !strings.Contains(stdout, "shell") {
		t.Errorf("acpd doctor with a broken config: exit %d:\n%s", code, stdout)
	}
}

// TestDoctorProbesModel: doctor says FAIL model for a plug-in that exits
// at once and for an endpoint that refuses connections, not "ok".
func TestDoctorProbesModel(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	for _, tc := range []struct {
		name, config string
		env          []string
		want         string
	}{
		{"dead plug-in", "model = \"dead/m\"\n[providers.dead]\ndialect = \"exec\"\ncommand = [\"sh\", \"-c\", \"exit 3\"]\n", nil, "hello"},
		{"closed port", "", []string{"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=http://" + closed + "/v1", "ACPD_MODEL=openai/gpt-5"}, "does not accept connections"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			iso := newIsolation(t)
			if tc.config != "" {
				iso.writeUserConfig(t, tc.config)
			}
			stdout, _, code := runCLI(t, withEnv(iso, append([]string{"ACPD_DISCOVER=0"}, tc.env...)...), "doctor")
			if code != 1 || !strings.Contains(stdout, "FAIL model") || !strings.Contains(stdout, tc.want) {
				t.Errorf("acpd doctor: exit %d, want FAIL model saying %q:\n%s", code, tc.want, stdout)
			}
		})
	}
}

// TestRunCIRefusalsAndJSONText: under --fail-on-refusal a run whose
// permission requests were refused exits 3 (without it, 0 as before), and
// --output json separates the agent's messages with a blank line, as the
// text output does.
func TestRunCIRefusalsAndJSONText(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, runScript)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--approve", "none", "--fail-on-refusal", "--output", "json", "--cwd", project, "--model", "replay/"+script, "write the file")
	if code != 3 || !strings.Contains(stderr, "refused") {
		t.Errorf("--fail-on-refusal with refusals: exit %d, want 3; stderr:\n%s", code, stderr)
	}
	var res struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	if res.Text != "Writing the file.\n\nAll done." {
		t.Errorf("text %q, want the two messages separated by a blank line", res.Text)
	}
	if _, stderr, code := runCLI(t, iso.Env(), "run", "--approve", "none", "--cwd", project, "--model", "replay/"+script, "write the file"); code != 0 {
		t.Errorf("refusals without --fail-on-refusal: exit %d, want 0; stderr:\n%s", code, stderr)
	}
}

// TestConfigExampleAndVersion: a binary on its own documents its
// configuration (`acpd config example` prints the annotated file the
// README points to, which a user config may start from) and names its
// commit in --version.
func TestConfigExampleAndVersion(t *testing.T) {
	t.Parallel()
	iso := newIsolation(t)
	stdout, stderr, code := runCLI(t, iso.Env(), "config", "example")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want, err := os.ReadFile("../../config/example.toml")
	if err != nil {
		t.Fatal(err)
	}
	if stdout != string(want) {
		t.Errorf("acpd config example printed %d bytes, want config/example.toml's %d", len(stdout), len(want))
	}
	stdout, _, code = runCLI(t, iso.Env(), "--version")
	if code != 0 || !regexp.MustCompile(`^acpd [0-9]+\.[0-9]+\.[0-9]+\S* \(commit ([0-9a-f]+(-dirty)?|unknown), built \S+\)\n$`).MatchString(stdout) {
		t.Errorf("--version printed %q (exit %d), want the version, commit and date", stdout, code)
	}
}

// TestServeForms: without arguments (what editors run; the command tree is
// not built), with "serve" and with only global flags acpd serves ACP
// alike: the same initialize reply.
func TestServeForms(t *testing.T) {
	t.Parallel()
	iso := newIsolation(t)
	env := append(iso.Env(), "ACPD_DISCOVER=0")
	var replies []string
	for _, args := range [][]string{nil, {"serve"}, {"--log-level", "debug"}} {
		p := startProc(t, env, args...)
		res, rerr := p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
		if rerr != nil {
			t.Fatalf("acpd %q: initialize: %v", args, rerr)
		}
		p.close()
		replies = append(replies, string(res))
	}
	for i, r := range replies[1:] {
		if r != replies[0] {
			t.Errorf("initialize reply of form %d differs:\n%s\nwant\n%s", i+1, r, replies[0])
		}
	}
	if !strings.Contains(replies[0], `"agentInfo"`) {
		t.Errorf("initialize reply without agentInfo: %s", replies[0])
	}
}
