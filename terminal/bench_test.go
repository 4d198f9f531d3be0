package terminal

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkPTYThroughput measures how fast output flows through a terminal
// (PTY, reader goroutine, tail buffer) compared with the same command
// writing to /dev/null. Each iteration prints -pty.benchbytes bytes.
func BenchmarkPTYThroughput(b *testing.B) {
	n := *flagBenchSize
	gen := fmt.Sprintf(`head -c %d /dev/zero | tr '\0' a`, n)
	m := NewManager(ManagerOptions{})
	b.Cleanup(func() {
		if err := m.Close(); err != nil {
			b.Error(err)
		}
	})
	run := func(b *testing.B, script string, wantOutput int) {
		b.SetBytes(n)
		ctx := context.Background()
		for b.Loop() {
			term, err := m.Start(ctx, Spec{Command: "sh", Args: []string{"-c", script}, OutputByteLimit: 1 << 20})
			if err != nil {
				b.Fatal(err)
			}
			st, err := term.WaitForExit(ctx)
			if err != nil || st.ExitCode == nil || *st.ExitCode != 0 {
				b.Fatalf("exit %s, %v", st, err)
			}
			out, err := term.Output(ctx)
			if err != nil || len(out.Output) != wantOutput {
				b.Fatalf("retained %d bytes, want %d (%v)", len(out.Output), wantOutput, err)
			}
			if err := term.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("pty", func(b *testing.B) { run(b, gen, int(min(n, 1<<20))) })
	b.Run("devnull", func(b *testing.B) { run(b, gen+" > /dev/null", 0) })
}
