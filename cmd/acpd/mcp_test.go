package main

import (
	"encoding/json"
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

	// A server that cannot start is reported and the exit status is 1.
	iso.writeUserConfig(t, "[mcp_servers.nope]\ncommand = [\"/nonexistent/mcp\"]\n")
	if _, errOut, code := runCLI(t, iso.Env(), "mcp", "list"); code != 1 || errOut == "" {
		t.Fatalf("broken server: exit %d, stderr %q", code, errOut)
	}
}
