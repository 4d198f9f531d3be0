package agent

import (
	"flag"
	"log/slog"
	"os"
	"testing"

	"go.uber.org/goleak"

	"acpd/sandbox"
)

// loops is the repeat count of the race tests (cancellation, permission
// requests cut short). Raise it to hunt for rare interleavings:
//
//	go test -race -run Cancel ./agent/ -agent.loops=500
var loops = flag.Int("agent.loops", 20, "iterations of each looped race test")

func TestMain(m *testing.M) {
	// run_command starts this binary as its sandbox helper.
	sandbox.Init()
	// Session store warnings would drown the output; the agent's own logger
	// is silenced per test.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	goleak.VerifyTestMain(m)
}
