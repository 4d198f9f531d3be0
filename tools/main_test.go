package tools

import (
	"testing"

	"go.uber.org/goleak"

	"acpd/sandbox"
)

func TestMain(m *testing.M) {
	// run_command starts this binary as its sandbox helper.
	sandbox.Init()
	goleak.VerifyTestMain(m)
}
