package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/internal/testpeers"
)

// everythingServer is the stdio MCP server from
// @modelcontextprotocol/server-everything (installed by `cd testdata && npm
// ci`); the test skips without it, and fails under CI=true.
func everythingServer(t *testing.T) acp.McpServer {
	t.Helper()
	node, entry := testpeers.Everything(t)
	return acp.McpServer{Stdio: &acp.McpServerStdio{Name: "everything", Command: node, Args: []string{entry, "stdio"}, Env: []acp.EnvVariable{}}}
}

// everythingSession opens a session in env's cwd with the everything
// server.
func (c *client) everythingSession() acp.SessionID {
	c.t.Helper()
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: c.env.cwd, McpServers: []acp.McpServer{everythingServer(c.t)}}, &resp); err != nil {
		c.t.Fatalf("session/new: %v", err)
	}
	return resp.SessionID
}

// An editor's MCP server is started, its tools are offered to the model as
// mcp__<server>__<tool>, calls ask permission and their results reach the
// model; a server that cannot start leaves the session working.
func TestMCPToolsFromEditor(t *testing.T) {
	env := newEnv(t, "")
	rec := record(toolSeq(toolCallReq{"mcp__everything__echo", map[string]any{"message": "hello mcp"}}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	var resp acp.NewSessionResponse
	broken := acp.McpServer{Stdio: &acp.McpServerStdio{Name: "broken", Command: "/nonexistent/mcp-server", Args: []string{}, Env: []acp.EnvVariable{}}}
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{everythingServer(t), broken}}, &resp); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	c.mustPrompt(resp.SessionID, "echo something", acp.StopReasonEndTurn)

	req := rec.last(t)
	var offered bool
	for _, d := range req.Tools {
		if d.Name == "mcp__everything__echo" {
			offered = len(d.InputSchema) > 0
		}
		if strings.HasPrefix(d.Name, "mcp__broken__") {
			t.Errorf("a tool of the broken server was offered: %s", d.Name)
		}
	}
	if !offered {
		t.Fatalf("mcp__everything__echo not offered with a schema; tools: %v", req.Tools)
	}
	res := toolResults(req)
	if len(res) != 1 || res[0].IsError || !strings.Contains(resultText(res[0]), "hello mcp") {
		t.Fatalf("tool result: %+v", res)
	}
	if n := len(c.permissionRequests()); n != 1 {
		t.Errorf("%d permission requests, want 1 (MCP tools ask in ask mode)", n)
	}
}

// MCP servers from the user's configuration start too; the editor's win on
// a name clash.
func TestMCPServersFromConfig(t *testing.T) {
	srv := everythingServer(t).Stdio
	cmd, _ := json.Marshal(append([]string{srv.Command}, srv.Args...))
	env := newEnv(t, "[mcp_servers.conf]\ncommand = "+string(cmd)+"\n[mcp_servers.broken]\ncommand = [\"/nonexistent/server\"]\n")
	rec := record(toolSeq(toolCallReq{"mcp__conf__echo", map[string]any{"message": "from config"}}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	// The editor's "broken" replaces the configuration's, and works.
	var resp acp.NewSessionResponse
	editors := everythingServer(t)
	editors.Stdio.Name = "broken"
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{editors}}, &resp); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	c.mustPrompt(resp.SessionID, "echo", acp.StopReasonEndTurn)
	req := rec.last(t)
	res := toolResults(req)
	if len(res) != 1 || res[0].IsError || !strings.Contains(resultText(res[0]), "from config") {
		t.Fatalf("tool result: %+v", res)
	}
	var broken bool
	for _, d := range req.Tools {
		if d.Name == "mcp__broken__echo" {
			broken = true
		}
	}
	if !broken {
		t.Error("the editor's server named like a configured one was not started")
	}
}

// An MCP tool's image reaches the editor as ACP image content and the model
// as an image part; its progress (not tested here) and hints follow.
func TestMCPRichContent(t *testing.T) {
	env := newEnv(t, "")
	rec := record(toolSeq(toolCallReq{"mcp__everything__get-tiny-image", map[string]any{}}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	sid := c.everythingSession()
	c.mustPrompt(sid, "show me an image", acp.StopReasonEndTurn)
	res := toolResults(rec.last(t))
	if len(res) != 1 {
		t.Fatalf("tool results = %+v", res)
	}
	var modelImage bool
	for _, p := range res[0].Content {
		modelImage = modelImage || (p.Type == "image" && p.Data != "")
	}
	if !modelImage {
		t.Errorf("the model got no image: %+v", res[0].Content)
	}
	var editorImage bool
	for _, u := range c.allUpdates(sid) {
		if tu := u.ToolCallUpdate; tu != nil {
			for _, tc := range tu.Content {
				editorImage = editorImage || (tc.Content != nil && tc.Content.Content.Image != nil && tc.Content.Content.Image.Data != "")
			}
		}
	}
	if !editorImage {
		t.Error("the editor got no image content")
	}
}

// A long-running MCP tool's progress reaches the editor as tool_call_updates
// of the call's title with the percent done.
func TestMCPProgress(t *testing.T) {
	env := newEnv(t, "")
	rec := record(toolSeq(toolCallReq{"mcp__everything__trigger-long-running-operation", map[string]any{"duration": 1, "steps": 4}}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	sid := c.everythingSession()
	c.mustPrompt(sid, "run it", acp.StopReasonEndTurn)
	var titles []string
	for _, u := range c.allUpdates(sid) {
		if tu := u.ToolCallUpdate; tu != nil && tu.Title != nil && strings.Contains(*tu.Title, "%)") {
			titles = append(titles, *tu.Title)
		}
	}
	if len(titles) == 0 || len(titles) > 4 {
		t.Errorf("progress titles = %q, want 1 to 4", titles)
	}
}
