package session

import (
	"flag"
	"log/slog"
	"os"
	"testing"

	"go.uber.org/goleak"
)

var (
	crashLoops   = flag.Int("session.crashloops", 20, "number of kill -9 rounds in TestCrashRecovery")
	procSessions = flag.Int("session.procsessions", 20, "sessions each helper process creates in TestMultiProcessIndex")
)

func TestMain(m *testing.M) {
	// Expected warnings (torn tails, rebuilt indexes) would drown the output.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if os.Getenv(helperEnv) != "" {
		// Helper processes run TestHelperProcess only and exit from it;
		// leak checking is the parent's business.
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m)
}
