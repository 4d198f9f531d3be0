package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"acpd/acp"
)

// The tool list a session offers the model is kept between requests
// (sess.toolDefs) and made again when what it is made of changes: a
// server's tools/list_changed (tools added, tools removed), and the mode
// (plan mode offers the tools it allows only). Each request carries the list
// of that moment, sorted.
func TestToolDefsFollowChanges(t *testing.T) {
	echo := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "dyn", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "one", InputSchema: json.RawMessage(`{"type":"object"}`)}, echo)
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)

	env := newEnv(t, "")
	rec := record(toolSeq())
	env.setModel(mainModel, rec)
	c := env.start(nil)
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{{HTTP: &acp.McpServerHTTP{Name: "dyn", URL: hs.URL, Headers: []acp.HTTPHeader{}}}}}, &resp); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	sid := resp.SessionID
	offered := func() []string {
		t.Helper()
		c.mustPrompt(sid, "list", acp.StopReasonEndTurn)
		names := toolNames(rec.last(t))
		if !slices.IsSorted(names) {
			t.Errorf("tools not sorted: %v", names)
		}
		return names
	}
	// waitFor prompts until the offered tools satisfy ok.
	waitFor := func(what string, ok func([]string) bool) []string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			names := offered()
			if ok(names) {
				return names
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: never; tools offered: %v", what, names)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	first := offered()
	if !slices.Contains(first, "mcp__dyn__one") || !slices.Contains(first, "write_file") {
		t.Fatalf("first request's tools: %v", first)
	}
	if again := offered(); !slices.Equal(again, first) {
		t.Errorf("the tools changed with nothing changed: %v, then %v", first, again)
	}

	// list_changed: a tool added joins the list, in its place.
	srv.AddTool(&mcp.Tool{Name: "two", InputSchema: json.RawMessage(`{"type":"object"}`)}, echo)
	waitFor("the added tool offered", func(n []string) bool { return slices.Contains(n, "mcp__dyn__two") })

	// Plan mode: only the tools it allows (not the MCP tools, which may
	// write); back in full mode, all again.
	c.mustMode(sid, modePlan)
	plan := offered()
	if slices.Contains(plan, "mcp__dyn__one") || slices.Contains(plan, "mcp__dyn__two") || slices.Contains(plan, "write_file") {
		t.Errorf("plan mode offered tools that write: %v", plan)
	}
	if !slices.Contains(plan, "read_file") || !slices.Contains(plan, "update_plan") {
		t.Errorf("plan mode lost the tools it allows: %v", plan)
	}
	c.mustMode(sid, modeFull)
	if full := offered(); !slices.Contains(full, "mcp__dyn__two") || !slices.Contains(full, "write_file") {
		t.Errorf("back in full mode: %v", full)
	}

	// list_changed: a tool removed leaves the list.
	srv.RemoveTools("one")
	waitFor("the removed tool gone", func(n []string) bool { return !slices.Contains(n, "mcp__dyn__one") })
}
