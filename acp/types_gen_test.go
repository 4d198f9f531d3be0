package acp

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"acpd/internal/testpeers"
)

// schemaFile returns the path of the installed ACP schema (the default of
// internal/schemagen). It skips the test when the schema is missing, except
// under CI=true where it fails, as every test of an npm peer does.
func schemaFile(t testing.TB) string {
	t.Helper()
	return testpeers.ACPSchema(t)
}

// TestGeneratedTypesUpToDate regenerates types_gen.go, unstable_gen.go and
// methods_gen.go into a temporary directory and fails when a committed file
// differs.
func TestGeneratedTypesUpToDate(t *testing.T) {
	schemaFile(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("go tool not found: %v", err)
		}
		t.Skipf("go tool not found: %v", err)
	}
	dir := t.TempDir()
	var stderr bytes.Buffer
	cmd := exec.Command(goBin, "run", "./internal/schemagen",
		"-out", filepath.Join(dir, "types_gen.go"), "-unstable", filepath.Join(dir, "unstable_gen.go"),
		"-methods", filepath.Join(dir, "methods_gen.go"))
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("running schemagen: %v\n%s", err, stderr.Bytes())
	}
	for _, name := range []string{"types_gen.go", "unstable_gen.go", "methods_gen.go"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale (run: go generate ./acp/); %s", name, firstDifference(got, want))
		}
	}
}

// firstDifference describes the first line where got and want differ.
func firstDifference(got, want []byte) string {
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return fmt.Sprintf("first difference at line %d:\ncommitted: %q\ngenerated: %q", i+1, w, g)
		}
	}
	return "no line differs"
}
