package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Helper processes: the test binary re-executes itself with
// -test.run=^TestHelperProcess$ and these environment variables.
const (
	helperEnv   = "ACPD_SESSION_HELPER" // role: churn, hold, crash
	helperDir   = "ACPD_SESSION_HELPER_DIR"
	helperArg   = "ACPD_SESSION_HELPER_ARG"
	helperReady = "ready"
)

func helperCmd(t testing.TB, role, dir, arg string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+role, helperDir+"="+dir, helperArg+"="+arg)
	return cmd
}

// TestHelperProcess is not a test: it is the body of helper processes.
func TestHelperProcess(t *testing.T) {
	role := os.Getenv(helperEnv)
	if role == "" {
		t.Skip("helper process only")
	}
	s, err := Open(t.Context(), os.Getenv(helperDir))
	if err != nil {
		helperFail(err)
	}
	arg := os.Getenv(helperArg)
	switch role {
	case "churn":
		helperChurn(s, arg)
	case "hold":
		l, _, err := s.Open(arg)
		if err != nil {
			helperFail(err)
		}
		fmt.Println(helperReady)
		_, _ = io.Copy(io.Discard, os.Stdin) // until killed or stdin closes
		_ = l.Close()
	case "crash":
		helperCrash(s, arg)
	case "cycle":
		helperCycle(s, arg)
	default:
		helperFail(fmt.Errorf("unknown role %q", role))
	}
	os.Exit(0)
}

func helperFail(err error) {
	fmt.Fprintln(os.Stderr, "helper:", err)
	os.Exit(3)
}

// helperChurn creates n sessions, printing "C <id>", then deletes every
// other one, printing "D <id>".
func helperChurn(s *Store, arg string) {
	n, err := strconv.Atoi(arg)
	if err != nil {
		helperFail(err)
	}
	var ids []string
	for i := range n {
		l, err := s.Create(Meta{Cwd: fmt.Sprintf("/pid/%d", os.Getpid())})
		if err != nil {
			helperFail(err)
		}
		if _, err := l.Append("update", map[string]int{"i": i}); err != nil {
			helperFail(err)
		}
		if err := l.Close(); err != nil {
			helperFail(err)
		}
		ids = append(ids, l.ID())
		fmt.Println("C", l.ID())
	}
	for i, id := range ids {
		if i%2 == 1 {
			continue
		}
		if err := s.Delete(id); err != nil {
			helperFail(err)
		}
		fmt.Println("D", id)
	}
}

// crashPayload is what the crash helper appends: pad is len copies of a
// letter derived from the sequence number, so completeness is checkable.
type crashPayload struct {
	Seq int64  `json:"seq"`
	Len int    `json:"len"`
	Pad string `json:"pad"`
}

func padFor(seq int64, n int) string { return strings.Repeat(string(rune('a'+seq%26)), n) }

// helperCrash appends records of varying size (up to ~64 KiB) to session
// arg forever, syncing every few records, until it is killed.
func helperCrash(s *Store, id string) {
	l, recs, err := s.Open(id)
	if err != nil {
		helperFail(err)
	}
	seq := int64(len(recs))
	fmt.Println(helperReady)
	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	for i := 0; ; i++ {
		seq++
		n := rng.IntN(300)
		if rng.IntN(4) == 0 {
			n = rng.IntN(64 << 10)
		}
		r, err := l.Append("update", crashPayload{Seq: seq, Len: n, Pad: padFor(seq, n)})
		if err != nil {
			helperFail(err)
		}
		if r.Seq != seq {
			helperFail(fmt.Errorf("seq %d, want %d", r.Seq, seq))
		}
		if i%5 == 4 {
			if err := l.Sync(); err != nil {
				helperFail(err)
			}
		}
	}
}

func TestMultiProcessIndex(t *testing.T) {
	s := newStore(t)
	n := *procSessions
	var outs [2]bytes.Buffer
	var errs [2]bytes.Buffer
	var cmds [2]*exec.Cmd
	for i := range cmds {
		cmds[i] = helperCmd(t, "churn", s.Dir(), strconv.Itoa(n))
		cmds[i].Stdout = &outs[i]
		cmds[i].Stderr = &errs[i]
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("helper %d: %v\n%s", i, err, errs[i].String())
		}
	}
	want := map[string]string{} // id → cwd
	for i, out := range outs {
		created, deleted := 0, 0
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			op, id, ok := strings.Cut(line, " ")
			if !ok {
				continue
			}
			switch op {
			case "C":
				want[id] = fmt.Sprintf("/pid/%d", cmds[i].Process.Pid)
				created++
			case "D":
				delete(want, id)
				deleted++
			}
		}
		if created != n || deleted != (n+1)/2 {
			t.Fatalf("helper %d created %d deleted %d:\n%s", i, created, deleted, out.String())
		}
	}
	all, err := s.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range all {
		got[m.ID] = m.Cwd
		if m.Records != 1 {
			t.Errorf("%s: Records=%d", m.ID, m.Records)
		}
	}
	if len(got) != len(want) || len(want) != 2*(n/2) {
		t.Fatalf("index has %d sessions, want %d", len(got), len(want))
	}
	for id, cwd := range want {
		if got[id] != cwd {
			t.Fatalf("session %s: cwd %q, want %q", id, got[id], cwd)
		}
	}
	ents, err := os.ReadDir(s.sessionsDir())
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range ents {
		files = append(files, e.Name())
	}
	for id := range want {
		for _, suffix := range []string{logSuffix, lockSuffix} {
			if !slices.Contains(files, id+suffix) {
				t.Errorf("missing %s%s", id, suffix)
			}
		}
	}
	if len(files) != 2*len(want) {
		t.Errorf("sessions/ holds %d files, want %d: %v", len(files), 2*len(want), files)
	}
}

// startHelper starts a helper and waits for its ready line.
func startHelper(t testing.TB, role, dir, arg string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := helperCmd(t, role, dir, arg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if role == "hold" {
		// Keep stdin open (and unread by anyone) so the helper blocks.
		if _, err := cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != helperReady {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper not ready: %q %v\n%s", line, err, stderr.String())
	}
	return cmd, &stderr
}

// killHelper kills a helper with SIGKILL and reaps it; stderr (may be nil) is
// reported if it had died on its own.
func killHelper(t testing.TB, cmd *exec.Cmd, stderr *bytes.Buffer) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("helper wait: %v", err)
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	killed := ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
	if runtime.GOOS == "windows" {
		// Signal(SIGKILL) is TerminateProcess(h, 1): no signal to see.
		killed = ee.ExitCode() == 1
	}
	if !killed {
		msg := ""
		if stderr != nil {
			msg = stderr.String()
		}
		t.Fatalf("helper did not die of SIGKILL: %v\n%s", err, msg)
	}
}

func TestLockAcrossProcesses(t *testing.T) {
	s := newStore(t)
	id, recs := makeSession(t, s, 2)
	cmd, stderr := startHelper(t, "hold", s.Dir(), id)
	pid := cmd.Process.Pid

	var le *LockedError
	if _, _, err := s.Open(id); !errors.As(err, &le) {
		killHelper(t, cmd, stderr)
		t.Fatalf("Open while held by helper: %v", err)
	}
	if le.PID != pid || le.ID != id || !strings.Contains(le.Error(), fmt.Sprintf("pid %d", pid)) || !strings.Contains(le.Error(), "since ") {
		killHelper(t, cmd, stderr)
		t.Fatalf("LockedError %+v: %q", le, le.Error())
	}
	if err := s.Delete(id); !errors.As(err, &le) || le.PID != pid {
		killHelper(t, cmd, stderr)
		t.Fatalf("Delete while held by helper: %v", err)
	}
	if h := s.Holder(id); h == nil || h.PID != pid {
		killHelper(t, cmd, stderr)
		t.Fatalf("Holder while held by helper: %+v", h)
	}
	// Read-only access works while the session is held.
	if got, err := s.Records(id); err != nil || len(got) != len(recs) {
		killHelper(t, cmd, stderr)
		t.Fatalf("Records while held: %v", err)
	}

	killHelper(t, cmd, stderr)
	// The killed holder's record is still in the lock file: only the
	// liveness probe can tell it is gone.
	if h := s.Holder(id); h != nil {
		t.Fatalf("Holder after the holder was killed: %+v", h)
	}
	l, got, err := s.Open(id)
	if err != nil {
		t.Fatalf("Open after helper was killed: %v", err)
	}
	checkRecords(t, got, recs)
	mustClose(t, l)
	if err := s.Delete(id); err != nil {
		t.Fatal(err)
	}
}

func TestCrashRecovery(t *testing.T) {
	s := newStore(t)
	l, err := s.Create(Meta{Cwd: "/crash"})
	if err != nil {
		t.Fatal(err)
	}
	id := l.ID()
	mustClose(t, l)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))

	var total int64
	torn := 0 // rounds that left a torn tail
	for round := range *crashLoops {
		cmd, stderr := startHelper(t, "crash", s.Dir(), id)
		time.Sleep(time.Duration(10+rng.IntN(41)) * time.Millisecond)
		killHelper(t, cmd, stderr)
		if b := readLog(t, s, id); b[len(b)-1] != '\n' {
			torn++
		}

		l, recs, err := s.Open(id)
		if err != nil {
			t.Fatalf("round %d: Open after kill: %v", round, err)
		}
		if int64(len(recs)) < total {
			t.Fatalf("round %d: %d records, had %d before", round, len(recs), total)
		}
		for i, r := range recs {
			if r.Seq != int64(i+1) {
				t.Fatalf("round %d: record %d has seq %d", round, i, r.Seq)
			}
			if r.Kind == "test" {
				continue
			}
			var p crashPayload
			if err := json.Unmarshal(r.Data, &p); err != nil {
				t.Fatalf("round %d: record %d: %v", round, r.Seq, err)
			}
			if p.Seq != r.Seq || len(p.Pad) != p.Len || p.Pad != padFor(p.Seq, p.Len) {
				t.Fatalf("round %d: record %d incomplete: seq %d len %d/%d", round, r.Seq, p.Seq, len(p.Pad), p.Len)
			}
		}
		r, err := l.Append("test", map[string]int{"round": round})
		if err != nil || r.Seq != int64(len(recs))+1 {
			t.Fatalf("round %d: append after crash: %v seq %d", round, err, r.Seq)
		}
		mustClose(t, l)
		total = int64(len(recs)) + 1
		if b := readLog(t, s, id); b[len(b)-1] != '\n' {
			t.Fatalf("round %d: log does not end with a newline", round)
		}
	}
	recs, err := s.Records(id)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(recs)) != total {
		t.Fatalf("final load: %d records, want %d", len(recs), total)
	}
	if m, err := s.Get(id); err != nil || int64(m.Records) != total {
		t.Fatalf("index after crashes: %+v %v", m, err)
	}
	t.Logf("%d rounds, %d records, %d torn tails repaired", *crashLoops, total, torn)
}
