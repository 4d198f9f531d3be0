//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The long-conversation row of the performance table (make bench): a
// session of 500 turns, each a recorded turn's shape (the user asks, the
// model calls read_file, the result comes back, the model answers in
// prose), and the time from session/prompt to the model request at turn 1
// against turn 500.

// longModel is a local OpenAI Chat Completions server answering each turn
// as a recorded turn: a request whose last message is the user's gets a
// read_file call of file, one whose last message is a tool result gets a
// prose answer of about 1.5 KiB in 40 deltas. It records, for the last
// request whose last message is the user's, when it arrived (the handler's
// entry: headers read, the request's first bytes), when its body was read
// in full, and the body's size.
type longModel struct {
	srv  *httptest.Server
	file string

	bufMu sync.Mutex
	buf   bytes.Buffer // the body lastRole reads

	mu      sync.Mutex
	calls   int
	arrived time.Time
	read    time.Time
	size    int64
}

func newLongModel(tb testing.TB, file string) *longModel {
	m := &longModel{file: file}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	tb.Cleanup(m.srv.Close)
	return m
}

func (m *longModel) env(iso *isolation) []string {
	return withEnv(iso, "ACPD_DISCOVER=0", "OPENAI_API_KEY=sk-bench", "OPENAI_BASE_URL="+m.srv.URL+"/v1")
}

// longAnswer is the model's prose answer after the tool result, in deltas.
var longAnswer = func() []string {
	words := strings.Fields("The file declares the package's entry point and wires the store, the agent and the protocol " +
		"connection together; errors from each stage are wrapped with the stage's name so that a failure names what failed. " +
		"Nothing here blocks on the network: the model client is created lazily on the first prompt, and the session store " +
		"is opened read-only until a session is created. ")
	var out []string
	for i := range 40 {
		var sb strings.Builder
		for j := range 6 {
			sb.WriteString(words[(i*6+j)%len(words)])
			sb.WriteByte(' ')
		}
		out = append(out, sb.String())
	}
	return out
}()

func (m *longModel) serve(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	cr := &countingReader{r: r.Body}
	role, err := m.lastRole(cr)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	read := time.Now()
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriterSize(w, 64<<10)
	const pre = `data: {"id":"c","object":"chat.completion.chunk","created":1754000000,"model":"gpt-test","choices":[{"index":0,"delta":`
	const usage = `data: {"id":"c","object":"chat.completion.chunk","created":1754000000,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":900,"completion_tokens":60,"total_tokens":960}}` + "\n\n"
	if role == "user" {
		m.mu.Lock()
		m.calls++
		n := m.calls
		m.arrived, m.read, m.size = arrived, read, cr.n
		m.mu.Unlock()
		args, _ := json.Marshal(map[string]any{"path": m.file})
		fmt.Fprintf(bw, pre+`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_%d","type":"function","function":{"name":"read_file","arguments":""}}]},"finish_reason":null}]}`+"\n\n", n)
		q, _ := json.Marshal(string(args))
		fmt.Fprintf(bw, pre+`{"tool_calls":[{"index":0,"function":{"arguments":%s}}]},"finish_reason":null}]}`+"\n\n", q)
		fmt.Fprint(bw, pre+`{},"finish_reason":"tool_calls"}]}`+"\n\n")
	} else {
		fmt.Fprint(bw, pre+`{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n")
		for _, d := range longAnswer {
			q, _ := json.Marshal(d)
			fmt.Fprintf(bw, pre+`{"content":%s},"finish_reason":null}]}`+"\n\n", q)
		}
		fmt.Fprint(bw, pre+`{},"finish_reason":"stop"}]}`+"\n\n")
	}
	fmt.Fprint(bw, usage)
	fmt.Fprint(bw, "data: [DONE]\n\n")
	bw.Flush()
}

// lastRole reads a Chat Completions request body through to its end and
// returns the role of its last message: the last "role" key's value, which
// only a message has (a text holding the key is escaped). The body is read
// through one buffer per server rather than decoded: a late turn's body
// is 3.4 MiB, and decoding it whole (twice a turn) would load the machine
// acpd shares with this process with work that grows with the history.
func (m *longModel) lastRole(r io.Reader) (string, error) {
	m.bufMu.Lock()
	defer m.bufMu.Unlock()
	m.buf.Reset()
	if _, err := m.buf.ReadFrom(r); err != nil {
		return "", err
	}
	b := m.buf.Bytes()
	const key = `"role":"`
	i := bytes.LastIndex(b, []byte(key))
	if i < 0 {
		return "", errors.New("no messages")
	}
	rest := b[i+len(key):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return "", errors.New("a role cut short")
	}
	return string(rest[:end]), nil
}

// last returns the timings and size of the last turn's first request.
func (m *longModel) last() (arrived, read time.Time, size int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.arrived, m.read, m.size
}

// longProject makes a project directory with the file the recorded turn
// reads: a Go source file of about 4 KiB.
func longProject(tb testing.TB) (dir, file string) {
	dir = tb.TempDir()
	var sb strings.Builder
	sb.WriteString("package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\n")
	for i := range 40 {
		fmt.Fprintf(&sb, "// step%d runs stage %d of the start-up and reports its error.\nfunc step%d() error { return nil }\n\n", i, i, i)
	}
	sb.WriteString("func main() {\n\tif err := step0(); err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(1)\n\t}\n}\n")
	file = filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte(sb.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	return dir, file
}

// longTurn sends one prompt to session sid and reads to its reply, failing
// on a permission request (the session is in full mode) or an error. It
// returns when the prompt was sent.
func longTurn(tb testing.TB, p *proc, sid string, n int) time.Time {
	tb.Helper()
	params := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "Turn " + strconv.Itoa(n) + ": what does main.go do at start-up?"}}}
	t0 := time.Now()
	id := p.request("session/prompt", params)
	for {
		msg := decodeMsg(tb, p.next())
		if msg.Method == "session/request_permission" {
			tb.Fatalf("asked for permission in full mode: %s", msg.raw)
		}
		if msg.isResponse() && string(msg.ID) == id {
			if msg.Error != nil {
				tb.Fatalf("prompt: %s\nstderr:\n%s", msg.raw, p.stderr.String())
			}
			break
		}
	}
	p.got, p.sent, p.backlog = p.got[:0], p.sent[:0], p.backlog[:0]
	return t0
}

// LongSession is a session of many recorded turns in an isolated store,
// built by LongSessionFixture; its acpd has exited, so its log and index are
// as acpd leaves them.
type LongSession struct {
	Iso     *isolation
	Project string     // the session's working directory
	ID      string     // the session id
	Log     string     // the session log's path
	Model   *longModel // the model server the turns used (still serving)
	Env     []string   // acpd's environment: the store and the model
}

// LongSessionFixture builds a session of turns recorded turns by running
// them through the real binary, in full mode (nothing asks), against a
// local model server; it returns once acpd has closed the session and
// exited. Each turn is the same recorded shape: a user prompt, a read_file
// call of a 4 KiB source file, its result, a 1.5 KiB prose answer (14 log
// records). Running the turns, rather than writing a log from one turn
// replicated with fresh ids, makes the log and the index exactly what acpd
// writes, whatever their format becomes; it costs about 6–10 ms a turn.
// at, when not nil, is called after each turn n with the time its prompt
// was sent, the running acpd and the model server (for timing a turn).
func LongSessionFixture(tb testing.TB, turns int, at func(n int, sent time.Time, p *proc, m *longModel)) *LongSession {
	tb.Helper()
	project, file := longProject(tb)
	m := newLongModel(tb, file)
	iso := newIsolation(tb)
	iso.writeUserConfig(tb, "[agent]\ndefault_mode = \"full\"\n")
	env := m.env(iso)
	p := startProc(tb, env, "--model", "openai/gpt-test")
	p.initialize()
	sid := p.newSession(project)
	for n := 1; n <= turns; n++ {
		t0 := longTurn(tb, p, sid, n)
		if at != nil {
			at(n, t0, p, m)
		}
	}
	p.close()
	return &LongSession{Iso: iso, Project: project, ID: sid, Log: filepath.Join(iso.State, "acpd", "sessions", sid+".jsonl"), Model: m, Env: env}
}

// longProbes are the turns the long-conversation row reports.
var longProbes = []int{1, 2, 10, 100, 250, 500}

// BenchmarkTableLong500: a 500-turn session with tool calls, built live
// (LongSessionFixture). For the probe turns it reports the time from
// session/prompt sent to the turn's first model request arriving at the
// server (the handler's entry, server clock) and to its body read in full,
// and the body's size. Single turns are noisy on a shared machine, and
// turn 1 alone pays the first connection, so the row's ratio (ratio-avg,
// goal ≤ 2×) is the mean of turns 491–500 ("late") against the mean of
// turns 2–10 ("early"); ratio is turn 500 against turn 1 as such. It also
// reports acpd's CPU time per turn over turns 2–51 and 451–500.
func BenchmarkTableLong500(b *testing.B) {
	const turns = 500
	first := map[int]time.Duration{}
	full := map[int]time.Duration{}
	size := map[int]int64{}
	win := map[int]time.Duration{} // sum over the ten turns ending at the probe
	var cpuEarly, cpuLate, c0 time.Duration
	iters := 0
	for b.Loop() {
		iters++
		var sumLast10 []time.Duration
		LongSessionFixture(b, turns, func(n int, sent time.Time, p *proc, m *longModel) {
			if n == 1 {
				c0 = procCPU(b, p.pid())
			}
			if n == 51 {
				cpuEarly += procCPU(b, p.pid()) - c0
			}
			if n == 450 {
				c0 = procCPU(b, p.pid())
			}
			if n == 500 {
				cpuLate += procCPU(b, p.pid()) - c0
			}
			a, rd, sz := m.last()
			d := a.Sub(sent)
			sumLast10 = append(sumLast10, d)
			for _, probe := range longProbes {
				if n == probe {
					first[n] += d
					full[n] += rd.Sub(sent)
					size[n] = sz
					lo := max(0, len(sumLast10)-10)
					if n < 11 {
						lo = 1 // skip turn 1, the first connection
					}
					var s time.Duration
					for _, x := range sumLast10[lo:] {
						s += x
					}
					win[n] += s / time.Duration(max(1, len(sumLast10)-lo))
				}
			}
		})
	}
	it := float64(iters)
	for _, n := range longProbes {
		b.ReportMetric(float64(first[n].Microseconds())/it/1000, fmt.Sprintf("t%d-ms", n))
		b.ReportMetric(float64(full[n].Microseconds())/it/1000, fmt.Sprintf("t%d-body-ms", n))
		b.ReportMetric(float64(size[n])/1024, fmt.Sprintf("t%d-KiB", n))
	}
	b.ReportMetric(float64(win[10].Microseconds())/it/1000, "early-ms")
	b.ReportMetric(float64(win[500].Microseconds())/it/1000, "late-ms")
	b.ReportMetric(float64(first[500])/float64(first[1]), "ratio")
	b.ReportMetric(float64(win[500])/float64(win[10]), "ratio-avg")
	b.ReportMetric(float64(cpuEarly.Microseconds())/it/50/1000, "cpu-early-ms/turn")
	b.ReportMetric(float64(cpuLate.Microseconds())/it/50/1000, "cpu-late-ms/turn")
}
