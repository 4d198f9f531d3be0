//go:build unix

package terminal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

// testTimeout bounds every wait in these tests so a broken implementation
// fails instead of hanging; it is not a speed assertion.
const testTimeout = 30 * time.Second

func newTestManager(t *testing.T, grace time.Duration) *Manager {
	t.Helper()
	m := NewManager(ManagerOptions{KillGrace: grace})
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Manager.Close: %v", err)
		}
	})
	return m
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func mustStart(t *testing.T, m *Manager, spec Spec) Terminal {
	t.Helper()
	term, err := m.Start(testCtx(t), spec)
	if err != nil {
		t.Fatalf("Start(%q %q): %v", spec.Command, spec.Args, err)
	}
	return term
}

func shell(script string) Spec {
	return Spec{Command: "sh", Args: []string{"-c", script}}
}

func mustWait(t *testing.T, term Terminal) ExitStatus {
	t.Helper()
	st, err := term.WaitForExit(testCtx(t))
	if err != nil {
		t.Fatalf("WaitForExit: %v", err)
	}
	return st
}

func mustOutput(t *testing.T, term Terminal) Output {
	t.Helper()
	out, err := term.Output(testCtx(t))
	if err != nil {
		t.Fatalf("Output: %v", err)
	}
	return out
}

// waitForOutput polls until the output matches re and returns the match.
func waitForOutput(t *testing.T, term Terminal, re *regexp.Regexp) []string {
	t.Helper()
	ctx := testCtx(t)
	for {
		out, err := term.Output(ctx)
		if err != nil {
			t.Fatalf("Output: %v", err)
		}
		if m := re.FindStringSubmatch(out.Output); m != nil {
			return m
		}
		if out.Exit != nil {
			t.Fatalf("command exited (%s) without output matching %v: %q", out.Exit, re, out.Output)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no output matching %v: %q", re, out.Output)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func wantCode(t *testing.T, st ExitStatus, code int) {
	t.Helper()
	if st.ExitCode == nil || *st.ExitCode != code || st.Signal != nil {
		t.Fatalf("exit status %s, want exit %d", st, code)
	}
}

func wantSignal(t *testing.T, st ExitStatus, sig string) {
	t.Helper()
	if st.Signal == nil || *st.Signal != sig || st.ExitCode != nil {
		t.Fatalf("exit status %s, want signal %s", st, sig)
	}
}

// processGone reports whether pid no longer exists or is a zombie.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return runtime.GOOS == "linux"
	}
	// "pid (comm) state ...": the state follows the last parenthesis.
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] == 'Z' || b[i+2] == 'X'
	}
	return false
}

func processGroup(t *testing.T, pid int) int {
	t.Helper()
	pg, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatalf("process %d: %v", pid, err)
	}
	return pg
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	ctx := testCtx(t)
	for !processGone(pid) {
		select {
		case <-ctx.Done():
			t.Fatalf("process %d still alive", pid)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestExitCode(t *testing.T) {
	m := newTestManager(t, 0)
	for _, code := range []int{0, 1, 3, 255} {
		term := mustStart(t, m, shell(fmt.Sprintf("exit %d", code)))
		wantCode(t, mustWait(t, term), code)
		out := mustOutput(t, term)
		if out.Exit == nil {
			t.Fatal("Output.Exit is nil after WaitForExit")
		}
		wantCode(t, *out.Exit, code)
		if err := term.Release(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestExitSignal(t *testing.T) {
	m := newTestManager(t, 0)
	for _, sig := range []string{"TERM", "KILL", "INT"} {
		term := mustStart(t, m, shell("kill -"+sig+" $$"))
		wantSignal(t, mustWait(t, term), "SIG"+sig)
	}
}

func TestOutputWhileRunningHasNoExit(t *testing.T) {
	m := newTestManager(t, 0)
	term := mustStart(t, m, shell("echo ready; exec sleep 999"))
	waitForOutput(t, term, regexp.MustCompile(`ready\n`))
	if out := mustOutput(t, term); out.Exit != nil {
		t.Fatalf("Exit = %s while running", out.Exit)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := term.WaitForExit(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitForExit with cancelled ctx: %v", err)
	}
}

func TestRawLineEndings(t *testing.T) {
	m := newTestManager(t, 0)
	term := mustStart(t, m, Spec{Command: "printf", Args: []string{`a\nb\r\nc`}})
	mustWait(t, term)
	if got := mustOutput(t, term).Output; got != "a\nb\r\nc" {
		t.Fatalf("output %q, want %q (no ONLCR translation)", got, "a\nb\r\nc")
	}
}

func TestNoShell(t *testing.T) {
	m := newTestManager(t, 0)
	term := mustStart(t, m, Spec{Command: "echo", Args: []string{"$HOME", "a;b", "`x`", "*"}})
	wantCode(t, mustWait(t, term), 0)
	if got, want := mustOutput(t, term).Output, "$HOME a;b `x` *\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

func TestKillTerminates(t *testing.T) {
	m := newTestManager(t, 0)
	term := mustStart(t, m, shell("echo hello; exec sleep 999"))
	waitForOutput(t, term, regexp.MustCompile(`hello\n`))
	if err := term.Kill(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	wantSignal(t, mustWait(t, term), "SIGTERM")
	out := mustOutput(t, term)
	if out.Output != "hello\n" || out.Exit == nil {
		t.Fatalf("after Kill: %+v", out)
	}
	wantSignal(t, *out.Exit, "SIGTERM")
	if err := term.Kill(testCtx(t)); err != nil {
		t.Fatalf("second Kill: %v", err)
	}
}

func TestKillEscalatesToSIGKILL(t *testing.T) {
	m := newTestManager(t, 50*time.Millisecond)
	// The ignored SIGTERM is inherited by sleep as well.
	term := mustStart(t, m, shell(`trap "" TERM; echo ready; while :; do sleep 1; done`))
	waitForOutput(t, term, regexp.MustCompile(`ready\n`))
	if err := term.Kill(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	wantSignal(t, mustWait(t, term), "SIGKILL")
}

func TestKillCancelledContextEscalates(t *testing.T) {
	m := newTestManager(t, time.Hour)
	term := mustStart(t, m, shell(`trap "" TERM; echo ready; while :; do sleep 1; done`))
	waitForOutput(t, term, regexp.MustCompile(`ready\n`))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Kill returns ctx.Err() unless the command happened to be reaped
	// already.
	if err := term.Kill(ctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Kill with cancelled ctx: %v", err)
	}
	// Despite the hour-long grace period the group got SIGKILL.
	wantSignal(t, mustWait(t, term), "SIGKILL")
}

var pidsRe = regexp.MustCompile(`a=(\d+)\nb=(\d+)\n`)

func TestKillWholeProcessGroup(t *testing.T) {
	m := newTestManager(t, 0)
	term := mustStart(t, m, shell(`sleep 999 & echo "a=$!"; sleep 999 & echo "b=$!"; wait`))
	match := waitForOutput(t, term, pidsRe)
	pgid := term.(*ptyTerminal).pid
	pids := []int{atoi(t, match[1]), atoi(t, match[2])}
	for _, pid := range pids {
		if processGone(pid) || processGroup(t, pid) != pgid {
			t.Fatalf("grandchild %d not running in group %d", pid, pgid)
		}
	}
	if err := term.Kill(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	wantSignal(t, mustWait(t, term), "SIGTERM")
	for _, pid := range pids {
		waitGone(t, pid)
	}
}

func TestLingeringGrandchildDoesNotBlockWait(t *testing.T) {
	m := newTestManager(t, 0)
	// The grandchild ignores the hangup when its session leader exits and
	// keeps the PTY open.
	term := mustStart(t, m, shell(`trap "" HUP; sleep 999 & echo "pid=$!"; exit 0`))
	wantCode(t, mustWait(t, term), 0)
	out := mustOutput(t, term)
	match := regexp.MustCompile(`^pid=(\d+)\n$`).FindStringSubmatch(out.Output)
	if match == nil {
		t.Fatalf("output %q", out.Output)
	}
	pid := atoi(t, match[1])
	if processGone(pid) {
		t.Fatalf("grandchild %d is gone; the test did not exercise a lingering process", pid)
	}
	if err := term.Release(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

func TestFastExitOutputNeverLost(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	m := newTestManager(t, 0)
	for i := range *flagLoops {
		term := mustStart(t, m, shell("printf x; exit 3"))
		wantCode(t, mustWait(t, term), 3)
		if out := mustOutput(t, term); out.Output != "x" || out.Truncated {
			t.Fatalf("iteration %d: output %q truncated=%v, want %q", i, out.Output, out.Truncated, "x")
		}
		if err := term.Release(testCtx(t)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOutputTailAtCharacterBoundary(t *testing.T) {
	m := newTestManager(t, 0)
	full := strings.Repeat("aé€😀", 50)
	for _, limit := range []int{1, 2, 5, 101, 102, 103, 104, len(full) - 1} {
		term := mustStart(t, m, Spec{Command: "printf", Args: []string{"%s", full}, OutputByteLimit: int64(limit)})
		wantCode(t, mustWait(t, term), 0)
		out := mustOutput(t, term)
		cut := len(full) - limit
		for cut < len(full) && !utf8.RuneStart(full[cut]) {
			cut++
		}
		if want := full[cut:]; out.Output != want || !out.Truncated {
			t.Errorf("limit %d: output %q truncated=%v, want %q truncated", limit, out.Output, out.Truncated, want)
		}
	}
	term := mustStart(t, m, Spec{Command: "printf", Args: []string{"%s", full}, OutputByteLimit: int64(len(full))})
	mustWait(t, term)
	if out := mustOutput(t, term); out.Output != full || out.Truncated {
		t.Errorf("limit = size: output %q truncated=%v", out.Output, out.Truncated)
	}
}

func TestOutputMemoryBounded(t *testing.T) {
	const limit = 1 << 20
	m := newTestManager(t, 0)
	runtime.GC()
	term := mustStart(t, m, Spec{Command: "yes", OutputByteLimit: limit})
	var peak uint64
	var ms runtime.MemStats
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	out := mustOutput(t, term)
	if out.Exit != nil {
		t.Fatalf("yes exited: %s", out.Exit)
	}
	if len(out.Output) > limit || !out.Truncated {
		t.Fatalf("retained %d bytes (limit %d), truncated=%v", len(out.Output), limit, out.Truncated)
	}
	if strings.Trim(out.Output, "y\n") != "" {
		t.Fatalf("unexpected output content")
	}
	if bound := uint64(limit*8 + 16<<20); peak > bound {
		t.Fatalf("heap in use peaked at %d bytes, bound %d", peak, bound)
	}
	t.Logf("retained %d bytes, peak HeapInuse %d", len(out.Output), peak)
	if err := term.Release(testCtx(t)); err != nil {
		t.Fatal(err)
	}
}

func TestStdin(t *testing.T) {
	m := newTestManager(t, 0)
	const script = `if [ -t 0 ]; then echo in=tty; else echo in=other; fi; if [ -t 1 ]; then echo out=tty; fi; if [ -t 2 ]; then echo err=tty; fi`

	term := mustStart(t, m, shell(script))
	mustWait(t, term)
	if got := mustOutput(t, term).Output; got != "in=tty\nout=tty\nerr=tty\n" {
		t.Errorf("default stdin: %q", got)
	}

	spec := shell(script + `; cat; echo cat=$?`)
	spec.StdinEOF = true
	term = mustStart(t, m, spec)
	wantCode(t, mustWait(t, term), 0)
	if got := mustOutput(t, term).Output; got != "in=other\nout=tty\nerr=tty\ncat=0\n" {
		t.Errorf("StdinEOF: %q", got)
	}
}

func TestNoFileDescriptorLeak(t *testing.T) {
	// Descriptors the test process holds must not reach the child.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Like a descriptor inherited from the daemon's parent: no CLOEXEC.
	inherited, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(inherited)

	m := newTestManager(t, 0)
	for _, stdinEOF := range []bool{false, true} {
		term := mustStart(t, m, Spec{Command: "ls", Args: []string{"/proc/self/fd"}, StdinEOF: stdinEOF})
		wantCode(t, mustWait(t, term), 0)
		fds := strings.Fields(mustOutput(t, term).Output)
		slices.Sort(fds)
		// ls itself opens one descriptor (3) to read the directory.
		if !slices.Equal(fds, []string{"0", "1", "2", "3"}) {
			t.Errorf("StdinEOF=%v: child descriptors %q, want 0 1 2 (+3 for ls)", stdinEOF, fds)
		}
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("ACPD_TERMTEST_API_KEY", "s3cret-value")
	t.Setenv("ACPD_TERMTEST_PLAIN", "plain-value")
	t.Setenv("TERM", "") // restored after the test
	os.Unsetenv("TERM")
	m := newTestManager(t, 0)

	term := mustStart(t, m, Spec{Command: "env", Env: []EnvVar{{Name: "ACPD_TERMTEST_OVERRIDE", Value: "x"}}})
	wantCode(t, mustWait(t, term), 0)
	lines := strings.Split(mustOutput(t, term).Output, "\n")
	for _, want := range []string{"ACPD_TERMTEST_PLAIN=plain-value", "ACPD_TERMTEST_OVERRIDE=x", "TERM=" + defaultTerm} {
		if !slices.Contains(lines, want) {
			t.Errorf("environment lacks %q: %q", want, lines)
		}
	}
	for _, l := range lines {
		if strings.Contains(l, "s3cret-value") {
			t.Errorf("secret leaked into the child environment: %q", l)
		}
	}

	term = mustStart(t, m, Spec{
		Command: "/usr/bin/env",
		BaseEnv: []string{"FOO=base", "KEEP=1", "TERM=dumb", "ACPD_TERMTEST_API_KEY=explicit"},
		Env:     []EnvVar{{Name: "FOO", Value: "over"}, {Name: "BAR", Value: "x"}},
	})
	wantCode(t, mustWait(t, term), 0)
	got := strings.Split(strings.TrimSuffix(mustOutput(t, term).Output, "\n"), "\n")
	slices.Sort(got)
	want := []string{"ACPD_TERMTEST_API_KEY=explicit", "BAR=x", "FOO=over", "KEEP=1", "TERM=dumb"}
	if !slices.Equal(got, want) {
		t.Errorf("BaseEnv environment %q, want %q", got, want)
	}
}

func TestCwd(t *testing.T) {
	m := newTestManager(t, 0)
	dir := t.TempDir()
	term := mustStart(t, m, Spec{Command: "pwd", Cwd: dir})
	wantCode(t, mustWait(t, term), 0)
	want, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := mustOutput(t, term).Output; got != want+"\n" {
		t.Fatalf("pwd printed %q, want %q", got, want)
	}

	// A command with a slash is relative to Cwd.
	script := filepath.Join(dir, "hello.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho from-script\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	term = mustStart(t, m, Spec{Command: "./hello.sh", Cwd: dir})
	wantCode(t, mustWait(t, term), 0)
	if got := mustOutput(t, term).Output; got != "from-script\n" {
		t.Fatalf("./hello.sh printed %q", got)
	}
}

func TestStartErrors(t *testing.T) {
	m := newTestManager(t, 0)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		spec Spec
		is   error
	}{
		{"empty command", context.Background(), Spec{}, nil},
		{"not found", context.Background(), Spec{Command: "acpd-no-such-command"}, exec.ErrNotFound},
		{"not found in explicit PATH", context.Background(), Spec{Command: "sh", BaseEnv: []string{"PATH=/nonexistent"}}, exec.ErrNotFound},
		{"not executable", context.Background(), Spec{Command: file}, nil},
		{"relative cwd", context.Background(), Spec{Command: "true", Cwd: "relative"}, nil},
		{"missing cwd", context.Background(), Spec{Command: "true", Cwd: filepath.Join(dir, "missing")}, os.ErrNotExist},
		{"cwd is a file", context.Background(), Spec{Command: "true", Cwd: file}, nil},
		{"negative limit", context.Background(), Spec{Command: "true", OutputByteLimit: -1}, nil},
		{"bad env name", context.Background(), Spec{Command: "true", Env: []EnvVar{{Name: "A=B"}}}, nil},
		{"cancelled", cancelled, Spec{Command: "true"}, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			term, err := m.Start(tt.ctx, tt.spec)
			if err == nil {
				term.Release(context.Background())
				t.Fatal("Start succeeded")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Fatalf("error %v, want %v", err, tt.is)
			}
		})
	}
}

func TestRelease(t *testing.T) {
	m := newTestManager(t, 0)
	term := mustStart(t, m, shell(`echo "pid=$$"; exec sleep 999`))
	pid := atoi(t, waitForOutput(t, term, regexp.MustCompile(`pid=(\d+)\n`))[1])
	if got, ok := m.Get(term.ID()); !ok || got != term {
		t.Fatalf("Get(%q) = %v, %v", term.ID(), got, ok)
	}
	if err := term.Release(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	if _, ok := m.Get(term.ID()); ok {
		t.Error("Get finds a released terminal")
	}
	ctx := testCtx(t)
	if _, err := term.Output(ctx); !errors.Is(err, ErrReleased) {
		t.Errorf("Output after Release: %v", err)
	}
	if _, err := term.WaitForExit(ctx); !errors.Is(err, ErrReleased) {
		t.Errorf("WaitForExit after Release: %v", err)
	}
	if err := term.Kill(ctx); !errors.Is(err, ErrReleased) {
		t.Errorf("Kill after Release: %v", err)
	}
	if err := term.Release(ctx); !errors.Is(err, ErrReleased) {
		t.Errorf("Release after Release: %v", err)
	}
	if pt := term.(*ptyTerminal); pt.buf != nil {
		t.Error("output buffer not freed")
	}
}

func TestManagerClose(t *testing.T) {
	m := NewManager(ManagerOptions{})
	var terms []Terminal
	var pids []int
	for range 3 {
		term := mustStart(t, m, shell(`echo "pid=$$"; exec sleep 999`))
		pids = append(pids, atoi(t, waitForOutput(t, term, regexp.MustCompile(`pid=(\d+)\n`))[1]))
		terms = append(terms, term)
	}
	// A finished terminal whose grandchild lingers is cleaned up too.
	lingering := mustStart(t, m, shell(`trap "" HUP; sleep 999 & echo "pid=$!"; exit 0`))
	mustWait(t, lingering)
	grandchild := atoi(t, regexp.MustCompile(`pid=(\d+)`).FindStringSubmatch(mustOutput(t, lingering).Output)[1])

	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for i, term := range terms {
		// Close has reaped the command: the status is there at once.
		out := mustOutput(t, term)
		if out.Exit == nil {
			t.Fatalf("terminal %d: no exit status after Close", i)
		}
		wantSignal(t, *out.Exit, "SIGTERM")
		if _, ok := m.Get(term.ID()); ok {
			t.Errorf("Get finds terminal %d after Close", i)
		}
		waitGone(t, pids[i])
	}
	waitGone(t, grandchild)
	if _, err := m.Start(testCtx(t), Spec{Command: "true"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	m := newTestManager(t, 0)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			term, err := m.Start(testCtx(t), shell(`while :; do echo tick; sleep 0.01; done`))
			if err != nil {
				t.Error(err)
				return
			}
			var readers sync.WaitGroup
			for range 4 {
				readers.Go(func() {
					for {
						if _, err := term.Output(context.Background()); err != nil {
							if !errors.Is(err, ErrReleased) {
								t.Error(err)
							}
							return
						}
						runtime.Gosched()
					}
				})
			}
			readers.Go(func() {
				if _, err := term.WaitForExit(testCtx(t)); err != nil && !errors.Is(err, ErrReleased) {
					t.Error(err)
				}
			})
			readers.Go(func() {
				if err := term.Kill(testCtx(t)); err != nil && !errors.Is(err, ErrReleased) {
					t.Error(err)
				}
			})
			if err := term.Release(testCtx(t)); err != nil {
				t.Error(err)
			}
			readers.Wait()
		})
	}
	wg.Wait()
}

// Spec.Tee gets the whole output, byte for byte, before WaitForExit
// returns, while the terminal keeps only the tail.
func TestTeeGetsWholeOutput(t *testing.T) {
	m := newTestManager(t, 0)
	var tee bytes.Buffer // written by the reader only, read after WaitForExit
	term := mustStart(t, m, Spec{Command: "seq", Args: []string{"-w", "1", "200000"}, OutputByteLimit: 1 << 20, Tee: &tee})
	wantCode(t, mustWait(t, term), 0)
	want, err := exec.Command("seq", "-w", "1", "200000").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(tee.Bytes(), want) {
		t.Fatalf("the tee got %d bytes, want the %d of the output", tee.Len(), len(want))
	}
	out := mustOutput(t, term)
	if !out.Truncated || len(out.Output) != 1<<20 || !strings.HasSuffix(string(want), out.Output) {
		t.Fatalf("retained %d bytes, truncated=%v", len(out.Output), out.Truncated)
	}
}
