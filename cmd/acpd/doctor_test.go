package main

import (
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestDoctor(t *testing.T) {
	iso := newIsolation(t)
	script := writeFile(t, filepath.Join(t.TempDir(), "s.jsonl"), `{"type":"text","text":"hi"}`+"\n"+`{"type":"finish"}`+"\n")
	env := append(iso.Env(), "ACPD_DISCOVER=0")

	out, errOut, code := runCLI(t, env, "doctor", "--model", "replay/"+script)
	if code != 0 {
		t.Fatalf("doctor with a replay model: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{`(?m)^ok\s+platform\s+` + runtime.GOOS + "/", `(?m)^ok\s+config\s`, `(?m)^ok\s+state\s+` + regexp.QuoteMeta(filepath.Join(iso.State, "acpd")), `(?m)^ok\s+model\s+replay/`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}

	// No model at all: a failing line naming what to set, exit 1.
	out, _, code = runCLI(t, env, "doctor")
	if code != 1 || !regexp.MustCompile(`(?m)^FAIL\s+model\s+.*ANTHROPIC_API_KEY`).MatchString(out) {
		t.Fatalf("doctor without a model: exit %d\n%s", code, out)
	}

	// A configured MCP server that cannot start is a failing line; the
	// key of a provider is never printed.
	iso.writeUserConfig(t, "[mcp_servers.nope]\ncommand = [\"/nonexistent/mcp\"]\n")
	out, _, code = runCLI(t, append(env, "ANTHROPIC_API_KEY=sk-doctor-secret"), "doctor")
	if code != 1 || !regexp.MustCompile(`(?m)^FAIL\s+mcp nope\s`).MatchString(out) {
		t.Fatalf("doctor with a broken MCP server: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "sk-doctor-secret") {
		t.Fatalf("doctor printed the API key:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^ok\s+model\s+anthropic/`).MatchString(out) {
		t.Errorf("the key's provider was not picked:\n%s", out)
	}
}
