//go:build unix

package mcpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"acpd/internal/testpeers"
)

// The BenchmarkTable* benchmarks are rows of acpd's performance table
// (README, "Performance"; `make bench`): each runs acpd's MCP client and a
// floor interleaved and reports both and their ratio. They measure;
// nothing asserts a limit.

// reportTable reports acpd's and the floor's time per operation (of
// perOp per benchmark iteration) in ms, their ratio and what acpd adds per
// operation in µs.
func reportTable(b *testing.B, acpd, floor time.Duration, perOp int) {
	n := float64(b.N * perOp)
	b.ReportMetric(float64(acpd.Microseconds())/1000/n, "acpd-ms")
	b.ReportMetric(float64(floor.Microseconds())/1000/n, "floor-ms")
	b.ReportMetric(float64(acpd)/float64(floor), "ratio")
	b.ReportMetric(float64((acpd-floor).Microseconds())/n, "added-µs")
}

// BenchmarkTableMCPToolsReady3 measures what a session/new with three
// stdio servers waits for before their tools are ready: from Add to the
// tools of three servers (testdata/badserver.py) being listed, with the
// era detection acpd does (server/discover, then initialize). The floor
// spawns the same three servers and does the bare initialize,
// notifications/initialized and tools/list by hand.
func BenchmarkTableMCPToolsReady3(b *testing.B) {
	var servers []Server
	for _, name := range []string{"a", "b", "c"} {
		s, _ := badServerB(b, name)
		servers = append(servers, s)
	}
	var acpd, floor time.Duration
	for b.Loop() {
		t0 := time.Now()
		m := NewManager(Options{Logger: testLogger()})
		m.Add(servers)
		m.Wait(context.Background(), time.Minute)
		if len(m.Tools()) != 12 {
			b.Fatalf("status = %+v", m.Status())
		}
		acpd += time.Since(t0)
		b.StopTimer()
		m.Close()
		b.StartTimer()
		floor += bareToolsReady(b, servers)
	}
	reportTable(b, acpd, floor, 1)
}

// bareToolsReady spawns servers at once, has each answer initialize and
// tools/list over raw JSON lines and returns the time until all have.
func bareToolsReady(b *testing.B, servers []Server) time.Duration {
	b.Helper()
	t0 := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(servers))
	cmds := make([]*exec.Cmd, len(servers))
	ins := make([]io.WriteCloser, len(servers))
	for i, s := range servers {
		cmd := exec.Command(s.Command, s.Args...)
		cmd.Env = []string{} // as the Manager's, without a BaseEnv
		in, r := startPiped(b, cmd)
		cmds[i], ins[i] = cmd, in
		wg.Add(1)
		go func() {
			defer wg.Done()
			roundTrip := func(msg string) error {
				if _, err := io.WriteString(in, msg+"\n"); err != nil {
					return err
				}
				line, err := r.ReadString('\n')
				if err != nil {
					return err
				}
				var resp struct {
					Result json.RawMessage `json:"result"`
				}
				if json.Unmarshal([]byte(line), &resp) != nil || resp.Result == nil {
					return fmt.Errorf("bad answer %q", line)
				}
				return nil
			}
			errs[i] = roundTrip(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}}`)
			if errs[i] == nil {
				_, errs[i] = io.WriteString(in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
			}
			if errs[i] == nil {
				errs[i] = roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			}
		}()
	}
	wg.Wait()
	d := time.Since(t0)
	b.StopTimer()
	for i, cmd := range cmds {
		ins[i].Close()
		_ = cmd.Wait()
		if errs[i] != nil {
			b.Fatalf("floor server %d: %v", i, errs[i])
		}
	}
	b.StartTimer()
	return d
}

// startPiped starts cmd with pipes to its stdin and from its stdout.
func startPiped(b *testing.B, cmd *exec.Cmd) (io.WriteCloser, *bufio.Reader) {
	b.Helper()
	in, errIn := cmd.StdinPipe()
	out, errOut := cmd.StdoutPipe()
	if err := errors.Join(errIn, errOut); err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return in, bufio.NewReader(out)
}

// BenchmarkTableMCPCall measures one tool call (server-everything's echo
// over stdio) through acpd's MCP client, against the MCP TypeScript
// client calling the same server directly (testdata/tscall.mjs): acpd's
// goal is to add less than 1 ms. Each iteration is a batch of calls by
// each, interleaved; the figures are per call.
func BenchmarkTableMCPCall(b *testing.B) {
	node, entry := testpeers.Everything(b)
	m := NewManager(Options{Logger: testLogger(), BaseEnv: baseEnv(node), Dir: b.TempDir()})
	defer m.Close()
	srv := Server{Name: "everything", Command: node, Args: []string{entry, "stdio"}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if errs := m.Start(ctx, []Server{srv}); len(errs) > 0 {
		b.Fatal(errs)
	}
	script, err := filepath.Abs("testdata/tscall.mjs")
	if err != nil {
		b.Fatal(err)
	}
	ts := exec.Command(node, script, testpeers.ModulesDir(b), entry)
	tsIn, r := startPiped(b, ts)
	defer func() {
		tsIn.Close()
		if err := ts.Wait(); err != nil {
			b.Errorf("tscall.mjs: %v", err)
		}
	}()
	if line, err := r.ReadString('\n'); err != nil || line != "ready\n" {
		b.Fatalf("tscall.mjs: %q, %v", line, err)
	}
	const batch = 20
	var acpd, floor time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		for range batch {
			res, err := m.Call(ctx, "mcp__everything__echo", json.RawMessage(`{"message":"x"}`))
			if err != nil || res.IsError {
				b.Fatalf("echo: %+v, %v", res, err)
			}
		}
		acpd += time.Since(t0)
		if _, err := fmt.Fprintf(tsIn, "%d\n", batch); err != nil {
			b.Fatal(err)
		}
		line, err := r.ReadString('\n')
		ns, perr := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
		if err != nil || perr != nil {
			b.Fatalf("tscall.mjs: %q, %v", line, err)
		}
		floor += time.Duration(ns)
	}
	reportTable(b, acpd, floor, batch)
}
