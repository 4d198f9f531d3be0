package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"acpd/internal/testpeers"
)

// appServers are the two MCP Apps servers from npm as session/new
// mcpServers entries: "basic" (get-time, with a view) and "monitor"
// (get-system-info with a view, poll-system-stats for its app only).
func appServers(t *testing.T) []any {
	t.Helper()
	var out []any
	for name, pkg := range map[string]string{"basic": testpeers.BasicApp, "monitor": testpeers.MonitorApp} {
		node, entry := testpeers.App(t, pkg)
		out = append(out, map[string]any{"name": name, "command": node, "args": []string{entry, "--stdio"}, "env": []any{}})
	}
	return out
}

// TestAppsLevel0: with a client that cannot render MCP Apps, the model is
// offered a tool with a view as a plain tool and can call it, is never
// offered the app-only tool (and calling it anyway fails), and does not see
// or read the servers' ui:// views.
func TestAppsLevel0(t *testing.T) {
	t.Parallel()
	script := []fakeStep{
		{callID: "call_list", tool: "mcp_list_resources", args: `{}`},
		{callID: "call_read", tool: "mcp_read_resource", args: `{"server":"basic","uri":"ui://get-time/mcp-app.html"}`},
		{callID: "call_time", tool: "mcp__basic__get-time", args: `{}`},
		{callID: "call_poll", tool: "mcp__monitor__poll-system-stats", args: `{}`},
		{text: "Done."},
	}
	srv := newFakeProvider(t, "openai", "", nil, script...)
	iso := newIsolation(t)
	iso.writeUserConfig(t, "[agent]\nmcp_grace_ms = 60000\n")
	p := startProc(t, withEnv(iso, "ACPD_DISCOVER=0", "OPENAI_API_KEY=sk-apps", "OPENAI_BASE_URL="+srv.srv.URL+"/v1"), "--model", "openai/gpt-test")
	p.initialize()
	var r struct {
		SessionID string `json:"sessionId"`
	}
	p.mustCall("session/new", map[string]any{"cwd": e2eProject(t), "mcpServers": appServers(t)}, &r)
	p.mustCall("session/set_config_option", map[string]any{"sessionId": r.SessionID, "configId": "mode", "value": "full"}, nil)
	res := p.prompt(r.SessionID, "What time is it?")
	p.close()
	if res.err != nil || res.stopReason != "end_turn" {
		t.Fatalf("prompt: %v, stop %q\nstderr:\n%s", res.err, res.stopReason, p.stderr.String())
	}
	reqs := srv.requests()
	if len(reqs) != len(script) {
		t.Fatalf("the model server got %d requests, want %d\nstderr:\n%s", len(reqs), len(script), p.stderr.String())
	}
	for i, rq := range reqs {
		var req oaRequest
		if err := json.Unmarshal(rq.Body, &req); err != nil {
			t.Fatal(err)
		}
		offered := map[string]bool{}
		for _, tl := range req.Tools {
			offered[tl.Function.Name] = true
		}
		for _, want := range []string{"mcp__basic__get-time", "mcp__monitor__get-system-info", "mcp_read_resource"} {
			if !offered[want] {
				t.Errorf("request %d does not offer %s", i, want)
			}
		}
		if offered["mcp__monitor__poll-system-stats"] {
			t.Errorf("request %d offers the app-only tool poll-system-stats", i)
		}
	}
	var last oaRequest
	if err := json.Unmarshal(reqs[len(reqs)-1].Body, &last); err != nil {
		t.Fatal(err)
	}
	results := map[string]string{}
	for _, m := range last.Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.text()
		}
	}
	if got := results["call_list"]; strings.Contains(got, "ui://") || !strings.Contains(got, "No MCP resources") {
		t.Errorf("mcp_list_resources gave the model %q, want no ui:// views", got)
	}
	if got := results["call_read"]; strings.Contains(got, "<html") || !strings.Contains(got, "MCP App view") {
		t.Errorf("mcp_read_resource of a view gave the model %q, want a refusal", got)
	}
	if got := results["call_time"]; !isTime(got) {
		t.Errorf("get-time gave the model %q, want the server's time", got)
	}
	if got := results["call_poll"]; strings.Contains(got, "cpu") || got == "" {
		t.Errorf("the app-only tool answered the model: %q", got)
	}
}

func isTime(s string) bool {
	_, err := time.Parse(time.RFC3339, strings.TrimSpace(s))
	return err == nil
}

// TestAppsLevel1: a client on the official ACP TypeScript SDK opts in to
// MCP App views and hosts them (testdata/interop/apps-host.mjs): the
// servers are told of the extension, the calls carry their views and
// complete results, and the views' requests come back through acpd; the
// model gets the view's context and its message.
func TestAppsLevel1(t *testing.T) {
	t.Parallel()
	script := []fakeStep{
		{callID: "call_time", tool: "mcp__basic__get-time", args: `{}`},
		{callID: "call_info", tool: "mcp__monitor__get-system-info", args: `{}`},
		{text: "Done."},
	}
	srv := newFakeProvider(t, "openai", "", nil, script...)
	r := newInteropRun(t)
	r.iso.writeUserConfig(t, "[agent]\nmcp_grace_ms = 60000\n")
	r.iso.env = append(r.iso.env, "ACPD_DISCOVER=0", "OPENAI_API_KEY=sk-apps", "OPENAI_BASE_URL="+srv.srv.URL+"/v1")
	sum := r.run(t, "apps-host", map[string]any{"args": []string{"--model", "openai/gpt-test"}, "servers": appServers(t)})
	if sum["ok"] != true {
		t.Fatalf("summary %v", sum)
	}
	reqs := srv.requests()
	if len(reqs) != len(script)+1 {
		t.Fatalf("the model server got %d requests, want %d (the message's turn last)", len(reqs), len(script)+1)
	}
	last := string(reqs[len(reqs)-1].Body)
	for _, want := range []string{"Show the time again", "The user picked 42."} {
		if !strings.Contains(last, want) {
			t.Errorf("the message's model request lacks %q", want)
		}
	}
	if strings.Contains(string(reqs[0].Body), "poll-system-stats") {
		t.Errorf("the model was offered the app-only tool")
	}
}

// TestAppsToolCancelled: a turn cancelled while a tool with a view runs
// (testdata/interop/hang-app-server.mjs never answers it) ends the call
// with toolCancelled on its final update, the level-1 carrier of
// ui/notifications/tool-cancelled; its view then still reaches its
// server's tools, but not one without "app" visibility
// (testdata/interop/apps-cancel.mjs, on the official ACP TypeScript SDK).
func TestAppsToolCancelled(t *testing.T) {
	t.Parallel()
	node := requirePeers(t)
	srv := newFakeProvider(t, "openai", "", nil, fakeStep{callID: "call_wait", tool: "mcp__hang__wait", args: `{}`}, fakeStep{text: "Never reached."})
	r := newInteropRun(t)
	r.iso.writeUserConfig(t, "[agent]\nmcp_grace_ms = 60000\n")
	r.iso.env = append(r.iso.env, "ACPD_DISCOVER=0", "OPENAI_API_KEY=sk-apps", "OPENAI_BASE_URL="+srv.srv.URL+"/v1")
	server, err := filepath.Abs(filepath.Join("..", "..", "testdata", "interop", "hang-app-server.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	servers := []any{map[string]any{"name": "hang", "command": node, "args": []string{server}, "env": []any{}}}
	sum := r.run(t, "apps-cancel", map[string]any{"args": []string{"--model", "openai/gpt-test"}, "servers": servers})
	if sum["ok"] != true || sum["reason"] == "" {
		t.Fatalf("summary %v", sum)
	}
}

// TestRunNoViewsWithoutUI: acpd run without --ui and without a terminal
// does not opt in to MCP App views: the tool's call carries none.
func TestRunNoViewsWithoutUI(t *testing.T) {
	t.Parallel()
	iso, project, script, mcpConfig := appsRunSetup(t, appsUIScript, testpeers.BasicApp)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--yes", "--output", "stream-json", "--cwd", project, "--mcp-config", mcpConfig, "--model", "replay/"+script, "What time is it?")
	if code != 0 || !strings.Contains(stdout, `"toolCallId":"call_time"`) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "io.modelcontextprotocol/ui") || strings.Contains(stderr, "MCP Apps page") {
		t.Errorf("a run without --ui got a view:\n%s", stdout)
	}
}

// appsRunSetup returns what an `acpd run` with MCP Apps servers needs: an
// isolated environment that waits for the servers, a project, the replay
// script and an --mcp-config file with the servers of pkgs ("basic" for
// testpeers.BasicApp, "monitor" for testpeers.MonitorApp).
func appsRunSetup(t *testing.T, script string, pkgs ...string) (iso *isolation, project, scriptPath, mcpConfig string) {
	t.Helper()
	requirePeers(t)
	iso, project, scriptPath = runSetup(t, script)
	iso.writeUserConfig(t, "[agent]\nmcp_grace_ms = 60000\n")
	servers := map[string]any{}
	for _, pkg := range pkgs {
		name := map[string]string{testpeers.BasicApp: "basic", testpeers.MonitorApp: "monitor"}[pkg]
		node, entry := testpeers.App(t, pkg)
		servers[name] = map[string]any{"command": node, "args": []string{entry, "--stdio"}}
	}
	b, err := json.Marshal(map[string]any{"mcpServers": servers})
	if err != nil {
		t.Fatal(err)
	}
	return iso, project, scriptPath, writeFile(t, filepath.Join(t.TempDir(), "mcp.json"), string(b))
}
