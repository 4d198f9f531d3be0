//go:build unix

package mcpclient

import (
	"context"
	"testing"
	"time"
)

// BenchmarkToolsReady3Stdio measures the time from Add to the tools of
// three stdio servers (testdata/badserver.py) being ready: a session's
// "time to tools ready".
func BenchmarkToolsReady3Stdio(b *testing.B) {
	var servers []Server
	for _, name := range []string{"a", "b", "c"} {
		s, _ := badServerB(b, name)
		servers = append(servers, s)
	}
	for b.Loop() {
		m := NewManager(Options{Logger: testLogger()})
		m.Add(servers)
		for {
			m.Wait(context.Background(), time.Minute)
			if len(m.Tools()) == 12 {
				break
			}
			b.Fatalf("status = %+v", m.Status())
		}
		b.StopTimer()
		m.Close()
		b.StartTimer()
	}
}

// BenchmarkCallRoundTrip measures one tool call through the Manager to a
// stdio server and back.
func BenchmarkCallRoundTrip(b *testing.B) {
	s, _ := badServerB(b, "echo")
	m := NewManager(Options{Logger: testLogger()})
	defer m.Close()
	if errs := m.Start(context.Background(), []Server{s}); len(errs) > 0 {
		b.Fatal(errs)
	}
	for b.Loop() {
		if _, err := m.Call(context.Background(), "mcp__echo__echo", []byte(`{"text":"x"}`)); err != nil {
			b.Fatal(err)
		}
	}
}
