//go:build unix || windows

package jsonrpc

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// protectChildEnv makes the test binary act as ProtectStdout's subject (see
// TestMain): ProtectStdout changes process-wide file descriptors (handles
// on Windows), so it runs in a child process. The value names the kind of
// stdout: "pipe" or "socket".
const protectChildEnv = "ACP_TEST_PROTECT_STDOUT_CHILD"

const protoLine = "protocol-line\n"

// protectStdoutChild runs in the child process; it reports on stderr and
// returns the exit code.
func protectStdoutChild() int {
	if err := runProtectStdoutChild(os.Getenv(protectChildEnv)); err != nil {
		fmt.Fprintln(os.Stderr, "child error:", err)
		return 1
	}
	fmt.Fprintln(os.Stderr, "child ok")
	return 0
}

// startProtectChild starts the test binary as ProtectStdout's subject with
// stdout of kind as its standard output, which it then closes in this
// process; the child's stderr collects in the buffer returned.
func startProtectChild(t *testing.T, kind string, stdout *os.File) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), protectChildEnv+"="+kind)
	cmd.Stdout = stdout
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout.Close()
	return cmd, &stderr
}

// checkProtected checks what a ProtectStdout child wrote: out, the protocol
// stream, starts with protoLine and holds no stray write; stderr holds the
// strays and the child's "child ok".
func checkProtected(t *testing.T, out []byte, stderr string, strays ...string) {
	t.Helper()
	if !bytes.HasPrefix(out, []byte(protoLine)) {
		t.Fatalf("protocol stream starts with %q", out[:min(len(out), 64)])
	}
	if bytes.Contains(out, []byte("stray")) {
		t.Fatal("a stray stdout write reached the protocol stream")
	}
	for _, want := range append(strays, "child ok") {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
