//go:build unix

package agent

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"acpd/acp"
)

// badMCP is an editor stdio server running mcpclient's misbehaving test
// server in mode.
func badMCP(t *testing.T, name, mode string) acp.McpServer {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	script, err := filepath.Abs("../mcpclient/testdata/badserver.py")
	if err != nil {
		t.Fatal(err)
	}
	return acp.McpServer{Stdio: &acp.McpServerStdio{Name: name, Command: py, Args: []string{script, mode}, Env: []acp.EnvVariable{}}}
}

// A server that never answers and one that exits at once hold neither
// session/new nor the first prompt back by more than the grace; the user
// sees the dead one once per session as a failed tool call, the model is
// told about both in its system prompt, and a server that is ready joins.
func TestMCPBadServersDoNotHoldTheTurn(t *testing.T) {
	env := newEnv(t, "[agent]\nmcp_grace_ms = 1500\n")
	rec := record(toolSeq())
	env.setModel(mainModel, rec)
	c := env.start(nil)
	start := time.Now()
	var resp acp.NewSessionResponse
	servers := []acp.McpServer{badMCP(t, "silent", "hang"), badMCP(t, "gone", "exit"), badMCP(t, "fine", "ok")}
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: servers}, &resp); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	newTook := time.Since(start)
	start = time.Now()
	c.mustPrompt(resp.SessionID, "hello", acp.StopReasonEndTurn)
	promptTook := time.Since(start)
	t.Logf("session/new took %v, the first prompt %v (grace 1.5 s)", newTook, promptTook)

	if !strings.Contains(rec.last(t).System, "- silent: still starting") {
		t.Errorf("system prompt does not name the silent server:\n%s", rec.last(t).System)
	}
	failed := func() int {
		n := 0
		for _, u := range c.allUpdates(resp.SessionID) {
			if tc := u.ToolCall; tc != nil && tc.Title == "MCP server gone unavailable" {
				n++
				if tc.Status != acp.ToolCallStatusFailed || len(tc.Content) == 0 {
					t.Errorf("unavailable tool call = %+v", tc)
				}
			}
		}
		return n
	}
	// On a loaded machine the servers may settle after the first prompt's
	// grace: later prompts see them.
	for i := 0; failed() == 0 && i < 20; i++ {
		c.mustPrompt(resp.SessionID, "more", acp.StopReasonEndTurn)
		time.Sleep(200 * time.Millisecond)
	}
	if n := failed(); n != 1 {
		t.Fatalf("%d 'MCP server gone unavailable' tool calls, want 1", n)
	}
	c.mustPrompt(resp.SessionID, "tools", acp.StopReasonEndTurn)
	req := rec.last(t)
	if !strings.Contains(req.System, "- gone: unavailable") || !strings.Contains(req.System, "missing configuration file") {
		t.Errorf("system prompt does not name the dead server:\n%s", req.System)
	}
	var fine bool
	for _, d := range req.Tools {
		fine = fine || d.Name == "mcp__fine__echo"
	}
	if !fine {
		t.Errorf("the ready server's tools are missing: %v", req.Tools)
	}
	c.mustPrompt(resp.SessionID, "again", acp.StopReasonEndTurn)
	if n := failed(); n != 1 {
		t.Errorf("after a second prompt: %d unavailable tool calls, want still 1", n)
	}
}

// A server that never answers is shown to the user without any prompt:
// once the grace has passed, a card says it is still starting; after the
// start timeout it is marked unavailable with the reason, once.
func TestMCPHangingServerShown(t *testing.T) {
	env := newEnv(t, "[agent]\nmcp_grace_ms = 300\nmcp_start_timeout_ms = 1500\n")
	env.setModel(mainModel, toolSeq())
	c := env.start(nil)
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{badMCP(t, "silent", "hang")}}, &resp); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	cards := func() (starting, down int, why string) {
		for _, u := range c.allUpdates(resp.SessionID) {
			switch tc := u.ToolCall; {
			case tc == nil:
			case tc.Title == "MCP server silent is still starting":
				starting++
			case tc.Title == "MCP server silent unavailable":
				down++
				for _, cc := range tc.Content {
					if cc.Content != nil && cc.Content.Content.Text != nil {
						why = cc.Content.Content.Text.Text
					}
				}
			}
		}
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		starting, down, why := cards()
		if down > 0 {
			if starting != 1 || down != 1 || !strings.Contains(why, "in time") {
				t.Errorf("cards: %d still starting, %d unavailable (%q); want one of each, saying it did not answer in time", starting, down, why)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no unavailable card 30 s after the start timeout (still-starting cards: %d)", starting)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A prompt afterwards does not repeat either card.
	c.mustPrompt(resp.SessionID, "hello", acp.StopReasonEndTurn)
	if starting, down, _ := cards(); starting != 1 || down != 1 {
		t.Errorf("after a prompt: %d still starting, %d unavailable cards; want 1 and 1", starting, down)
	}
}
