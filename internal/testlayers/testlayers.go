// Package testlayers holds the architecture's import rules to account in
// tests: a package's tests call [Forbid] to fail when the package, its
// sub-packages or their tests come to import a package above them.
package testlayers

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// Forbid fails t when a package matched by pattern (a `go list` pattern
// such as "acpd/session/..."), or any of its tests, depends on one of
// forbidden (import paths), directly or not, naming the chain that does.
// It runs `go list` and skips when the go command is missing (a test
// binary run on its own, e.g. under Wine).
func Forbid(t testing.TB, pattern string, forbidden ...string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list imports")
	}
	out, err := exec.Command("go", "list", "-deps", "-test", "-f", "{{.ImportPath}}\t{{.DepOnly}}\t{{join .Imports \"\\t\"}}", pattern).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	imports := map[string][]string{}
	var roots []string
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) < 2 {
			continue
		}
		imports[f[0]] = f[2:]
		if f[1] == "false" {
			roots = append(roots, f[0])
		}
	}
	for _, bad := range forbidden {
		if c := chain(imports, roots, bad); c != nil {
			t.Errorf("%s depends on %s: %s", pattern, bad, strings.Join(c, " → "))
		}
	}
}

// chain returns a shortest import chain from one of roots to bad (or a
// test variant of it, "bad [p.test]"), nil when there is none.
func chain(imports map[string][]string, roots []string, bad string) []string {
	prev := map[string]string{}
	var queue []string
	for _, r := range roots {
		if _, seen := prev[r]; !seen {
			prev[r] = ""
			queue = append(queue, r)
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if path, _, _ := strings.Cut(p, " "); path == bad {
			var c []string
			for ; p != ""; p = prev[p] {
				c = append(c, p)
			}
			slices.Reverse(c)
			return c
		}
		for _, q := range imports[p] {
			if _, seen := prev[q]; !seen && q != "" {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return nil
}
