package mcpclient

import (
	"path/filepath"
	"testing"

	"acpd/mcpclient/oauth"
)

// TestWithStoredOAuth: the stored tokens' setup goes to the streamable
// HTTP servers without an Authorization header of their own.
func TestWithStoredOAuth(t *testing.T) {
	s := oauth.OpenTokenStore(filepath.Join(t.TempDir(), "acpd", "mcp-tokens.json"))
	servers := WithStoredOAuth([]Server{
		{Name: "h", URL: "https://h.example/mcp", Transport: TransportHTTP},
		{Name: "k", URL: "https://k.example/mcp", Transport: TransportHTTP, Headers: map[string]string{"authorization": "Bearer x"}},
		{Name: "s", Command: "srv"},
	}, s, nil)
	if servers[0].OAuth == nil || servers[1].OAuth != nil || servers[2].OAuth != nil {
		t.Errorf("WithStoredOAuth = %+v", servers)
	}
}
