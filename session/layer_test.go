package session

import (
	"testing"

	"acpd/internal/testlayers"
)

// TestLayer: the store knows neither ACP nor acpd's configuration (its
// callers hand it plain values), nor do its tests.
func TestLayer(t *testing.T) {
	t.Parallel()
	testlayers.Forbid(t, "acpd/session/...", "acpd/config", "acpd/acp")
}
