package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"acpd/acp"
	"acpd/acp/jsonrpc"
)

// testAgentEnv makes the test binary a small ACP agent (runTestAgent) that
// behaves like claude-code-acp at the end of its input: it never exits. It
// starts a grandchild (sleep) and writes both pids into the directory the
// variable names, so tests can check that nothing outlives Close.
const testAgentEnv = "ACPD_CLIENT_TEST_AGENT"

// runTestAgent serves ACP on stdio. Prompts: "crash" exits mid-turn,
// "wait" waits for session/cancel; any other prompt is answered with
// "mode=<current mode>". ACPD_CLIENT_TEST_STUBBORN=1 ignores SIGTERM.
func runTestAgent(dir string) int {
	if os.Getenv("ACPD_CLIENT_TEST_STUBBORN") == "1" {
		signal.Ignore(syscall.SIGTERM)
	}
	sleep := exec.Command("sleep", "300")
	if err := sleep.Start(); err != nil {
		return 2
	}
	os.WriteFile(filepath.Join(dir, "pids.tmp"), fmt.Appendf(nil, "%d %d\n", os.Getpid(), sleep.Process.Pid), 0o644)
	os.Rename(filepath.Join(dir, "pids.tmp"), filepath.Join(dir, "pids"))

	var (
		mu        sync.Mutex
		mode      = "default"
		cancelled = make(chan struct{})
		conn      *jsonrpc.Conn
	)
	say := func(ctx context.Context, sid acp.SessionID, text string) {
		conn.Notify(ctx, acp.ClientMethodSessionUpdate, acp.SessionNotification{SessionID: sid, Update: acp.SessionUpdate{
			AgentMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: text}}},
		}})
	}
	modes := &acp.SessionModeState{CurrentModeID: "default", AvailableModes: []acp.SessionMode{
		{ID: "default", Name: "Default"}, {ID: "acceptEdits", Name: "Accept edits"}, {ID: "bypassPermissions", Name: "Bypass"},
	}}
	ready := make(chan struct{}) // closed once conn is set
	handler := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		<-ready
		switch method {
		case acp.AgentMethodInitialize:
			// Like codex-acp: an auth method of a type the schema lacks,
			// and a notification no client knows.
			jsonrpc.AfterReply(ctx, func() {
				conn.Notify(ctx, "_auth/status_update", map[string]string{"status": "ok"})
			})
			return json.RawMessage(`{"protocolVersion":1,"agentCapabilities":{"loadSession":true},` +
				`"authMethods":[{"type":"env_var","id":"key","name":"API key","vars":[{"name":"TEST_KEY"}]}]}`), nil
		case acp.AgentMethodSessionNew:
			return acp.NewSessionResponse{SessionID: "s1", Modes: modes}, nil
		case acp.AgentMethodSessionLoad:
			var req acp.LoadSessionRequest
			json.Unmarshal(params, &req)
			say(ctx, req.SessionID, "replayed")
			return acp.LoadSessionResponse{Modes: modes}, nil
		case acp.AgentMethodSessionSetMode:
			var req acp.SetSessionModeRequest
			json.Unmarshal(params, &req)
			mu.Lock()
			mode = string(req.ModeID)
			mu.Unlock()
			return acp.SetSessionModeResponse{}, nil
		case acp.AgentMethodSessionCancel:
			close(cancelled)
			return nil, nil
		case acp.AgentMethodSessionPrompt:
			var req acp.PromptRequest
			json.Unmarshal(params, &req)
			switch req.Prompt[0].Text.Text {
			case "crash":
				say(ctx, req.SessionID, "crashing")
				os.Exit(3)
			case "wait":
				say(ctx, req.SessionID, "waiting")
				<-cancelled
				return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
			}
			mu.Lock()
			m := mode
			mu.Unlock()
			say(ctx, req.SessionID, "mode="+m)
			return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
		}
		return nil, jsonrpc.ErrMethodNotFound(method)
	}
	conn = jsonrpc.NewConn(context.Background(), os.Stdin, os.Stdout, handler, jsonrpc.Options{
		Logger:    slog.New(slog.DiscardHandler),
		Immediate: func(m string) bool { return m == acp.AgentMethodSessionCancel },
	})
	close(ready)
	<-conn.Done()
	select {} // like claude-code-acp: the end of input is not a reason to exit
}

// testAgent returns a transport starting the test agent through `sh -c`
// (a wrapper that stays the direct child) and the directory of its pids.
func testAgent(t *testing.T, stubborn bool) (*CommandTransport, string) {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), testAgentEnv+"="+dir)
	if stubborn {
		env = append(env, "ACPD_CLIENT_TEST_STUBBORN=1")
	}
	return &CommandTransport{
		Command: []string{"sh", "-c", `"$0"; echo "agent exited $?" >&2`, exe},
		Env:     env,
		Stderr:  io.Discard,
		Grace:   200 * time.Millisecond,
	}, dir
}

// agentPids returns the pids the test agent wrote.
func agentPids(t *testing.T, dir string) []int {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "pids"))
		if err == nil {
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				n, _ := strconv.Atoi(f)
				pids = append(pids, n)
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatal("the test agent wrote no pids")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// gone reports whether pid no longer runs (a zombie waiting for a reaper
// that is not ours counts as gone), polling up to testWait.
func gone(pid int) bool {
	deadline := time.Now().Add(testWait)
	for time.Now().Before(deadline) {
		if p, err := os.FindProcess(pid); err != nil || errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone) {
			return true // (p is not released: the test process ends soon)
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i:]), ") Z") {
				return true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func checkNoStrays(t *testing.T, dir string) {
	t.Helper()
	for _, pid := range agentPids(t, dir) {
		if !gone(pid) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
			t.Errorf("process %d outlived Close", pid)
		}
	}
}

func dialTest(t *testing.T, tr Transport, o Options) *Conn {
	t.Helper()
	o.Logger = slog.New(slog.DiscardHandler)
	if o.Cwd == "" {
		o.Cwd = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	c, err := Dial(ctx, tr, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// texts collects the agent's message texts; [texts.wait] waits for one.
type texts struct {
	mu      sync.Mutex
	l       []string
	changed chan struct{} // closed and replaced at every add
}

func (x *texts) add(n acp.SessionNotification) {
	if c := n.Update.AgentMessageChunk; c != nil && c.Content.Text != nil {
		x.mu.Lock()
		x.l = append(x.l, c.Content.Text.Text)
		if x.changed != nil {
			close(x.changed)
			x.changed = nil
		}
		x.mu.Unlock()
	}
}

// wait returns once text has arrived, failing t when ctx ends first.
func (x *texts) wait(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	for {
		x.mu.Lock()
		if slices.Contains(x.l, text) {
			x.mu.Unlock()
			return
		}
		if x.changed == nil {
			x.changed = make(chan struct{})
		}
		ch := x.changed
		x.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no %q from the agent (%q so far): %v", text, x.get(), context.Cause(ctx))
		}
	}
}

func (x *texts) get() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.l)
}

// TestDialSessionModesNoStrays: the hosted agent's own modes are offered
// and set; Close stops the wrapper, the agent (which ignores the end of its
// input) and its child.
func TestDialSessionModesNoStrays(t *testing.T) {
	tr, dir := testAgent(t, false)
	var got texts
	c := dialTest(t, tr, Options{OnUpdate: got.add})
	if ms := c.Initialize().AuthMethods; len(ms) != 1 || ms[0].Other == nil {
		t.Errorf("auth methods = %+v, want the unknown env_var method kept", ms)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	s, err := c.NewSession(ctx, SessionParams{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"default", "acceptEdits", "bypassPermissions"}; !slices.Equal(s.Modes(), want) {
		t.Errorf("Modes() = %q, want %q", s.Modes(), want)
	}
	var me *ModeError
	if err := s.SetMode(ctx, "full"); !errors.As(err, &me) || !strings.Contains(err.Error(), "bypassPermissions") {
		t.Errorf("SetMode(full) = %v, want a ModeError listing the offered modes", err)
	}
	if err := s.SetMode(ctx, "bypassPermissions"); err != nil {
		t.Fatal(err)
	}
	res, err := s.Prompt(ctx, acp.ContentBlock{Text: &acp.TextContent{Text: "hi"}})
	if err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("Prompt = %+v, %v", res, err)
	}
	if want := []string{"mode=bypassPermissions"}; !slices.Equal(got.get(), want) {
		t.Errorf("updates %q, want %q", got.get(), want)
	}
	start := time.Now()
	c.Close()
	t.Logf("Close took %v", time.Since(start))
	checkNoStrays(t, dir)
}

// TestDialStubbornAgent: an agent ignoring SIGTERM is killed.
func TestDialStubbornAgent(t *testing.T) {
	tr, dir := testAgent(t, true)
	c := dialTest(t, tr, Options{})
	agentPids(t, dir)
	c.Close()
	checkNoStrays(t, dir)
}

// TestDialAgentCrash: an agent exiting mid-turn fails the prompt with
// ErrAgentExited; its child is stopped at Close.
func TestDialAgentCrash(t *testing.T) {
	tr, dir := testAgent(t, false)
	c := dialTest(t, tr, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	s, err := c.NewSession(ctx, SessionParams{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Prompt(ctx, acp.ContentBlock{Text: &acp.TextContent{Text: "crash"}})
	if !errors.Is(err, ErrAgentExited) {
		t.Fatalf("Prompt = %v, want ErrAgentExited", err)
	}
	c.Close()
	checkNoStrays(t, dir)
}

// TestDialCancelAndLoad: Cancel ends a running turn with "cancelled"; a
// loaded session's replay is not delivered.
func TestDialCancelAndLoad(t *testing.T) {
	tr, dir := testAgent(t, false)
	var got texts
	c := dialTest(t, tr, Options{OnUpdate: got.add})
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	s, err := c.ResumeSession(ctx, "s0", SessionParams{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan acp.PromptResponse, 1)
	go func() {
		res, err := s.Prompt(ctx, acp.ContentBlock{Text: &acp.TextContent{Text: "wait"}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	got.wait(t, ctx, "waiting")
	if err := s.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.StopReason != acp.StopReasonCancelled {
		t.Errorf("stop reason %q, want cancelled", res.StopReason)
	}
	if slices.Contains(got.get(), "replayed") {
		t.Errorf("the replay was delivered: %q", got.get())
	}
	c.Close()
	checkNoStrays(t, dir)
}
