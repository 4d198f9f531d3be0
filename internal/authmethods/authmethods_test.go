package authmethods

import (
	"testing"

	"acpd/acp"
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
	if err, ok := Check("other").(*acp.Error); !ok || err.Code != int(acp.ErrorCodeInvalidParams) {
		t.Errorf("Check(other) = %v", err)
	}
}
