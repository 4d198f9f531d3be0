package main

import (
	"path/filepath"
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
