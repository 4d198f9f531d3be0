//go:build unix

package main

import (
	"io"
	"net/http"
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
	// The turn had ended: Ctrl-C says it ends the run, not that it
	// cancels a turn.
	if sc := p.screen(); !strings.Contains(sc, "the turn has ended; closing the MCP Apps page and exiting") || strings.Contains(sc, "cancelling the turn") {
		t.Errorf("Ctrl-C after the turn is not told as ending the run; screen:\n%s", sc)
	}
}
