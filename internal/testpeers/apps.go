package testpeers

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// MCP Apps servers pinned in testdata/package.json; run them as
// `node ENTRY --stdio`.
const (
	// BasicApp is @modelcontextprotocol/server-basic-vanillajs: tool
	// get-time with the view ui://get-time/mcp-app.html.
	BasicApp = "server-basic-vanillajs"
	// MonitorApp is @modelcontextprotocol/server-system-monitor: tool
	// get-system-info with a view, and the app-only tool poll-system-stats.
	MonitorApp = "server-system-monitor"
)

// App returns the node binary and the entry point of the MCP Apps server
// pkg (BasicApp or MonitorApp).
func App(tb testing.TB, pkg string) (node, entry string) {
	tb.Helper()
	entry = filepath.Join(ModulesDir(tb), "@modelcontextprotocol", pkg, "dist", "index.js")
	_, err := os.Stat(entry)
	if err == nil {
		node, err = exec.LookPath("node")
	}
	if err != nil {
		missing(tb, pkg, err)
	}
	return node, entry
}
