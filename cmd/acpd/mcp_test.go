package main

import (
	"encoding/json"
	"strings"
	"testing"

	"acpd/internal/testpeers"
)

func TestMCPList(t *testing.T) {
	node, entry := testpeers.Everything(t)
	iso := newIsolation(t)
	cmd, _ := json.Marshal([]string{node, entry, "stdio"})
	iso.writeUserConfig(t, "[mcp_servers.everything]\ncommand = "+string(cmd)+"\n")
	out, errOut, code := runCLI(t, iso.Env(), "mcp", "list", "--json")
	if code != 0 {
		t.Fatalf("mcp list: exit %d\n%s%s", code, out, errOut)
	}
	var tools []struct {
		Name, Server, Tool string
		ReadOnly           bool
	}
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	found := false
	for _, tl := range tools {
		found = found || (tl.Name == "mcp__everything__echo" && tl.Server == "everything" && tl.Tool == "echo")
	}
	if !found {
		t.Fatalf("mcp__everything__echo not listed:\n%s", out)
	}

	// The servers' state, and the text form with both tables.
	out, errOut, code = runCLI(t, iso.Env(), "mcp", "list", "--servers", "--json")
	if code != 0 {
		t.Fatalf("mcp list --servers: exit %d\n%s%s", code, out, errOut)
	}
	var status []struct {
		Name, State, ProtocolVersion, Era string
		Tools                             int
	}
	if err := json.Unmarshal([]byte(out), &status); err != nil || len(status) != 1 || status[0].State != "ready" || status[0].ProtocolVersion == "" || status[0].Tools == 0 ||
		status[0].Era != map[bool]string{true: "stateless", false: "initialize"}[status[0].ProtocolVersion == "2026-07-28"] {
		t.Fatalf("servers = %+v (%v)\n%s", status, err, out)
	}
	out, _, code = runCLI(t, iso.Env(), "mcp", "list")
	if code != 0 || !strings.Contains(out, "SERVER") || !strings.Contains(out, "ERA") || !strings.Contains(out, status[0].Era) || !strings.Contains(out, "ready") || !strings.Contains(out, "mcp__everything__echo") {
		t.Fatalf("mcp list: exit %d\n%s", code, out)
	}

	// One tool call.
	out, errOut, code = runCLI(t, iso.Env(), "mcp", "call", "everything", "echo", `{"message":"from the CLI"}`)
	if code != 0 || !strings.Contains(out, "Echo: from the CLI") {
		t.Fatalf("mcp call: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code := runCLI(t, iso.Env(), "mcp", "call", "everything", "no-such-tool"); code == 0 || !strings.Contains(errOut, "no tool") {
		t.Fatalf("mcp call of a missing tool: exit %d, stderr %q", code, errOut)
	}

	// login is for HTTP servers; logout without tokens says so.
	if _, errOut, code := runCLI(t, iso.Env(), "mcp", "login", "everything"); code == 0 || !strings.Contains(errOut, "not a streamable HTTP server") {
		t.Fatalf("mcp login of a stdio server: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := runCLI(t, iso.Env(), "mcp", "logout", "everything"); code != 0 || !strings.Contains(errOut, "no stored tokens") {
		t.Fatalf("mcp logout: exit %d, stderr %q", code, errOut)
	}

	// A server with a grant of its own needs no login.
	iso.writeUserConfig(t, "[mcp_servers.svc]\nurl = \"https://svc.example/mcp\"\n[mcp_servers.svc.oauth]\ngrant = \"jwt_bearer\"\nassertion_file = \"/nonexistent/token\"\n")
	if out, errOut, code := runCLI(t, iso.Env(), "mcp", "login", "svc"); code != 0 || !strings.Contains(out, "needs no login") {
		t.Fatalf("mcp login of a server with a grant: exit %d\n%s%s", code, out, errOut)
	}

	// A server that cannot start is reported and the exit status is 1.
	iso.writeUserConfig(t, "[mcp_servers.nope]\ncommand = [\"/nonexistent/mcp\"]\n")
	if _, errOut, code := runCLI(t, iso.Env(), "mcp", "list"); code != 1 || errOut == "" {
		t.Fatalf("broken server: exit %d, stderr %q", code, errOut)
	}
}
