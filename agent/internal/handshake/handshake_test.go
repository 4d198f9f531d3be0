package handshake

import (
	"encoding/json"
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

// initialize's reply offers audio and logout only when asked to, and
// always prompt queueing and steering, where the peers advertise them.
func TestReply(t *testing.T) {
	r := Reply(nil, "acpd", "v1", false, false)
	if r.ProtocolVersion != acp.ProtocolVersion(acp.ProtocolVersion1) || !r.AgentCapabilities.LoadSession || r.AgentCapabilities.PromptCapabilities.Audio || r.AgentCapabilities.Auth != nil || r.AgentInfo.Version != "v1" || len(r.AuthMethods) != 1 {
		t.Fatalf("reply %+v", r)
	}
	if r := Reply(nil, "acpd", "v1", true, true); !r.AgentCapabilities.PromptCapabilities.Audio || r.AgentCapabilities.Auth == nil || r.AgentCapabilities.Auth.Logout == nil {
		t.Fatalf("audio and logout reply %+v", r.AgentCapabilities)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var wire struct {
		AgentCapabilities struct {
			Meta struct {
				ClaudeCode struct {
					PromptQueueing bool `json:"promptQueueing"`
				} `json:"claudeCode"`
			} `json:"_meta"`
		} `json:"agentCapabilities"`
		Meta struct {
			Steering struct {
				Supported bool `json:"supported"`
			} `json:"steering"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(b, &wire); err != nil || !wire.AgentCapabilities.Meta.ClaudeCode.PromptQueueing || !wire.Meta.Steering.Supported {
		t.Errorf("queueing and steering not advertised (%v): %s", err, b)
	}
}
