// Package testpeers finds the external peers the tests drive — programs the
// project pins in testdata/package.json and `cd testdata && npm ci`
// installs. A test whose peer is missing is skipped with the install
// command, and fails when CI=true (CI must never skip them silently).
//
// Only tests import this package.
package testpeers

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// InstallHint is the command that installs the peers.
const InstallHint = "run: cd testdata && npm ci"

// Everything returns the node binary and the entry point of
// @modelcontextprotocol/server-everything (run it as `node ENTRY stdio`,
// `sse` or `streamableHttp`).
func Everything(tb testing.TB) (node, entry string) {
	tb.Helper()
	entry = filepath.Join(ModulesDir(tb), "@modelcontextprotocol", "server-everything", "dist", "index.js")
	_, err := os.Stat(entry)
	if err == nil {
		node, err = exec.LookPath("node")
	}
	if err != nil {
		missing(tb, "server-everything", err)
	}
	return node, entry
}

// ModulesDir is testdata/node_modules of the module the test runs in.
func ModulesDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "node_modules")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("testpeers: no go.mod above the test's directory")
		}
		dir = parent
	}
}

func missing(tb testing.TB, what string, err error) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s unavailable under CI (%v); %s", what, err, InstallHint)
	}
	tb.Skipf("%s unavailable (%v); %s", what, err, InstallHint)
}

// ACPSchema returns the path of the ACP JSON schema of the pinned
// @agentclientprotocol/sdk (what acp/internal/schemagen generates from).
func ACPSchema(tb testing.TB) string {
	tb.Helper()
	p := filepath.Join(ModulesDir(tb), "@agentclientprotocol", "sdk", "schema", "v1", "schema.json")
	if _, err := os.Stat(p); err != nil {
		missing(tb, "the ACP schema", err)
	}
	return p
}
