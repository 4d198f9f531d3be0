//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Rows of the performance table at scale (make bench): twenty stdio MCP
// servers in one session, and fifty sessions streaming at once.

var (
	testdataMu   sync.Mutex
	testdataBins = map[string]string{}
)

// testdataBinary builds the command testdata/name (mcpecho, a small MCP
// server on the MCP Go SDK; sseserver, a streaming OpenAI server) once.
func testdataBinary(tb testing.TB, name string) string {
	tb.Helper()
	testdataMu.Lock()
	defer testdataMu.Unlock()
	if p, ok := testdataBins[name]; ok {
		return p
	}
	dir, err := os.MkdirTemp("", "acpd-"+name+"-")
	if err != nil {
		tb.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if out, err := exec.Command("go", "build", "-o", p, "./testdata/"+name).CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", name, err, out)
	}
	testdataBins[name] = p
	return p
}

const (
	mcpServers    = 20 // servers in the session
	mcpToolsEach  = 4  // tools mcpecho lists
	mcpCallsPerIt = 5  // tool calls per iteration
)

// mcpModel is a local OpenAI Chat Completions server for the MCP row: it
// answers a request with fewer than mcpCallsPerIt tool results by calling
// mcp__s0__echo (with arguments of its own each time), and otherwise with
// "ok". It records when each request arrives, how many MCP tools the first
// carries, and when each tool-call answer was written in full.
type mcpModel struct {
	srv *httptest.Server

	mu       sync.Mutex
	pid      int           // acpd's, for firstCPU
	firstCPU time.Duration // acpd's CPU (threadCPU) when the first request arrived
	kidsCPU  time.Duration // its children's then
	first    time.Time     // the first request's arrival
	tools    int           // MCP tools in the first request
	answered time.Time     // the last tool-call answer's end
	calls    time.Duration
	rounds   int // requests carrying tool results (calls timed)
}

func (m *mcpModel) serve(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	results := 0
	for _, msg := range req.Messages {
		if msg.Role == "tool" {
			results++
		}
	}
	m.mu.Lock()
	if results == 0 {
		m.first, m.tools = arrived, 0
		if m.pid != 0 {
			m.firstCPU = threadCPU(m.pid)
			m.kidsCPU = 0
			for _, kid := range childPids(m.pid) {
				m.kidsCPU += threadCPU(kid)
			}
		}
		for _, t := range req.Tools {
			if len(t.Function.Name) > 5 && t.Function.Name[:5] == "mcp__" {
				m.tools++
			}
		}
	} else {
		m.calls += arrived.Sub(m.answered)
		m.rounds++
	}
	m.mu.Unlock()
	if results >= mcpCallsPerIt {
		writeSSE(w, 1, func(int) string { return "ok" })
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	const pre = `data: {"id":"c","object":"chat.completion.chunk","created":1754000000,"model":"gpt-test","choices":[{"index":0,"delta":`
	fmt.Fprintf(w, pre+`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"mcp__s0__echo","arguments":""}}]},"finish_reason":null}]}`+"\n\n", results)
	// Each call's arguments differ, so that acpd's guard against a
	// model repeating itself runs them all.
	fmt.Fprintf(w, pre+`{"tool_calls":[{"index":0,"function":{"arguments":"{\"message\":\"x%d\"}"}}]},"finish_reason":null}]}`+"\n\n", results)
	fmt.Fprint(w, pre+`{},"finish_reason":"tool_calls"}]}`+"\n\n")
	fmt.Fprint(w, `data: {"id":"c","object":"chat.completion.chunk","created":1754000000,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}`+"\n\n")
	fmt.Fprint(w, "data: [DONE]\n\n")
	w.(http.Flusher).Flush()
	m.mu.Lock()
	m.answered = time.Now()
	m.mu.Unlock()
}

// BenchmarkTableMCP20: a session with twenty stdio MCP servers
// (testdata/mcpecho, four tools each). Tools ready is the time from
// session/new sent (the prompt sent right after its reply) to the first
// model request, which must carry all 80 tools; its floor is the slowest
// server's own handshake (spawn, initialize, notifications/initialized,
// tools/list as bare JSON lines) with the twenty spawned at once. A tool
// call's round trip is the time from the model's answer calling
// mcp__s0__echo being written to the next model request (with the result)
// arriving; its floor is the same tools/call sent to a server directly.
// Context, since the phase is bound by CPU on a machine with fewer cores
// than servers: the floor timed from one common start (before the first
// spawn to the last tools), acpd's CPU from session/new sent to the first
// request, and the CPU each server used by then against a bare server's
// by its tools.
func BenchmarkTableMCP20(b *testing.B) {
	bin := testdataBinary(b, "mcpecho")
	m := &mcpModel{}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	b.Cleanup(m.srv.Close)
	iso := newIsolation(b)
	iso.writeUserConfig(b, "[agent]\ndefault_mode = \"full\"\nmcp_grace_ms = 120000\n")
	env := withEnv(iso, "ACPD_DISCOVER=0", "OPENAI_API_KEY=sk-bench", "OPENAI_BASE_URL="+m.srv.URL+"/v1")
	project := b.TempDir()
	servers := make([]any, mcpServers)
	for i := range servers {
		servers[i] = map[string]any{"name": fmt.Sprintf("s%d", i), "command": bin, "args": []string{}, "env": []any{}}
	}
	var ready, floorReady, floorCommon, calls, floorCalls, cpu, kids, floorKids time.Duration
	for b.Loop() {
		p := startProc(b, env, "--model", "openai/gpt-test")
		p.initialize()
		m.mu.Lock()
		m.calls, m.rounds, m.pid = 0, 0, p.pid()
		m.mu.Unlock()
		cpu0 := threadCPU(p.pid())
		t0 := time.Now()
		var sess struct {
			SessionID string `json:"sessionId"`
		}
		p.mustCall("session/new", map[string]any{"cwd": project, "mcpServers": servers}, &sess)
		id := p.request("session/prompt", map[string]any{"sessionId": sess.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "call"}}})
		for {
			msg := decodeMsg(b, p.next())
			if msg.Method == "session/request_permission" {
				b.Fatalf("asked for permission in full mode: %s", msg.raw)
			}
			if msg.isResponse() && string(msg.ID) == id {
				if msg.Error != nil {
					b.Fatalf("prompt: %s", msg.raw)
				}
				break
			}
		}
		p.got, p.sent, p.backlog = p.got[:0], p.sent[:0], p.backlog[:0]
		m.mu.Lock()
		if m.tools != mcpServers*mcpToolsEach {
			b.Fatalf("the first model request carried %d MCP tools, want %d", m.tools, mcpServers*mcpToolsEach)
		}
		if m.rounds != mcpCallsPerIt {
			b.Fatalf("%d tool results reached the model, want %d", m.rounds, mcpCallsPerIt)
		}
		ready += m.first.Sub(t0)
		cpu += m.firstCPU - cpu0
		kids += m.kidsCPU
		calls += m.calls
		m.pid = 0
		m.mu.Unlock()
		p.close()
		fr, fcommon, fk, fc := bareMCP(b, bin, mcpServers, mcpCallsPerIt)
		floorReady += fr
		floorCommon += fcommon
		floorCalls += fc
		floorKids += fk
	}
	n := float64(b.N)
	b.ReportMetric(float64(ready.Microseconds())/1000/n, "acpd-ms")
	b.ReportMetric(float64(floorReady.Microseconds())/1000/n, "floor-ms")
	b.ReportMetric(float64(ready)/float64(floorReady), "ratio")
	b.ReportMetric(float64(floorCommon.Microseconds())/1000/n, "floor-common-ms")
	b.ReportMetric(float64(cpu.Microseconds())/1000/n, "cpu-ready-ms")
	b.ReportMetric(float64(kids.Microseconds())/1000/n/mcpServers, "cpu-server-ms")
	b.ReportMetric(float64(floorKids.Microseconds())/1000/n/mcpServers, "cpu-floor-server-ms")
	perCall := n * mcpCallsPerIt
	b.ReportMetric(float64(calls.Microseconds())/perCall, "call-acpd-µs")
	b.ReportMetric(float64(floorCalls.Microseconds())/perCall, "call-floor-µs")
	b.ReportMetric(float64((calls-floorCalls).Microseconds())/perCall, "added-µs")
}

// bareMCP spawns n servers at once and has each answer initialize and
// tools/list over raw JSON lines; it returns the slowest one's time from
// its spawn to its tools, the time from before the first spawn to the last
// tools (one common start), the servers' CPU time until then, and the time
// of calls tools/call round trips to the first server.
func bareMCP(b *testing.B, bin string, n, calls int) (slowest, common, cpu, callTime time.Duration) {
	b.Helper()
	type conn struct {
		cmd *exec.Cmd
		in  io.WriteCloser
		r   *bufio.Reader
		d   time.Duration
		err error
	}
	conns := make([]*conn, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range conns {
		c := &conn{cmd: exec.Command(bin)}
		c.cmd.Env = []string{}
		conns[i] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			var out io.ReadCloser
			if c.in, c.err = c.cmd.StdinPipe(); c.err != nil {
				return
			}
			if out, c.err = c.cmd.StdoutPipe(); c.err != nil {
				return
			}
			if c.err = c.cmd.Start(); c.err != nil {
				return
			}
			c.r = bufio.NewReader(out)
			if c.err = rawRoundTrip(c.in, c.r, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"floor","version":"1"}}}`); c.err != nil {
				return
			}
			if _, c.err = io.WriteString(c.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); c.err != nil {
				return
			}
			c.err = rawRoundTrip(c.in, c.r, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			c.d = time.Since(t0)
		}()
	}
	wg.Wait()
	common = time.Since(start)
	for i, c := range conns {
		if c.err != nil {
			b.Fatalf("floor server %d: %v", i, c.err)
		}
		slowest = max(slowest, c.d)
		cpu += threadCPU(c.cmd.Process.Pid)
	}
	for i := range calls {
		t0 := time.Now()
		if err := rawRoundTrip(conns[0].in, conns[0].r, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`, 10+i)); err != nil {
			b.Fatalf("floor tools/call: %v", err)
		}
		callTime += time.Since(t0)
	}
	for _, c := range conns {
		c.in.Close()
		_ = c.cmd.Wait()
	}
	return slowest, common, cpu, callTime
}

// rawRoundTrip writes one JSON-RPC request line and reads its result line.
func rawRoundTrip(in io.Writer, r *bufio.Reader, msg string) error {
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

const (
	streamSessions = 50     // sessions streaming at once
	streamDeltas   = 10_000 // text deltas per answer
)

// BenchmarkTableSessions50: one acpd serving 50 sessions (one connection,
// 50 session/new, then 50 session/prompt sent at once) whose answers
// stream 10,000 deltas each from a local OpenAI server
// (testdata/sseserver, its own process), against 50 bare SSE clients
// (goroutines of the test process) reading the same answers at once. Wall
// time is from the first prompt (request) sent to the last reply (end of
// stream); CPU time is acpd's (/proc/PID/stat) against the test process's
// own (getrusage) while only the bare clients run in it. The first-chunk
// figures are delays from the server flushing an answer's first text
// delta (it prints when) to the client receiving that session's first
// text chunk, against the same to a bare client decoding it: the largest
// of the 50, which start together, and that of a 51st session prompted
// once all 50 stream (its answer is one delta), the one the others delay.
// Memory: acpd's RSS growth per idle session (after the 50 session/new),
// and its peak (VmHWM) against the goal of its RSS before the sessions
// plus 64 KiB per session plus the answers in flight.
func BenchmarkTableSessions50(b *testing.B) {
	srv := exec.Command(testdataBinary(b, "sseserver"), "-deltas", strconv.Itoa(streamDeltas))
	srvIn, srvOut := startPipedCmd(b, srv)
	line, err := srvOut.ReadString('\n')
	if err != nil {
		b.Fatalf("sseserver: %v", err)
	}
	base := strings.TrimSpace(line)
	b.Cleanup(func() {
		srvIn.Close()
		_ = srv.Wait()
	})
	total := 0
	for i := range streamDeltas {
		total += len("tok" + strconv.Itoa(i%10) + " ")
	}
	iso := newIsolation(b)
	env := withEnv(iso, "ACPD_DISCOVER=0", "OPENAI_API_KEY=sk-bench", "OPENAI_BASE_URL="+base+"/v1")
	project := b.TempDir()
	var wall, floorWall, cpu, floorCPU, first, floorFirst, late, floorLate time.Duration
	var idleKiB, peakMiB, goalMiB float64
	for b.Loop() {
		p := startProc(b, env, "--model", "openai/gpt-test")
		p.initialize()
		rss0 := procStatus(b, p.pid(), "VmRSS")
		sids := make([]string, streamSessions+1) // the last is the late one
		for i := range sids {
			sids[i] = p.newSession(project)
			p.got, p.sent, p.backlog = p.got[:0], p.sent[:0], p.backlog[:0]
		}
		rssIdle := procStatus(b, p.pid(), "VmRSS")
		idleKiB += float64(rssIdle-rss0) / float64(len(sids))
		cpu0 := procCPU(b, p.pid())
		w, recv := promptMany(b, p, sids[:streamSessions], sids[streamSessions], total)
		cpu += procCPU(b, p.pid()) - cpu0
		f, l := firstDelay(b, srvOut, recv)
		wall += w
		first += f
		late += l
		peak := procStatus(b, p.pid(), "VmHWM")
		peakMiB += float64(peak) / 1024
		goalMiB += (float64(rss0) + streamSessions*(64+float64(total)/1024)) / 1024
		p.close()

		c0 := selfCPU(b)
		w, recv = bareMany(b, base, streamSessions, total)
		floorCPU += selfCPU(b) - c0
		f, l = firstDelay(b, srvOut, recv)
		floorWall += w
		floorFirst += f
		floorLate += l
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	b.ReportMetric(ms(wall), "acpd-ms")
	b.ReportMetric(ms(floorWall), "floor-ms")
	b.ReportMetric(float64(wall)/float64(floorWall), "ratio")
	b.ReportMetric(ms(cpu), "cpu-acpd-ms")
	b.ReportMetric(ms(floorCPU), "cpu-floor-ms")
	b.ReportMetric(float64(cpu)/float64(floorCPU), "cpu-ratio")
	b.ReportMetric(ms(first), "first-acpd-ms")
	b.ReportMetric(ms(floorFirst), "first-floor-ms")
	b.ReportMetric(ms(late), "late-acpd-ms")
	b.ReportMetric(ms(floorLate), "late-floor-ms")
	b.ReportMetric(idleKiB/n, "KiB/session")
	b.ReportMetric(peakMiB/n, "peak-MiB")
	b.ReportMetric(goalMiB/n, "goal-MiB")
}

// promptMany sends a prompt to every session of sids at once, then one to
// the late session once all have received text, and reads until all have
// replied, checking the text each received (total bytes; the late one's
// one delta). It returns the time from the first prompt sent to the last
// reply, and when each session's first text chunk arrived, by the key its
// prompt gives the model server (its index; "late").
func promptMany(b *testing.B, p *proc, sids []string, lateSID string, total int) (wall time.Duration, recv map[string]time.Time) {
	b.Helper()
	type turn struct {
		key   string
		first time.Time
		text  int
	}
	turns := make(map[string]*turn, len(sids)+1)
	ids := make(map[string]string, len(sids)+1) // request id → session id
	prompt := func(sid, key string) {
		turns[sid] = &turn{key: key}
		ids[p.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "bench-key-" + key}}})] = sid
	}
	t0 := time.Now()
	for i, sid := range sids {
		prompt(sid, strconv.Itoa(i))
	}
	started := 0
	for pending := len(sids) + 1; pending > 0; {
		line := p.next()
		now := time.Now()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Error  json.RawMessage `json:"error"`
			Params struct {
				SessionID string `json:"sessionId"`
				updateParams
			} `json:"params"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			b.Fatal(err)
		}
		if m.Error != nil {
			b.Fatalf("prompt failed: %s", line)
		}
		if sid, ok := ids[string(m.ID)]; ok && m.ID != nil {
			want := total
			if sid == lateSID {
				want = len("tok0 ")
			}
			if got := turns[sid].text; got != want {
				b.Fatalf("session %s received %d bytes of text, want %d", sid, got, want)
			}
			pending--
			continue
		}
		if t := turns[m.Params.SessionID]; t != nil && m.Params.Update.Kind == "agent_message_chunk" {
			if t.first.IsZero() {
				t.first = now
				if started++; started == len(sids) {
					prompt(lateSID, "late")
				}
			}
			t.text += len(m.Params.Update.Content.Text)
		}
		p.got, p.sent, p.backlog = p.got[:0], p.sent[:0], p.backlog[:0]
	}
	wall = time.Since(t0)
	recv = make(map[string]time.Time, len(turns))
	for _, t := range turns {
		recv[t.key] = t.first
	}
	p.got, p.sent, p.backlog = p.got[:0], p.sent[:0], p.backlog[:0]
	return wall, recv
}

// firstDelay reads the server's line for each answer in recv (its key and
// when it flushed the first text delta) and returns the largest delay from
// that flush to the client's first chunk, and the late answer's.
func firstDelay(b *testing.B, srvOut *bufio.Reader, recv map[string]time.Time) (worst, late time.Duration) {
	b.Helper()
	for range recv {
		line, err := srvOut.ReadString('\n')
		if err != nil {
			b.Fatalf("sseserver: %v", err)
		}
		key, ns, _ := strings.Cut(strings.TrimSpace(line), " ")
		sent, err := strconv.ParseInt(ns, 10, 64)
		got, ok := recv[key]
		if err != nil || !ok || got.IsZero() {
			b.Fatalf("sseserver printed %q; no first chunk for it", line)
		}
		if d := got.Sub(time.Unix(0, sent)); key == "late" {
			late = d
		} else {
			worst = max(worst, d)
		}
	}
	return worst, late
}

// bareMany is the floor of promptMany: n bare SSE clients reading the
// answer from base at once, decoding every delta, and a late one once
// all have decoded their first. It returns the time until all are done
// and when each got its first delta, by its key.
func bareMany(b *testing.B, base string, n, total int) (wall time.Duration, recv map[string]time.Time) {
	b.Helper()
	firsts := make([]time.Time, n+1)
	errs := make([]error, n+1)
	var wg, started sync.WaitGroup
	started.Add(n)
	client := func(i int, key string, want int) {
		defer wg.Done()
		got, f, err := bareStream(base, key, func() {
			if i < n {
				started.Done()
			}
		})
		if err == nil && got != want {
			err = fmt.Errorf("read %d bytes of text, want %d", got, want)
		}
		if err != nil && i < n && f.IsZero() {
			started.Done()
		}
		firsts[i], errs[i] = f, err
	}
	t0 := time.Now()
	wg.Add(n + 1)
	for i := range n {
		go client(i, strconv.Itoa(i), total)
	}
	started.Wait()
	go client(n, "late", len("tok0 "))
	wg.Wait()
	wall = time.Since(t0)
	recv = make(map[string]time.Time, n+1)
	for i := range n + 1 {
		if errs[i] != nil {
			b.Fatalf("bare client %d: %v", i, errs[i])
		}
		key := strconv.Itoa(i)
		if i == n {
			key = "late"
		}
		recv[key] = firsts[i]
	}
	return wall, recv
}

// bareStream reads one answer as bareRead does, asking with key, and
// returns its text's length and when its first text delta was decoded
// (calling onFirst then).
func bareStream(base, key string, onFirst func()) (n int, first time.Time, err error) {
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"bench-key-`+key+`"}]}`))
	if err != nil {
		return 0, first, err
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, rerr := br.ReadSlice('\n')
		if d, ok := bytes.CutPrefix(line, []byte("data: {")); ok {
			var c struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if jerr := json.Unmarshal(append([]byte("{"), d...), &c); jerr != nil {
				return n, first, jerr
			}
			for _, ch := range c.Choices {
				if n == 0 && ch.Delta.Content != "" {
					first = time.Now()
					onFirst()
				}
				n += len(ch.Delta.Content)
			}
		}
		if rerr == io.EOF {
			return n, first, nil
		}
		if rerr != nil {
			return n, first, rerr
		}
	}
}

// startPipedCmd starts cmd with pipes to its stdin and from its stdout.
func startPipedCmd(b *testing.B, cmd *exec.Cmd) (io.WriteCloser, *bufio.Reader) {
	b.Helper()
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return in, bufio.NewReader(out)
}

// procCPU returns the user and system CPU time of process pid so far
// (/proc/PID/stat, in clock ticks of 10 ms).
func procCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command's closing parenthesis: state is the 3rd
	// field of the line, utime the 14th, stime the 15th.
	rest := string(data[bytes.LastIndexByte(data, ')')+2:])
	f := strings.Fields(rest)
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// threadCPU returns the CPU time process pid's threads have run so far
// (/proc/PID/task/*/schedstat, in nanoseconds; threads that ended are not
// counted), 0 if the process is gone.
func threadCPU(pid int) time.Duration {
	dirs, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var total time.Duration
	for _, d := range dirs {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, d.Name()))
		if err != nil {
			continue
		}
		f := strings.Fields(string(data))
		if len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			total += time.Duration(ns)
		}
	}
	return total
}

// childPids returns the pids of process pid's children
// (/proc/PID/task/*/children).
func childPids(pid int) []int {
	dirs, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var pids []int
	for _, d := range dirs {
		data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, d.Name()))
		for _, f := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(f); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

// selfCPU returns the test process's user and system CPU time so far.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
