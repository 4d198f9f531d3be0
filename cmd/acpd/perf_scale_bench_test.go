//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Rows of the performance table at scale (make bench): twenty stdio MCP
// servers in one session, and fifty sessions streaming at once.

var (
	mcpEchoOnce sync.Once
	mcpEchoPath string
	mcpEchoErr  error
)

// mcpEchoBinary builds testdata/mcpecho, a small MCP server on the MCP Go
// SDK, once.
func mcpEchoBinary(tb testing.TB) string {
	tb.Helper()
	mcpEchoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "acpd-mcpecho-")
		if err != nil {
			mcpEchoErr = err
			return
		}
		mcpEchoPath = filepath.Join(dir, "mcpecho")
		out, err := exec.Command("go", "build", "-o", mcpEchoPath, "./testdata/mcpecho").CombinedOutput()
		if err != nil {
			mcpEchoErr = fmt.Errorf("go build mcpecho: %v\n%s", err, out)
		}
	})
	if mcpEchoErr != nil {
		tb.Fatal(mcpEchoErr)
	}
	return mcpEchoPath
}

const (
	mcpServers    = 20 // servers in the session
	mcpToolsEach  = 4  // tools mcpecho lists
	mcpCallsPerIt = 5  // tool calls per iteration
)

// mcpModel is a local OpenAI Chat Completions server for the MCP row: it
// answers a request with fewer than mcpCallsPerIt tool results by calling
// mcp__s0__echo, and otherwise with "ok". It records when each request
// arrives, how many MCP tools the first carries, and when each tool-call
// answer was written in full.
type mcpModel struct {
	srv *httptest.Server

	mu       sync.Mutex
	first    time.Time // the first request's arrival
	tools    int       // MCP tools in the first request
	answered time.Time // the last tool-call answer's end
	calls    time.Duration
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
		for _, t := range req.Tools {
			if len(t.Function.Name) > 5 && t.Function.Name[:5] == "mcp__" {
				m.tools++
			}
		}
	} else {
		m.calls += arrived.Sub(m.answered)
	}
	m.mu.Unlock()
	if results >= mcpCallsPerIt {
		writeSSE(w, 1, func(int) string { return "ok" })
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	const pre = `data: {"id":"c","object":"chat.completion.chunk","created":1754000000,"model":"gpt-test","choices":[{"index":0,"delta":`
	fmt.Fprintf(w, pre+`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"mcp__s0__echo","arguments":""}}]},"finish_reason":null}]}`+"\n\n", results)
	fmt.Fprint(w, pre+`{"tool_calls":[{"index":0,"function":{"arguments":"{\"message\":\"x\"}"}}]},"finish_reason":null}]}`+"\n\n")
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
func BenchmarkTableMCP20(b *testing.B) {
	bin := mcpEchoBinary(b)
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
	var ready, floorReady, calls, floorCalls time.Duration
	for b.Loop() {
		p := startProc(b, env, "--model", "openai/gpt-test")
		p.initialize()
		m.mu.Lock()
		m.calls = 0
		m.mu.Unlock()
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
		ready += m.first.Sub(t0)
		calls += m.calls
		m.mu.Unlock()
		p.close()
		fr, fc := bareMCP(b, bin, mcpServers, mcpCallsPerIt)
		floorReady += fr
		floorCalls += fc
	}
	n := float64(b.N)
	b.ReportMetric(float64(ready.Microseconds())/1000/n, "acpd-ms")
	b.ReportMetric(float64(floorReady.Microseconds())/1000/n, "floor-ms")
	b.ReportMetric(float64(ready)/float64(floorReady), "ratio")
	perCall := n * mcpCallsPerIt
	b.ReportMetric(float64(calls.Microseconds())/perCall, "call-acpd-µs")
	b.ReportMetric(float64(floorCalls.Microseconds())/perCall, "call-floor-µs")
	b.ReportMetric(float64((calls-floorCalls).Microseconds())/perCall, "added-µs")
}

// bareMCP spawns n servers at once and has each answer initialize and
// tools/list over raw JSON lines; it returns the slowest one's time from
// its spawn to its tools, and the time of calls tools/call round trips to
// the first server.
func bareMCP(b *testing.B, bin string, n, calls int) (slowest, callTime time.Duration) {
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
	for i, c := range conns {
		if c.err != nil {
			b.Fatalf("floor server %d: %v", i, c.err)
		}
		slowest = max(slowest, c.d)
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
	return slowest, callTime
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
