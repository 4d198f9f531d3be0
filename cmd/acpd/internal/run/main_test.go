package run

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind (the
// live view's ticker, the terminal reader, the MCP Apps host).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
