package client

import (
	"strings"
	"testing"

	"acpd/acp"
)

// An agent cannot hold more than maxTerminals terminals; releasing one
// makes room again.
func TestTerminalCap(t *testing.T) {
	_, conn, _ := newClient(t, Options{})
	create := func() (acp.CreateTerminalResponse, error) {
		var created acp.CreateTerminalResponse
		err := call(t, conn, acp.ClientMethodTerminalCreate, acp.CreateTerminalRequest{SessionID: "s", Command: "sleep", Args: []string{"300"}}, &created)
		return created, err
	}
	var first acp.CreateTerminalResponse
	for i := range maxTerminals {
		c, err := create()
		if err != nil {
			t.Fatalf("terminal %d: %v", i+1, err)
		}
		if i == 0 {
			first = c
		}
	}
	if _, err := create(); err == nil || !strings.Contains(err.Error(), "too many terminals") {
		t.Fatalf("terminal %d: got %v, want a too-many-terminals error", maxTerminals+1, err)
	}
	var rel acp.ReleaseTerminalResponse
	if err := call(t, conn, acp.ClientMethodTerminalRelease, acp.ReleaseTerminalRequest{SessionID: "s", TerminalID: first.TerminalID}, &rel); err != nil {
		t.Fatal(err)
	}
	if _, err := create(); err != nil {
		t.Fatalf("after a release: %v", err)
	}
}
