package terminal

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
)

var (
	flagLoops     = flag.Int("pty.loops", 100, "iterations of the fast-exit output test")
	flagBenchSize = flag.Int64("pty.benchbytes", 16<<20, "bytes printed per BenchmarkPTYThroughput iteration")
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
