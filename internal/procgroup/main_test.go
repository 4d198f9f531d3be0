package procgroup

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// childMode makes the test binary act as a child (see runChild).
const childMode = "ACPD_PROCGROUP_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childMode); mode != "" {
		runChild(mode)
		return
	}
	goleak.VerifyTestMain(m)
}

// runChild is a child process:
//   - "stdin": exits 0 when its stdin reaches EOF;
//   - "stubborn": ignores SIGTERM and closed stdin, starts a "stubborn"
//     grandchild in its group and prints the grandchild's pid;
//   - "sleep": sleeps (exits on SIGTERM, the default action).
func runChild(mode string) {
	switch mode {
	case "stdin":
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "stubborn", "stubborn-leaf":
		signal.Ignore(syscall.SIGTERM)
		if mode == "stubborn" {
			gc := exec.Command(os.Args[0])
			gc.Env = append(os.Environ(), childMode+"=stubborn-leaf")
			if err := gc.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(3)
			}
			fmt.Println(gc.Process.Pid)
		}
		time.Sleep(time.Hour)
	case "sleep":
		time.Sleep(time.Hour)
	}
	os.Exit(2)
}

// child returns a command running the test binary in mode.
func child(mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childMode+"="+mode)
	cmd.Stderr = os.Stderr
	return cmd
}

// start starts child(mode) in a group with a pipe to its stdin and one
// from its stdout, failing t when it cannot.
func start(t *testing.T, mode string) (g *Group, stdin io.WriteCloser, stdout io.Reader) {
	t.Helper()
	cmd := child(mode)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err = cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if g, err = Start(cmd); err != nil {
		t.Fatal(err)
	}
	return g, stdin, stdout
}

// readPid reads the grandchild pid a "stubborn" child prints.
func readPid(t *testing.T, r io.Reader) int {
	t.Helper()
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the grandchild's pid: %v", err)
	}
	pid, err := strconv.Atoi(line[:len(line)-1])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}
