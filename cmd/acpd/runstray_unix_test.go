//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"acpd/cmd/acpd/internal/run"
	"acpd/internal/testproc"
)

// TestRunAgentWrapperNoStrays: an agent started through sh -c (which
// stays its parent) leaves nothing behind, and acpd run does not wait long
// for an agent that ignores the end of its input.
func TestRunAgentWrapperNoStrays(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, runScript)
	pidFile := filepath.Join(t.TempDir(), "pid")
	bin := acpdBinary(t)
	// The wrapper keeps running after the agent exits (sleep in its group);
	// acpd must stop the whole group. (A background job's stdin is
	// /dev/null unless given explicitly, hence fd 3.)
	agent := "sh -c 'exec 3<&0; \"$0\" --model \"$1\" <&3 3<&- & echo $$ $! > \"$2\"; wait; sleep 300' '" + bin + "' 'replay/" + script + "' '" + pidFile + "'"
	start := time.Now()
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--yes", "--cwd", project, "--agent", agent, "write the file")
	took := time.Since(start)
	checkAllowedRun(t, project, stdout, stderr, code)
	t.Logf("the run took %v", took)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	var sh, pid int
	if _, err := fmt.Sscan(string(b), &sh, &pid); err != nil {
		t.Fatal(err)
	}
	if !processGone(pid) {
		testproc.Kill(pid)
		t.Errorf("the agent (pid %d) outlived acpd run", pid)
	}
	// The wrapper's group (sh, the sleep it runs) must be gone too.
	if left := groupMembers(sh); len(left) > 0 {
		testproc.KillGroup(sh)
		t.Errorf("processes %v of the agent's group outlived acpd run", left)
	}
}

// groupMembers lists the live (not zombie) processes of process group pgid,
// polling until there are none or the reply wait has passed.
func groupMembers(pgid int) []int {
	deadline := time.Now().Add(*flagReplyWait)
	for {
		var live []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
			if err != nil {
				continue
			}
			i := bytes.LastIndexByte(b, ')')
			if i < 0 {
				continue
			}
			f := strings.Fields(string(b[i+1:]))
			if len(f) > 2 && f[0] != "Z" && f[2] == fmt.Sprint(pgid) {
				pid, _ := strconv.Atoi(e.Name())
				live = append(live, pid)
			}
		}
		if len(live) == 0 || time.Now().After(deadline) {
			return live
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRunTimeoutBeforeTheTurn: an agent that never answers initialize is
// given up on at --timeout (exit 124), and stopped with its group.
func TestRunTimeoutBeforeTheTurn(t *testing.T) {
	t.Parallel()
	iso, project, _ := runSetup(t, "")
	pidFile := filepath.Join(t.TempDir(), "pid")
	agent := "sh -c 'echo $$ > \"$0\"; sleep 300' '" + pidFile + "'"
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--timeout", "500ms", "--output", "json", "--cwd", project, "--agent", agent, "go")
	if code != run.ExitTimeout {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, run.ExitTimeout, stderr)
	}
	if res := checkResult(t, stdout); res.ExitCode != run.ExitTimeout || !strings.Contains(stderr, "before the turn started") {
		t.Errorf("result %+v; stderr:\n%s", res, stderr)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if left := groupMembers(sh); len(left) > 0 {
		testproc.KillGroup(sh)
		t.Errorf("processes %v of the agent's group outlived acpd run", left)
	}
}
