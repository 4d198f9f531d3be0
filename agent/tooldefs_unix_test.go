//go:build unix

package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"acpd/acp"
	"acpd/model"
)

// A server that goes down for good (it died, and its restarts failed)
// takes its tools out of the list the session offers (sess.toolDefs
// keeps a list only while the tools it was made of stay).
func TestToolDefsServerDown(t *testing.T) {
	if testing.Short() {
		t.Skip("a server goes down after its five restarts, 15 s of back-off")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	script, err := filepath.Abs("../mcpclient/testdata/badserver.py")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	wrapper := filepath.Join(dir, "mortal.sh")
	// The server starts while the file gone does not exist.
	body := "#!/bin/sh\n[ -e " + gone + " ] && { echo 'gone for good' >&2; exit 2; }\nexec " + py + " " + script + " ok\n"
	if err := os.WriteFile(wrapper, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}

	// Each turn's first request calls the next tool queued, if any.
	var mu sync.Mutex
	var queue []toolCallReq
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		mu.Lock()
		var calls []toolCallReq
		if turnStep(req) == 0 && len(queue) > 0 {
			calls, queue = queue[:1], queue[1:]
		}
		mu.Unlock()
		toolSeq(calls...)(ctx, req, yield)
	}))
	env := newEnv(t, "[agent]\ndefault_mode = \"full\"\n")
	env.setModel(mainModel, rec)
	c := env.start(nil)
	var resp acp.NewSessionResponse
	srv := acp.McpServer{Stdio: &acp.McpServerStdio{Name: "mortal", Command: wrapper, Args: []string{}, Env: []acp.EnvVariable{}}}
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{srv}}, &resp); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	sid := resp.SessionID
	prompt := func(call string) model.Request {
		mu.Lock()
		if call != "" {
			queue = append(queue, toolCallReq{call, map[string]any{}})
		}
		mu.Unlock()
		c.mustPrompt(sid, "go", acp.StopReasonEndTurn)
		return rec.last(t)
	}

	req := prompt("mcp__mortal__pid")
	if !slices.Contains(toolNames(req), "mcp__mortal__echo") {
		t.Fatalf("the server's tools are not offered: %v", toolNames(req))
	}
	res := toolResults(req)
	if len(res) != 1 || res[0].IsError {
		t.Fatalf("pid: %+v", res)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(resultText(res[0])))
	if err != nil {
		t.Fatalf("pid: %q", resultText(res[0]))
	}
	if err := os.WriteFile(gone, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Each call restarts the server, which fails; after five it is down,
	// and the next request offers none of its tools, nor do later ones.
	offersMortal := func(r model.Request) bool {
		return slices.ContainsFunc(toolNames(r), func(n string) bool { return strings.HasPrefix(n, "mcp__mortal__") })
	}
	calls := 0
	for req = prompt("mcp__mortal__echo"); offersMortal(req); req = prompt("mcp__mortal__echo") {
		if calls++; calls > 10 {
			t.Fatalf("the server's tools are still offered after %d failed calls: %v", calls, toolNames(req))
		}
		if res := toolResults(req); !res[len(res)-1].IsError {
			t.Fatalf("a call to the dead server succeeded: %+v", res[len(res)-1])
		}
	}
	t.Logf("down after %d prompts calling it", calls+1)
	if offersMortal(prompt("")) {
		t.Error("the tools of the server that is down came back")
	}
}
