package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"acpd/acp"
	"acpd/agent/internal/batch"
	"acpd/model"
	"acpd/tools"
)

// TestToolPanicFailsTheCall: a tool that panics runs on a goroutine of its
// own, outside the connection's handler recovery; the call fails, the turn
// goes on and the process survives.
func TestToolPanicFailsTheCall(t *testing.T) {
	const name = "test_panic"
	env := newEnv(t, "")
	c := env.start(nil)
	c.agent.builtin[name] = &tools.Tool{
		Def:   model.ToolDef{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
		Kind:  acp.ToolKindOther,
		Title: func(json.RawMessage) string { return "panics" },
		Run: func(context.Context, tools.Env, *tools.Call) tools.Result {
			panic("tool bug")
		},
	}
	sid := c.newSession()
	rec := record(toolSeq(toolCallReq{name, map[string]any{}}))
	env.setModel(mainModel, rec)
	c.mustPrompt(sid, "call the broken tool", acp.StopReasonEndTurn)
	res := toolResults(rec.last(t))
	if len(res) != 1 || !res[0].IsError || !strings.Contains(resultText(res[0]), "internal error") {
		t.Fatalf("tool results after a panic: %+v", res)
	}
	// The session still works.
	c.mustPrompt(sid, "again", acp.StopReasonEndTurn)
}

// TestParallelReadsBounded: however many read-only calls one response
// makes, at most batch.MaxParallel run at once. The editor holds the first
// reads until batch.MaxParallel of them are in flight (so an unbounded
// scheduler shows more) and records the highest concurrency it saw.
func TestParallelReadsBounded(t *testing.T) {
	const n = 3 * batch.MaxParallel
	env := newEnv(t, "")
	var calls []toolCallReq
	for i := range n {
		rel := fmt.Sprintf("f%d.txt", i)
		env.write(rel, "content\n")
		calls = append(calls, toolCallReq{"read_file", map[string]any{"path": rel}})
	}
	bctx := boundedContext(t)
	var (
		mu       sync.Mutex
		inflight int
		peak     int
		arrived  int
		full     = make(chan struct{})
	)
	hook := func(c *client, ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != acp.ClientMethodFsReadTextFile {
			return nil, errPass
		}
		mu.Lock()
		inflight++
		arrived++
		peak = max(peak, inflight)
		if arrived == batch.MaxParallel {
			close(full)
		}
		mu.Unlock()
		defer func() {
			mu.Lock()
			inflight--
			mu.Unlock()
		}()
		select {
		case <-full:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-bctx.Done():
			return nil, bctx.Err()
		}
		return c.handle(ctx, method, params)
	}
	c := env.startWith(editorCaps, nil, hook)
	sid := c.newSession()
	rec := record(allAtOnce(calls...))
	env.setModel(mainModel, rec)
	c.mustPrompt(sid, "read them all", acp.StopReasonEndTurn)
	res := toolResults(rec.last(t))
	if len(res) != n {
		t.Fatalf("%d tool results, want %d", len(res), n)
	}
	for i, p := range res {
		if p.IsError {
			t.Errorf("read %d failed: %q", i, resultText(p))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if peak > batch.MaxParallel {
		t.Errorf("%d reads ran at once, want at most %d", peak, batch.MaxParallel)
	}
	if peak < 2 {
		t.Errorf("reads did not run in parallel (peak %d)", peak)
	}
}

// TestShutdownClosesSessionsInParallel: at shutdown each session's close may
// wait out a stubborn child's grace periods, so sessions close at once
// rather than one after another. Each session's MCP server hangs in the
// handshake and, once its input is closed, waits for the other server's
// input to close too before exiting cleanly; closed one at a time, the
// first would be terminated before the second ever saw its input close.
func TestShutdownClosesSessionsInParallel(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(nil)
	server := func(name, other string) acp.McpServer {
		script := fmt.Sprintf("touch started.%[1]s; cat >/dev/null; touch eof.%[1]s; "+
			"while [ ! -e eof.%[2]s ]; do sleep 0.05; done; touch clean.%[1]s", name, other)
		return acp.McpServer{Stdio: &acp.McpServerStdio{Name: name, Command: "/bin/sh", Args: []string{"-c", script}, Env: []acp.EnvVariable{}}}
	}
	for _, pair := range [][2]string{{"a", "b"}, {"b", "a"}} {
		var resp acp.NewSessionResponse
		if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{server(pair[0], pair[1])}}, &resp); err != nil {
			t.Fatalf("session/new: %v", err)
		}
	}
	exists := func(name string) bool {
		_, err := os.Stat(filepath.Join(env.cwd, name))
		return err == nil
	}
	waitFor(t, "both MCP servers started", func() bool { return exists("started.a") && exists("started.b") })
	c.close()
	for _, name := range []string{"a", "b"} {
		if !exists("clean." + name) {
			t.Errorf("MCP server %s did not exit on its own: sessions were closed one after another", name)
		}
	}
}
