package mcpclient

import (
	"testing"

	"acpd/internal/testlayers"
)

// TestLayer: the MCP client and its OAuth client know neither ACP nor
// acpd's configuration (config converts into their types), nor do their
// tests.
func TestLayer(t *testing.T) {
	t.Parallel()
	testlayers.Forbid(t, "acpd/mcpclient/...", "acpd/config", "acpd/acp")
}
