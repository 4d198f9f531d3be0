package handshake

import (
	"testing"

	"acpd/acp"
	"acpd/acp/jsonrpc"
)

// Every client is offered the env method; the terminal method only a client
// that runs terminal auth; only the two ids are accepted.
func TestOffered(t *testing.T) {
	if ms := Offered(nil); len(ms) != 1 || ms[0].Agent == nil || ms[0].Agent.ID != Env || ms[0].Agent.Meta != nil {
		t.Fatalf("no caps: %+v", ms)
	}
	ms := Offered(&acp.ClientCapabilities{Auth: &acp.AuthCapabilities{Terminal: true}, Meta: map[string]any{"terminal-auth": true}})
	if len(ms) != 2 || ms[0].Agent.Meta["terminal-auth"] == nil || ms[1].Terminal == nil || ms[1].Terminal.ID != Login {
		t.Fatalf("terminal caps: %+v", ms)
	}
	for _, id := range []acp.AuthMethodID{Env, Login} {
		if err := Check(id); err != nil {
			t.Errorf("Check(%q) = %v", id, err)
		}
	}
	if err, ok := Check("other").(*jsonrpc.Error); !ok || err.Code != int(acp.ErrorCodeInvalidParams) {
		t.Errorf("Check(other) = %v", err)
	}
}

// initialize's reply offers audio and logout only when asked to.
func TestReply(t *testing.T) {
	r := Reply(nil, "acpd", "v1", false, false)
	if r.ProtocolVersion != acp.ProtocolVersion(acp.ProtocolVersion1) || !r.AgentCapabilities.LoadSession || r.AgentCapabilities.PromptCapabilities.Audio || r.AgentCapabilities.Auth != nil || r.AgentInfo.Version != "v1" || len(r.AuthMethods) != 1 {
		t.Fatalf("reply %+v", r)
	}
	if r := Reply(nil, "acpd", "v1", true, true); !r.AgentCapabilities.PromptCapabilities.Audio || r.AgentCapabilities.Auth == nil || r.AgentCapabilities.Auth.Logout == nil {
		t.Fatalf("audio and logout reply %+v", r.AgentCapabilities)
	}
}
