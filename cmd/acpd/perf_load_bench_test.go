//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"acpd/internal/loadfixture"
	"acpd/session"
)

// loadRecords is the size of the session BenchmarkTableLoad10k loads.
const loadRecords = 10_000

// pipedPeer is a process spoken to in newline-delimited JSON-RPC over its
// stdin and stdout: acpd, or a floor of session/load. Every peer is read
// the same way (lineReader), so the reading costs all three the same.
type pipedPeer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

func startPeer(b *testing.B, cmd *exec.Cmd) *pipedPeer {
	b.Helper()
	in, out := startPipedCmd(b, cmd)
	// Lines of up to 1 MiB (a tool call's result); a read larger than
	// out's buffer bypasses it.
	p := &pipedPeer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	b.Cleanup(func() {
		p.in.Close()
		done := make(chan struct{})
		go func() { io.Copy(io.Discard, p.out); close(done) }()
		_ = p.cmd.Wait()
		<-done
	})
	return p
}

// call sends a request and reads every line up to its reply, counting
// the session/update notifications before it; it fails on an error reply.
func (p *pipedPeer) call(b *testing.B, method, params string) (updates int, result []byte) {
	b.Helper()
	p.id++
	id := strconv.Itoa(p.id)
	if _, err := io.WriteString(p.in, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+params+"}\n"); err != nil {
		b.Fatal(err)
	}
	for {
		line, err := p.out.ReadSlice('\n')
		if err != nil {
			b.Fatalf("%s: reading its reply: %v", method, err)
		}
		if bytes.Contains(line, []byte(`"method":"session/update"`)) {
			updates++
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			b.Fatalf("%s: %v in %q", method, err, line)
		}
		if string(m.ID) != id {
			continue // another request of the peer's, or a notification
		}
		if m.Error != nil {
			b.Fatalf("%s: %s", method, m.Error)
		}
		return updates, m.Result
	}
}

// BenchmarkTableLoad10k: session/load of a stored session of 10,000
// records (internal/loadfixture, about 2.4 MB), from the request sent to
// its reply, with every replayed notification read over the pipe before
// it, against two floors of the whole job (read the log, parse every
// line, write every stored update as a session/update notification),
// each a process read over its stdout pipe in the same way, interleaved:
// testdata/loadfloor.js in Node and testdata/loadfloor in Go.
func BenchmarkTableLoad10k(b *testing.B) {
	if _, err := exec.LookPath("node"); err != nil {
		b.Skip("node is not installed")
	}
	iso := newIsolation(b)
	project := filepath.Join(iso.Home, "src", "project")
	if err := os.MkdirAll(project, 0o755); err != nil {
		b.Fatal(err)
	}
	store, err := session.Open(b.Context(), filepath.Join(iso.State, "acpd"))
	if err != nil {
		b.Fatal(err)
	}
	sid, path, err := loadfixture.Write(store, project, loadRecords)
	if err != nil {
		b.Fatal(err)
	}
	benchLoad(b, iso, project, sid, path, loadRecords)
}

// BenchmarkTableLoadLong500: session/load of the 500-turn session of
// the long-conversation row (LongSessionFixture: tool calls, their
// results, prose answers streamed in deltas, as acpd logged them), against
// the same two floors on its log, as BenchmarkTableLoad10k measures them.
func BenchmarkTableLoadLong500(b *testing.B) {
	if _, err := exec.LookPath("node"); err != nil {
		b.Skip("node is not installed")
	}
	ls := LongSessionFixture(b, 500, nil)
	benchLoad(b, ls.Iso, ls.Project, ls.ID, ls.Log, -1)
}

// benchLoad measures session/load of the stored session sid (cwd project,
// log at path, in iso's store) from the request sent to its reply, with
// every replayed notification read over the pipe before it, against the
// Node and Go floors of the whole job, each a process read in the same
// way, interleaved; the floors must write records notifications (any
// number, the same for both, when records < 0).
func benchLoad(b *testing.B, iso *isolation, project, sid, path string, records int) {
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is not installed")
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(acpdBinary(b))
	cmd.Env = withEnv(iso, "ACPD_DISCOVER=0", "OPENAI_API_KEY=sk-bench", "OPENAI_BASE_URL=http://127.0.0.1:9/v1", "ACPD_MODEL=openai/gpt-test")
	acpd := startPeer(b, cmd)
	acpd.call(b, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	nodeFloor := startPeer(b, exec.Command(node, "testdata/loadfloor.js"))
	goFloor := startPeer(b, exec.Command(testdataBinary(b, "loadfloor")))
	load := fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, sid, project)
	floorReq := fmt.Sprintf(`{"sessionId":%q,"path":%q}`, sid, path)
	var ta, tn, tg time.Duration
	var ua, un, ug int
	ca, cn, cg := procCPU(b, acpd.cmd.Process.Pid), procCPU(b, nodeFloor.cmd.Process.Pid), procCPU(b, goFloor.cmd.Process.Pid)
	for b.Loop() {
		t0 := time.Now()
		ua, _ = acpd.call(b, "session/load", load)
		ta += time.Since(t0)
		b.StopTimer()
		acpd.call(b, "session/close", fmt.Sprintf(`{"sessionId":%q}`, sid))
		b.StartTimer()
		t0 = time.Now()
		un, _ = nodeFloor.call(b, "session/load", floorReq)
		tn += time.Since(t0)
		t0 = time.Now()
		ug, _ = goFloor.call(b, "session/load", floorReq)
		tg += time.Since(t0)
		if un != ug || records >= 0 && un != records {
			b.Fatalf("the floors wrote %d and %d notifications, want %d", un, ug, records)
		}
	}
	// CPU time, less noisy than wall time on a shared machine (in 10 ms
	// ticks; acpd's includes its session/close).
	ca = procCPU(b, acpd.cmd.Process.Pid) - ca
	cn = procCPU(b, nodeFloor.cmd.Process.Pid) - cn
	cg = procCPU(b, goFloor.cmd.Process.Pid) - cg
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(ms(ca), "cpu-acpd-ms")
	b.ReportMetric(ms(cn), "cpu-node-ms")
	b.ReportMetric(ms(cg), "cpu-go-ms")
	b.ReportMetric(ms(ta), "acpd-ms")
	b.ReportMetric(ms(tn), "node-ms")
	b.ReportMetric(ms(tg), "go-ms")
	b.ReportMetric(float64(ta)/float64(tn), "ratio-node")
	b.ReportMetric(float64(ta)/float64(tg), "ratio-go")
	b.ReportMetric(float64(ua), "updates-acpd")
	b.ReportMetric(float64(un), "updates-floor")
	b.ReportMetric(float64(fi.Size())/1e6, "log-MB")
}
