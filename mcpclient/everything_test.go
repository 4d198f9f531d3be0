package mcpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"acpd/internal/testpeers"
)

// everything returns the node binary and server-everything's entry point.
func everything(t *testing.T) (node, entry string) { return testpeers.Everything(t) }

func testLogger() *slog.Logger {
	return slog.New(log.NewWithOptions(os.Stderr, log.Options{Level: log.WarnLevel}))
}

// baseEnv is a minimal environment for stdio servers in tests.
func baseEnv(node string) []string {
	return []string{"PATH=" + filepath.Dir(node) + string(filepath.ListSeparator) + "/usr/bin:/bin"}
}

func newTestManager(t *testing.T, opts Options) *Manager {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger()
	}
	m := NewManager(opts)
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Logf("Close: %v", err)
		}
	})
	return m
}

func startOK(t *testing.T, m *Manager, servers ...Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if errs := m.Start(ctx, servers); len(errs) > 0 {
		t.Fatalf("Start: %v", errs)
	}
}

func findTool(tools []Tool, qualified string) (Tool, bool) {
	for _, tl := range tools {
		if tl.QualifiedName == qualified {
			return tl, true
		}
	}
	return Tool{}, false
}

func call(t *testing.T, m *Manager, name, args string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := m.Call(ctx, name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("Call(%s, %s): %v", name, args, err)
	}
	return res
}

func stdioEverything(name, node, entry string) Server {
	return Server{Name: name, Command: "node", Args: []string{entry, "stdio"}, Transport: TransportStdio}
}

func TestStdioEverything(t *testing.T) {
	node, entry := everything(t)
	t.Setenv("ACPD_MCP_NOT_INHERITED", "leak")
	m := newTestManager(t, Options{BaseEnv: baseEnv(node), Dir: t.TempDir()})
	srv := stdioEverything("everything", node, entry)
	srv.Env = []string{"ACPD_MCP_TEST=from-server-env"}
	startOK(t, m, srv)

	tools := m.Tools()
	echo, ok := findTool(tools, "mcp__everything__echo")
	if !ok {
		t.Fatalf("no echo tool in %v", tools)
	}
	if echo.Server != "everything" || echo.Name != "echo" || !echo.ReadOnly || echo.Description == "" {
		t.Errorf("echo tool = %+v", echo)
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(echo.InputSchema, &schema); err != nil || schema.Type != "object" || schema.Properties["message"] == nil {
		t.Errorf("echo schema = %s (%v)", echo.InputSchema, err)
	}
	if _, ok := findTool(tools, "mcp__everything__get-sum"); !ok {
		t.Errorf("no get-sum tool")
	}

	if res := call(t, m, "mcp__everything__echo", `{"message":"hi there"}`); res.Text != "Echo: hi there" || res.IsError {
		t.Errorf("echo = %+v", res)
	}
	if res := call(t, m, "mcp__everything__get-sum", `{"a":2,"b":3}`); !strings.Contains(res.Text, "is 5") {
		t.Errorf("get-sum = %+v", res)
	}

	// Invalid arguments: the server reports a tool error or a protocol error.
	ctx := context.Background()
	if res, err := m.Call(ctx, "mcp__everything__get-sum", json.RawMessage(`{"a":"two"}`)); err == nil && !res.IsError {
		t.Errorf("invalid args gave %+v", res)
	}
	if _, err := m.Call(ctx, "mcp__everything__echo", json.RawMessage(`["not","an","object"]`)); err == nil {
		t.Error("non-object arguments accepted")
	}
	if _, err := m.Call(ctx, "mcp__everything__nope", nil); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("unknown tool: %v", err)
	}

	// The environment is BaseEnv plus the server's Env, nothing inherited.
	env := call(t, m, "mcp__everything__get-env", ``).Text
	if !strings.Contains(env, "from-server-env") {
		t.Errorf("server Env missing from child environment")
	}
	if strings.Contains(env, "ACPD_MCP_NOT_INHERITED") {
		t.Errorf("process environment leaked into the server")
	}
}

func TestCancelLongRunning(t *testing.T) {
	node, entry := everything(t)
	m := newTestManager(t, Options{BaseEnv: baseEnv(node)})
	startOK(t, m, stdioEverything("everything", node, entry))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	running := make(chan struct{})
	var once sync.Once
	go func() {
		// An hour-long operation: only cancellation ends this call in time.
		// Its first progress (after a second) says it reached the server.
		_, err := m.CallTool(ctx, "mcp__everything__trigger-long-running-operation", json.RawMessage(`{"duration":3600,"steps":3600}`),
			CallOptions{OnProgress: func(Progress) { once.Do(func() { close(running) }) }})
		done <- err
	}()
	select {
	case <-running:
	case err := <-done:
		t.Fatalf("the long call ended before the cancel: %v", err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled call returned %v", err)
	}
	// The session survives a canceled call.
	if res := call(t, m, "mcp__everything__echo", `{"message":"still here"}`); res.Text != "Echo: still here" {
		t.Errorf("echo after cancel = %+v", res)
	}
}

func TestStartFailuresAreIsolated(t *testing.T) {
	node, entry := everything(t)
	m := newTestManager(t, Options{BaseEnv: baseEnv(node)})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := m.Start(ctx, []Server{
		{Name: "missing", Command: "acpd-no-such-mcp-server"},
		stdioEverything("good", node, entry),
		{Name: "crashes", Command: "node", Args: []string{"-e", "console.error('boom: bad config'); process.exit(3)"}},
		{Name: "", Command: "node"},
		{Name: "badurl", URL: "file:///etc/passwd", Transport: TransportHTTP},
		{Name: "badheader", URL: "http://127.0.0.1:1/mcp", Transport: TransportHTTP, Headers: map[string]string{"X": "a\r\nInjected: 1"}},
		{Name: "badenv", Command: "node", Env: []string{"NOEQUALS"}},
		{Name: "weird", Command: "node", Transport: "websocket"},
		{Name: "good", Command: "node"},
	})
	if len(errs) != 8 {
		t.Fatalf("Start returned %d errors, want 8: %v", len(errs), errs)
	}
	joined := errors.Join(errs...).Error()
	for _, want := range []string{`"missing"`, "not found", `"crashes"`, "boom: bad config", "empty server name",
		`"badurl"`, `"badheader"`, `"badenv"`, "unsupported transport", "duplicate server name"} {
		if !strings.Contains(joined, want) {
			t.Errorf("errors lack %q: %s", want, joined)
		}
	}
	if res := call(t, m, "mcp__good__echo", `{"message":"ok"}`); res.Text != "Echo: ok" {
		t.Errorf("echo = %+v", res)
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// serveEverything runs server-everything with an HTTP transport until the
// test ends and returns its base URL.
func serveEverything(t *testing.T, transport string) string {
	t.Helper()
	node, entry := everything(t)
	port := freePort(t)
	cmd := exec.Command(node, entry, transport)
	cmd.Env = append(baseEnv(node), "PORT="+strconv.Itoa(port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan bool, 1)
	scanDone := make(chan struct{})
	go func() {
		defer close(scanDone)
		sc := bufio.NewScanner(stderr)
		signaled := false
		for sc.Scan() {
			line := sc.Text()
			if !signaled && (strings.Contains(line, "listening on port") || strings.Contains(line, "running on port")) {
				ready <- true
				signaled = true
			}
		}
		if !signaled {
			ready <- false
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-scanDone
		_ = cmd.Wait()
	})
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("server-everything %s exited before listening", transport)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("server-everything %s did not start listening", transport)
	}
	return "http://127.0.0.1:" + strconv.Itoa(port)
}

func TestHTTPTransports(t *testing.T) {
	for _, tc := range []struct{ transport, arg, path string }{
		{TransportHTTP, "streamableHttp", "/mcp"},
		{TransportSSE, "sse", "/sse"},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			base := serveEverything(t, tc.arg)
			m := newTestManager(t, Options{})
			startOK(t, m, Server{Name: "remote", URL: base + tc.path, Transport: tc.transport,
				Headers: map[string]string{"X-Acpd-Test": "1"}})
			if _, ok := findTool(m.Tools(), "mcp__remote__get-sum"); !ok {
				t.Fatalf("no get-sum in %v", m.Tools())
			}
			if res := call(t, m, "mcp__remote__echo", `{"message":"over `+tc.transport+`"}`); res.Text != "Echo: over "+tc.transport {
				t.Errorf("echo = %+v", res)
			}
			if err := m.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if _, err := m.Call(context.Background(), "mcp__remote__echo", nil); !errors.Is(err, ErrClosed) {
				t.Errorf("Call after Close: %v", err)
			}
		})
	}
}

// children lists the PIDs whose parent is this process, zombies included.
// waitFor waits for cond, which the test cannot be told of otherwise (a
// state of a server or of the file it logs to), checking every few
// milliseconds for at most 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func children(t *testing.T) []int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("process table inspection needs /proc")
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	self := os.Getpid()
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may contain spaces.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == self {
			pid, _ := strconv.Atoi(strings.Fields(s)[0])
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

func TestCloseReapsChildren(t *testing.T) {
	node, entry := everything(t)
	before := children(t)
	m := NewManager(Options{BaseEnv: baseEnv(node), Logger: testLogger()})
	startOK(t, m, stdioEverything("a", node, entry), stdioEverything("b", node, entry))
	if len(children(t)) < len(before)+2 {
		t.Fatalf("expected two server processes, children: %v (before %v)", children(t), before)
	}
	if err := m.Close(); err != nil {
		t.Logf("Close: %v", err) // an exit status after SIGTERM is fine
	}
	if after := children(t); !slices.Equal(after, before) {
		t.Errorf("children after Close = %v, want %v", after, before)
	}
	if errs := m.Start(context.Background(), []Server{stdioEverything("c", node, entry)}); len(errs) != 1 || !errors.Is(errs[0], ErrClosed) {
		t.Errorf("Start after Close = %v", errs)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestUnresponsiveServer(t *testing.T) {
	node, _ := everything(t)
	before := children(t)
	// A server that never answers initialize.
	silent := Server{Name: "silent", Command: "node", Args: []string{"-e", "setInterval(() => {}, 1000)"}}

	m := newTestManager(t, Options{BaseEnv: baseEnv(node)})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if errs := m.Start(ctx, []Server{silent}); len(errs) != 1 || !errors.Is(errs[0], context.DeadlineExceeded) {
		t.Errorf("Start = %v, want a deadline error", errs)
	}
	if after := children(t); !slices.Equal(after, before) {
		t.Errorf("children after failed Start = %v, want %v", after, before)
	}

	// Close while Start is connecting ends the Start.
	m2 := NewManager(Options{BaseEnv: baseEnv(node), Logger: testLogger()})
	got := make(chan []error, 1)
	go func() { got <- m2.Start(context.Background(), []Server{silent}) }()
	waitFor(t, "the silent server's process", func() bool { return len(children(t)) > len(before) })
	if err := m2.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if errs := <-got; len(errs) != 1 {
		t.Errorf("Start during Close = %v, want one error", errs)
	}
	if after := children(t); !slices.Equal(after, before) {
		t.Errorf("children after Close = %v, want %v", after, before)
	}
}
