//go:build unix

package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"acpd/internal/testpeers"
)

// TestRunUIAsksOnTerminal: on an interactive terminal without --ui, the
// first MCP App view asks whether to open the page; yes serves it, the run
// stays after its turn while the page shows the view, and Ctrl-C ends it.
func TestRunUIAsksOnTerminal(t *testing.T) {
	t.Parallel()
	iso, project, script, mcpConfig := appsRunSetup(t, appsUIScript, testpeers.BasicApp)
	p := startPTYRun(t, append(iso.Env(), "BROWSER=none"), "run", "--yes", "--cwd", project, "--mcp-config", mcpConfig, "--model", "replay/"+script, "What time is it?")
	p.waitFor("has an MCP App view: open it in the browser?", 1)
	p.waitFor("›", 1)
	io.WriteString(p.ptmx, "y")
	p.waitFor("the MCP Apps page stays open", 1)
	m := regexp.MustCompile(`MCP Apps page: (http://127\.0\.0\.1:\d+/[0-9a-f]+/)`).FindStringSubmatch(p.screen())
	if m == nil {
		t.Fatalf("no page URL on the screen:\n%s", p.screen())
	}
	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the page: %s", resp.Status)
	}
	io.WriteString(p.ptmx, "\x03")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, p.screen())
	}
}

// TestOpenBrowserEnvAndReap: the opener named by $BROWSER gets the page's
// URL as its last argument and acpd's environment without secrets, and is
// returned started for the caller to reap.
func TestOpenBrowserEnvAndReap(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "env")
	script := filepath.Join(dir, "opener")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n{ echo \"url=$1\"; env; } > \""+out+"\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", script)
	t.Setenv("OPENAI_API_KEY", "sk-must-not-leak")
	t.Setenv("ACPD_OPENER_PROBE", "kept")
	cmd, err := openBrowser("http://127.0.0.1:1/secret/")
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("opener: %v", err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	if !strings.Contains(s, "url=http://127.0.0.1:1/secret/\n") || !strings.Contains(s, "ACPD_OPENER_PROBE=kept") {
		t.Errorf("opener saw:\n%s", s)
	}
	if strings.Contains(s, "sk-must-not-leak") {
		t.Errorf("the opener received a secret:\n%s", s)
	}
	t.Setenv("BROWSER", "none")
	if cmd, err := openBrowser("http://127.0.0.1:1/"); err == nil || cmd != nil {
		t.Errorf("BROWSER=none started %v, err %v", cmd, err)
	}
}
