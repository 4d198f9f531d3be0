//go:build unix

package mcpclient

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// badServer returns a stdio Server running testdata/badserver.py in mode,
// logging the methods it receives to the returned file.
func badServer(t *testing.T, name, mode string) (Server, string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	script, err := filepath.Abs("testdata/badserver.py")
	if err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(t.TempDir(), "methods.log")
	return Server{Name: name, Command: py, Args: []string{script, mode, logFile}}, logFile
}

// badServerB is badServer in "ok" mode for benchmarks.
func badServerB(b *testing.B, name string) (Server, string) {
	b.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("python3 not found")
	}
	script, err := filepath.Abs("testdata/badserver.py")
	if err != nil {
		b.Fatal(err)
	}
	return Server{Name: name, Command: py, Args: []string{script, "ok"}}, ""
}

func methods(t *testing.T, logFile string) []string {
	t.Helper()
	b, err := os.ReadFile(logFile)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func statusOf(m *Manager, name string) ServerStatus {
	for _, s := range m.Status() {
		if s.Name == name {
			return s
		}
	}
	return ServerStatus{}
}

// noNewChildren fails when processes started by the test outlive it.
func noNewChildren(t *testing.T, before []int) {
	t.Helper()
	if after := children(t); !slices.Equal(after, before) {
		t.Errorf("children = %v, want %v (zombies or leftover servers)", after, before)
	}
}

// TestNeverAnswersDoesNotHoldBack: a server that never answers its
// handshake delays Wait by the grace only; the good server's tools are
// there, and the silent one goes down with a reason once the connect
// timeout passes.
func TestNeverAnswersDoesNotHoldBack(t *testing.T) {
	before := children(t)
	silent, _ := badServer(t, "silent", "hang")
	good, _ := badServer(t, "good", "ok")
	m := NewManager(Options{Logger: testLogger(), ConnectTimeout: 5 * time.Second})
	start := time.Now()
	if errs := m.Add([]Server{silent, good}); len(errs) > 0 {
		t.Fatal(errs)
	}
	added := time.Since(start)
	m.Wait(context.Background(), DefaultGrace)
	waited := time.Since(start)
	t.Logf("Add took %v, Wait (grace %v) returned after %v", added, DefaultGrace, waited)
	if st := statusOf(m, "good"); st.State != StateReady || st.Tools != 4 {
		t.Errorf("good = %+v, want ready with 4 tools", st)
	}
	if st := statusOf(m, "silent"); st.State != StateStarting {
		t.Errorf("silent = %+v, want starting", st)
	}
	if _, ok := findTool(m.Tools(), "mcp__good__echo"); !ok {
		t.Errorf("tools = %v", toolNames(m))
	}
	// Wait returns at once when nothing is pending any more.
	deadline := time.Now().Add(20 * time.Second)
	for statusOf(m, "silent").State == StateStarting && time.Now().Before(deadline) {
		m.Wait(context.Background(), time.Second)
	}
	st := statusOf(m, "silent")
	if st.State != StateDown || !strings.Contains(st.Err, "no answer to the MCP handshake") {
		t.Errorf("silent = %+v, want down for not answering", st)
	}
	if err := m.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	noNewChildren(t, before)
}

// TestDiesOnDiscover: a legacy server that exits on server/discover is
// respawned and connected with initialize; the verdict is remembered in the
// state dir, so the next Manager goes straight to initialize.
func TestDiesOnDiscover(t *testing.T) {
	before := children(t)
	state := t.TempDir()
	s, logFile := badServer(t, "old", "legacy")

	m := newTestManager(t, Options{StateDir: state})
	start := time.Now()
	startOK(t, m, s)
	t.Logf("connected a server that dies on discover in %v", time.Since(start))
	if got := methods(t, logFile); len(got) < 2 || got[0] != "server/discover" || got[1] != "initialize" {
		t.Errorf("methods = %v, want server/discover, then initialize after the respawn", got)
	}
	if st := statusOf(m, "old"); st.ProtocolVersion != "2025-06-18" || st.State != StateReady {
		t.Errorf("status = %+v", st)
	}
	if res := call(t, m, "mcp__old__echo", `{"text":"hi"}`); res.Text != "hi" {
		t.Errorf("echo = %+v", res)
	}
	if _, err := os.Stat(filepath.Join(state, eraFile)); err != nil {
		t.Fatalf("verdict not stored: %v", err)
	}
	m.Close()

	os.Remove(logFile)
	m2 := newTestManager(t, Options{StateDir: state})
	start = time.Now()
	startOK(t, m2, s)
	t.Logf("with the remembered verdict: connected in %v", time.Since(start))
	if got := methods(t, logFile); len(got) == 0 || got[0] != "initialize" {
		t.Errorf("second session methods = %v, want initialize first", got)
	}
	m2.Close()

	// Pinning the stateless era overrides the verdict: the server dies.
	os.Remove(logFile)
	pinned := s
	pinned.ProtocolVersion = ProtocolStateless
	m3 := newTestManager(t, Options{StateDir: state})
	errs := m3.Start(context.Background(), []Server{pinned})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "exited with status 1") || !strings.Contains(errs[0].Error(), "unknown method server/discover") {
		t.Errorf("pinned errors = %v", errs)
	}
	m3.Close()
	noNewChildren(t, before)
}

// TestJunkOnStdout: banners and log lines on stdout are skipped; JSON that
// is not JSON-RPC still fails the connection.
func TestJunkOnStdout(t *testing.T) {
	before := children(t)
	junk, _ := badServer(t, "junk", "junk")
	m := newTestManager(t, Options{})
	startOK(t, m, junk)
	for i := range 3 {
		if res := call(t, m, "mcp__junk__echo", `{"text":"`+strconv.Itoa(i)+`"}`); res.Text != strconv.Itoa(i) {
			t.Errorf("echo = %+v", res)
		}
	}
	bad, _ := badServer(t, "bad", "notjsonrpc")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if errs := m.Start(ctx, []Server{bad}); len(errs) != 1 || errors.Is(errs[0], context.DeadlineExceeded) {
		t.Errorf("non-JSON-RPC server: errors = %v, want a protocol error", errs)
	}
	m.Close()
	noNewChildren(t, before)
}

// TestExitsImmediately: the reason (exit status and stderr) is reported.
func TestExitsImmediately(t *testing.T) {
	before := children(t)
	s, _ := badServer(t, "gone", "exit")
	m := newTestManager(t, Options{})
	start := time.Now()
	m.Add([]Server{s})
	m.Wait(context.Background(), 5*time.Second)
	t.Logf("settled after %v", time.Since(start))
	st := statusOf(m, "gone")
	if st.State != StateDown || !strings.Contains(st.Err, "exited with status 2") || !strings.Contains(st.Err, "missing configuration file") {
		t.Errorf("status = %+v", st)
	}
	if _, err := m.Call(context.Background(), "mcp__gone__echo", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("Call = %v", err)
	}
	m.Close()
	noNewChildren(t, before)
}

// TestKilledMidCall: a SIGKILLed server fails the running call at once with
// the reason, keeps its tools listed, and is restarted on the next call;
// after too many restarts it stays down.
func TestKilledMidCall(t *testing.T) {
	before := children(t)
	s, _ := badServer(t, "victim", "ok")
	m := newTestManager(t, Options{restartBase: 20 * time.Millisecond})
	startOK(t, m, s)

	pid, _ := strconv.Atoi(call(t, m, "mcp__victim__pid", `{}`).Text)
	done := make(chan error, 1)
	sleeping := make(chan struct{})
	var once sync.Once
	go func() {
		_, err := m.CallTool(context.Background(), "mcp__victim__sleep", []byte(`{"seconds":60,"announce":true}`), CallOptions{OnProgress: func(Progress) {
			once.Do(func() { close(sleeping) })
		}})
		done <- err
	}()
	select {
	case <-sleeping: // the server is in the call
	case err := <-done:
		t.Fatalf("the sleep call ended before the kill: %v", err)
	}
	killed := time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Logf("the call failed %v after the kill: %v", time.Since(killed), err)
		if err == nil || !strings.Contains(err.Error(), "killed") {
			t.Errorf("call error = %v, want it to say the server was killed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not fail after the server was killed")
	}
	waitFor(t, "the killed server to restart", func() bool { return statusOf(m, "victim").State == StateRestarting })
	if _, ok := findTool(m.Tools(), "mcp__victim__echo"); !ok {
		t.Errorf("tools while restarting = %v", toolNames(m))
	}
	restarted := time.Now()
	if res := call(t, m, "mcp__victim__echo", `{"text":"back"}`); res.Text != "back" {
		t.Errorf("echo after restart = %+v", res)
	}
	t.Logf("restart on next use took %v", time.Since(restarted))

	// Five more deaths: the four restarts left are used up, and the use
	// after the last death puts it down.
	for range 5 {
		pid, _ := strconv.Atoi(call(t, m, "mcp__victim__pid", `{}`).Text)
		syscall.Kill(pid, syscall.SIGKILL)
		waitFor(t, "the killed server to restart", func() bool { return statusOf(m, "victim").State == StateRestarting })
	}
	_, err := m.Call(context.Background(), "mcp__victim__echo", nil)
	if !errors.Is(err, ErrUnavailable) && !errors.Is(err, ErrUnknownTool) {
		t.Errorf("call after too many restarts = %v", err)
	}
	st := statusOf(m, "victim")
	if st.State != StateDown || !strings.Contains(st.Err, "restarts") || st.Tools != 0 {
		t.Errorf("status = %+v", st)
	}
	m.Close()
	noNewChildren(t, before)
}

// TestCallTimeout: a call without progress fails after CallTimeout and the
// server is told (notifications/cancelled); progress extends the limit.
func TestCallTimeout(t *testing.T) {
	before := children(t)
	s, logFile := badServer(t, "slow", "ok")
	m := newTestManager(t, Options{CallTimeout: 300 * time.Millisecond, ProgressCallTimeout: 20 * time.Second})
	startOK(t, m, s)
	start := time.Now()
	_, err := m.Call(context.Background(), "mcp__slow__sleep", []byte(`{"seconds":0.6}`))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	t.Logf("timed out after %v: %v", time.Since(start), err)
	// The server is single-threaded: it reads (and logs) the cancellation
	// once its sleep is over, and only then answers the next call.
	waitFor(t, "notifications/cancelled in the server's log", func() bool {
		return slices.Contains(methods(t, logFile), "notifications/cancelled")
	})
	if res := call(t, m, "mcp__slow__echo", `{"text":"x"}`); res.Text != "x" {
		t.Errorf("echo = %+v", res)
	}
	if got := methods(t, logFile); !slices.Contains(got, "notifications/cancelled") {
		t.Errorf("methods = %v, want notifications/cancelled", got)
	}

	var mu sync.Mutex
	var updates []Progress
	res, err := m.CallTool(context.Background(), "mcp__slow__progress", []byte(`{"steps":40}`), CallOptions{OnProgress: func(p Progress) {
		mu.Lock()
		updates = append(updates, p)
		mu.Unlock()
	}})
	if err != nil || res.Text != "done" {
		t.Fatalf("progress call = %+v, %v (progress must extend the timeout)", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	// 40 steps of 20 ms: throttled to about ten a second, the last kept.
	if len(updates) == 0 || len(updates) > 20 || updates[len(updates)-1].Progress != 40 || updates[len(updates)-1].Message != "step 40" {
		t.Errorf("updates = %+v", updates)
	}
	m.Close()
	noNewChildren(t, before)
}
