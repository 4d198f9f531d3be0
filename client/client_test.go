package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Init() // sandboxed terminals start this binary as the helper
	if dir := os.Getenv(testAgentEnv); dir != "" {
		os.Exit(runTestAgent(dir))
	}
	goleak.VerifyTestMain(m)
}

// testWait bounds every wait of a test on the client.
const testWait = 30 * time.Second

// pair connects an "agent" Conn (no handler of its own) to c's handler over
// two pipes and returns the agent side. Both connections are closed, and c
// too, when the test ends.
func pair(t *testing.T, c *Client) *jsonrpc.Conn {
	t.Helper()
	ar, cw := io.Pipe()
	cr, aw := io.Pipe()
	lg := slog.New(slog.DiscardHandler)
	cc := jsonrpc.NewConn(context.Background(), cr, cw, c.Handler(), jsonrpc.Options{Logger: lg})
	agent := jsonrpc.NewConn(context.Background(), ar, aw, func(context.Context, string, json.RawMessage) (any, error) {
		return nil, errors.New("unexpected")
	}, jsonrpc.Options{Logger: lg})
	t.Cleanup(func() {
		agent.Close()
		cc.Close()
		<-agent.Done()
		<-cc.Done()
		c.Close()
	})
	return agent
}

func newClient(t *testing.T, o Options) (*Client, *jsonrpc.Conn, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if o.Cwd == "" {
		o.Cwd = dir
	}
	o.Logger = slog.New(slog.DiscardHandler)
	c := New(o)
	return c, pair(t, c), dir
}

func call(t *testing.T, conn *jsonrpc.Conn, method string, params, result any) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	return conn.Call(ctx, method, params, result)
}

func u32(v uint32) *uint32 { return &v }

func TestReadTextFileWindow(t *testing.T) {
	_, conn, dir := newClient(t, Options{})
	p := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(p, []byte("one\ntwo\r\nthree\nfour"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line, limit *uint32
		want        string
	}{
		{nil, nil, "one\ntwo\r\nthree\nfour"},
		{u32(2), nil, "two\r\nthree\nfour"},
		{u32(2), u32(2), "two\r\nthree\n"},
		{nil, u32(1), "one\n"},
		{u32(4), u32(10), "four"},
		{u32(9), nil, ""},
		{u32(1), u32(0), ""},
	} {
		var res acp.ReadTextFileResponse
		if err := call(t, conn, acp.ClientMethodFsReadTextFile, acp.ReadTextFileRequest{SessionID: "s", Path: p, Line: tc.line, Limit: tc.limit}, &res); err != nil {
			t.Fatal(err)
		}
		if res.Content != tc.want {
			t.Errorf("line %v limit %v: got %q, want %q", tc.line, tc.limit, res.Content, tc.want)
		}
	}
}

// A missing file is ACP's resource-not-found (-32002), as Zed answers, so
// an agent reading the old content of a file it creates goes on.
func TestReadMissingFile(t *testing.T) {
	_, conn, dir := newClient(t, Options{})
	var res acp.ReadTextFileResponse
	err := call(t, conn, acp.ClientMethodFsReadTextFile, acp.ReadTextFileRequest{SessionID: "s", Path: filepath.Join(dir, "new.txt")}, &res)
	var rerr *jsonrpc.Error
	if !errors.As(err, &rerr) || rerr.Code != int(acp.ErrorCodeResourceNotFound) {
		t.Errorf("reading a missing file: %v, want -32002", err)
	}
}

func TestReadLongLine(t *testing.T) {
	_, conn, dir := newClient(t, Options{})
	long := strings.Repeat("x", 200<<10)
	p := filepath.Join(dir, "long.txt")
	if err := os.WriteFile(p, []byte(long+"\nsecond\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var res acp.ReadTextFileResponse
	if err := call(t, conn, acp.ClientMethodFsReadTextFile, acp.ReadTextFileRequest{SessionID: "s", Path: p, Line: u32(2)}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Content != "second\n" {
		t.Errorf("got %q", res.Content)
	}
	if err := call(t, conn, acp.ClientMethodFsReadTextFile, acp.ReadTextFileRequest{SessionID: "s", Path: p, Limit: u32(1)}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Content != long+"\n" {
		t.Errorf("first line: got %d bytes, want %d", len(res.Content), len(long)+1)
	}
}

func TestWriteTextFile(t *testing.T) {
	_, conn, dir := newClient(t, Options{})
	p := filepath.Join(dir, "sub", "dir", "new.txt")
	if err := call(t, conn, acp.ClientMethodFsWriteTextFile, acp.WriteTextFileRequest{SessionID: "s", Path: p, Content: "hello\n"}, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || string(b) != "hello\n" {
		t.Fatalf("got %q, %v", b, err)
	}
	// Replacing keeps the mode and leaves no temp file behind.
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := call(t, conn, acp.ClientMethodFsWriteTextFile, acp.WriteTextFileRequest{SessionID: "s", Path: p, Content: "bye"}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "bye" {
		t.Fatalf("got %q, %v", b, err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	ents, _ := os.ReadDir(filepath.Dir(p))
	if len(ents) != 1 {
		t.Errorf("directory holds %d entries, want 1", len(ents))
	}
}

func TestOutsideRootsRefused(t *testing.T) {
	_, conn, dir := newClient(t, Options{})
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		secret,
		filepath.Join(dir, "..", filepath.Base(outside), "secret.txt"),
		filepath.Join(dir, "link", "secret.txt"),
		"relative.txt",
	} {
		var res acp.ReadTextFileResponse
		err := call(t, conn, acp.ClientMethodFsReadTextFile, acp.ReadTextFileRequest{SessionID: "s", Path: p}, &res)
		var rerr *jsonrpc.Error
		if !errors.As(err, &rerr) || res.Content != "" {
			t.Errorf("read %s: err %v, content %q; want a JSON-RPC error", p, err, res.Content)
		}
		err = call(t, conn, acp.ClientMethodFsWriteTextFile, acp.WriteTextFileRequest{SessionID: "s", Path: p, Content: "pwned"}, nil)
		if !errors.As(err, &rerr) {
			t.Errorf("write %s: err %v; want a JSON-RPC error", p, err)
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Errorf("the outside file was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "relative.txt")); err == nil {
		t.Error("a relative path was written")
	}
}

func TestAdditionalRoot(t *testing.T) {
	extra, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, conn, _ := newClient(t, Options{Roots: []string{extra}})
	p := filepath.Join(extra, "a.txt")
	if err := call(t, conn, acp.ClientMethodFsWriteTextFile, acp.WriteTextFileRequest{SessionID: "s", Path: p, Content: "x"}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestTerminalLifecycle(t *testing.T) {
	_, conn, dir := newClient(t, Options{Env: []string{"PATH=" + os.Getenv("PATH"), "BASE=base"}})
	var created acp.CreateTerminalResponse
	if err := call(t, conn, acp.ClientMethodTerminalCreate, acp.CreateTerminalRequest{
		SessionID: "s", Command: "sh", Args: []string{"-c", `printf '%s %s %s\n' "$BASE" "$EXTRA" "$(pwd)"; exit 3`},
		Env: []acp.EnvVariable{{Name: "EXTRA", Value: "extra"}},
	}, &created); err != nil {
		t.Fatal(err)
	}
	var exit acp.WaitForTerminalExitResponse
	if err := call(t, conn, acp.ClientMethodTerminalWaitForExit, acp.WaitForTerminalExitRequest{SessionID: "s", TerminalID: created.TerminalID}, &exit); err != nil {
		t.Fatal(err)
	}
	if exit.ExitCode == nil || *exit.ExitCode != 3 || exit.Signal != nil {
		t.Errorf("exit %+v, want code 3", exit)
	}
	var out acp.TerminalOutputResponse
	if err := call(t, conn, acp.ClientMethodTerminalOutput, acp.TerminalOutputRequest{SessionID: "s", TerminalID: created.TerminalID}, &out); err != nil {
		t.Fatal(err)
	}
	if want := "base extra " + dir + "\n"; out.Output != want || out.Truncated || out.ExitStatus == nil || *out.ExitStatus.ExitCode != 3 {
		t.Errorf("output %+v, want %q and exit 3", out, want)
	}
	// Another session cannot see the terminal.
	if err := call(t, conn, acp.ClientMethodTerminalOutput, acp.TerminalOutputRequest{SessionID: "other", TerminalID: created.TerminalID}, &out); err == nil {
		t.Error("another session read the terminal")
	}
	if err := call(t, conn, acp.ClientMethodTerminalRelease, acp.ReleaseTerminalRequest{SessionID: "s", TerminalID: created.TerminalID}, nil); err != nil {
		t.Fatal(err)
	}
	if err := call(t, conn, acp.ClientMethodTerminalOutput, acp.TerminalOutputRequest{SessionID: "s", TerminalID: created.TerminalID}, &out); err == nil {
		t.Error("output of a released terminal")
	}
}

func TestTerminalKillAndLimit(t *testing.T) {
	_, conn, _ := newClient(t, Options{})
	var created acp.CreateTerminalResponse
	limit := uint64(4)
	if err := call(t, conn, acp.ClientMethodTerminalCreate, acp.CreateTerminalRequest{
		SessionID: "s", Command: "sh", Args: []string{"-c", "echo 123456789; exec sleep 300"}, OutputByteLimit: &limit,
	}, &created); err != nil {
		t.Fatal(err)
	}
	// Wait until the output arrived, then kill.
	var out acp.TerminalOutputResponse
	deadline := time.Now().Add(testWait)
	for !out.Truncated && time.Now().Before(deadline) {
		if err := call(t, conn, acp.ClientMethodTerminalOutput, acp.TerminalOutputRequest{SessionID: "s", TerminalID: created.TerminalID}, &out); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if out.Output != "789\n" || !out.Truncated || out.ExitStatus != nil {
		t.Errorf("output %+v, want the last 4 bytes, truncated, still running", out)
	}
	if err := call(t, conn, acp.ClientMethodTerminalKill, acp.KillTerminalRequest{SessionID: "s", TerminalID: created.TerminalID}, nil); err != nil {
		t.Fatal(err)
	}
	var exit acp.WaitForTerminalExitResponse
	if err := call(t, conn, acp.ClientMethodTerminalWaitForExit, acp.WaitForTerminalExitRequest{SessionID: "s", TerminalID: created.TerminalID}, &exit); err != nil {
		t.Fatal(err)
	}
	if exit.Signal == nil || exit.ExitCode != nil {
		t.Errorf("exit %+v, want a signal", exit)
	}
	// Released after the kill.
	if err := call(t, conn, acp.ClientMethodTerminalRelease, acp.ReleaseTerminalRequest{SessionID: "s", TerminalID: created.TerminalID}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestCloseKillsTerminals(t *testing.T) {
	c, conn, _ := newClient(t, Options{})
	var created acp.CreateTerminalResponse
	if err := call(t, conn, acp.ClientMethodTerminalCreate, acp.CreateTerminalRequest{SessionID: "s", Command: "sleep", Args: []string{"300"}}, &created); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	var exit acp.WaitForTerminalExitResponse
	go func() {
		errc <- call(t, conn, acp.ClientMethodTerminalWaitForExit, acp.WaitForTerminalExitRequest{SessionID: "s", TerminalID: created.TerminalID}, &exit)
	}()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if exit.Signal == nil {
		t.Errorf("exit %+v, want a signal", exit)
	}
	if err := call(t, conn, acp.ClientMethodTerminalCreate, acp.CreateTerminalRequest{SessionID: "s", Command: "true"}, &created); err == nil {
		t.Error("terminal/create after Close succeeded")
	}
}

func TestUnknownMethod(t *testing.T) {
	_, conn, _ := newClient(t, Options{})
	err := call(t, conn, "fs/delete_everything", map[string]any{}, nil)
	var rerr *jsonrpc.Error
	if !errors.As(err, &rerr) || rerr.Code != -32601 {
		t.Fatalf("got %v, want method not found", err)
	}
}

func TestPermissionAndUpdates(t *testing.T) {
	opts := []acp.PermissionOption{
		{OptionID: "a1", Kind: acp.PermissionOptionKindAllowOnce, Name: "Allow"},
		{OptionID: "r1", Kind: acp.PermissionOptionKindRejectOnce, Name: "Reject"},
	}
	req := acp.RequestPermissionRequest{SessionID: "s", Options: opts, ToolCall: acp.ToolCallUpdate{ToolCallID: "t"}}

	// Default: fail closed.
	_, conn, _ := newClient(t, Options{})
	var res acp.RequestPermissionResponse
	if err := call(t, conn, acp.ClientMethodSessionRequestPermission, req, &res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome.Selected == nil || res.Outcome.Selected.OptionID != "r1" {
		t.Errorf("default answer %+v, want r1", res.Outcome)
	}

	var mu sync.Mutex
	var got []acp.SessionNotification
	done := make(chan struct{})
	_, conn, _ = newClient(t, Options{
		Permission: func(_ context.Context, r acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
			return Select(r.Options, acp.PermissionOptionKindAllowOnce), nil
		},
		OnUpdate: func(n acp.SessionNotification) {
			mu.Lock()
			got = append(got, n)
			mu.Unlock()
			close(done)
		},
	})
	if err := call(t, conn, acp.ClientMethodSessionRequestPermission, req, &res); err != nil {
		t.Fatal(err)
	}
	if res.Outcome.Selected == nil || res.Outcome.Selected.OptionID != "a1" {
		t.Errorf("answer %+v, want a1", res.Outcome)
	}
	text := "hi"
	if err := conn.Notify(context.Background(), acp.ClientMethodSessionUpdate, acp.SessionNotification{SessionID: "s", Update: acp.SessionUpdate{
		AgentMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: text}}},
	}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(testWait):
		t.Fatal("no update")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Update.AgentMessageChunk == nil || got[0].Update.AgentMessageChunk.Content.Text.Text != text {
		t.Errorf("updates %+v", got)
	}
}

func TestSelectNoMatch(t *testing.T) {
	r := Select([]acp.PermissionOption{{OptionID: "a", Kind: acp.PermissionOptionKindAllowAlways}}, acp.PermissionOptionKindRejectOnce)
	if r.Outcome.Cancelled == nil {
		t.Errorf("got %+v, want cancelled", r.Outcome)
	}
}

// TestTerminalReleaseKeepsOutput: OnTerminalRelease receives the output a
// terminal had when the agent released it.
func TestTerminalReleaseKeepsOutput(t *testing.T) {
	var mu sync.Mutex
	var got []acp.TerminalOutputResponse
	_, conn, _ := newClient(t, Options{Env: []string{"PATH=" + os.Getenv("PATH")}, OnTerminalRelease: func(sid acp.SessionID, id acp.TerminalID, out acp.TerminalOutputResponse) {
		mu.Lock()
		defer mu.Unlock()
		if sid == "s" && id != "" {
			got = append(got, out)
		}
	}})
	var created acp.CreateTerminalResponse
	if err := call(t, conn, acp.ClientMethodTerminalCreate, acp.CreateTerminalRequest{SessionID: "s", Command: "sh", Args: []string{"-c", "echo kept; exit 2"}}, &created); err != nil {
		t.Fatal(err)
	}
	if err := call(t, conn, acp.ClientMethodTerminalWaitForExit, acp.WaitForTerminalExitRequest{SessionID: "s", TerminalID: created.TerminalID}, nil); err != nil {
		t.Fatal(err)
	}
	if err := call(t, conn, acp.ClientMethodTerminalRelease, acp.ReleaseTerminalRequest{SessionID: "s", TerminalID: created.TerminalID}, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Output != "kept\n" || got[0].ExitStatus == nil || *got[0].ExitStatus.ExitCode != 2 {
		t.Errorf("released output %+v, want kept and exit 2", got)
	}
}
