package acp

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// schemaRel is the schema location relative to the module root; it must match
// the default of internal/schemagen.
const schemaRel = "testdata/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json"

// schemaFile returns the path of the installed ACP schema. It skips the test
// when the schema is missing, except under CI=true where it fails.
func schemaFile(t testing.TB) string {
	t.Helper()
	p := filepath.Join("..", filepath.FromSlash(schemaRel))
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ACP schema missing under CI (%v); run: cd testdata && npm ci", err)
		}
		t.Skipf("ACP schema not installed (%v); run: cd testdata && npm ci", err)
	}
	return p
}

// TestGeneratedTypesUpToDate regenerates types_gen.go and methods_gen.go
// into a temporary directory and fails when a committed file differs.
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
		"-out", filepath.Join(dir, "types_gen.go"), "-methods", filepath.Join(dir, "methods_gen.go"))
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("running schemagen: %v\n%s", err, stderr.Bytes())
	}
	for _, name := range []string{"types_gen.go", "methods_gen.go"} {
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
