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
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"acpd/session"
)

// The BenchmarkTable* benchmarks reproduce the rows of acpd's performance
// table (README, "Performance"): each runs acpd and its floor interleaved in
// one loop and reports acpd, floor and their ratio as metrics, which
// `make bench` prints as a table. They measure; nothing asserts a limit.

var (
	floorOnce sync.Once
	floorPath string
	floorErr  error
)

// floorBinary builds the same-dependencies floor (internal/floor) once.
func floorBinary(tb testing.TB) string {
	tb.Helper()
	floorOnce.Do(func() {
		dir, err := os.MkdirTemp("", "acpd-floor-")
		if err != nil {
			floorErr = err
			return
		}
		floorPath = filepath.Join(dir, "floor")
		out, err := exec.Command("go", "build", "-o", floorPath, "./internal/floor").CombinedOutput()
		if err != nil {
			floorErr = fmt.Errorf("go build floor: %v\n%s", err, out)
		}
	})
	if floorErr != nil {
		tb.Fatal(floorErr)
	}
	return floorPath
}

// fillStore writes n closed sessions into the store of iso, as years of use
// leave it: a log per session and the index snapshot (the documented
// version 1 formats, written directly: creating them one by one would cost
// minutes of fsyncs).
func fillStore(tb testing.TB, iso *isolation, n int) {
	tb.Helper()
	dir := filepath.Join(iso.State, "acpd")
	if err := os.MkdirAll(filepath.Join(dir, "sessions"), 0o700); err != nil {
		tb.Fatal(err)
	}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	metas := make(map[string]session.Meta, n)
	for i := range n {
		id := fmt.Sprintf("s_%016x", i)
		m := session.Meta{ID: id, Cwd: fmt.Sprintf("/src/p%d", i%50), Title: fmt.Sprintf("session %d", i),
			CreatedAt: t0.Add(time.Duration(i) * time.Minute), UpdatedAt: t0.Add(time.Duration(i)*time.Minute + time.Second), Records: 1}
		hdr, _ := json.Marshal(map[string]any{"v": 1, "kind": "header", "id": id, "cwd": m.Cwd, "createdAt": m.CreatedAt})
		rec := fmt.Sprintf(`{"seq":1,"t":%q,"kind":"update","data":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello"},"messageId":"m_1"}}`, m.UpdatedAt.Format(time.RFC3339Nano))
		if err := os.WriteFile(filepath.Join(dir, "sessions", id+".jsonl"), []byte(string(hdr)+"\n"+rec+"\n"), 0o600); err != nil {
			tb.Fatal(err)
		}
		metas[id] = m
	}
	idx, err := json.Marshal(struct {
		V        int                     `json:"v"`
		Sessions map[string]session.Meta `json:"sessions"`
	}{1, metas})
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.json"), append(idx, '\n'), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// spawnInit spawns bin in env, sends initialize, reads the reply, closes
// stdin and waits; it returns the time to the reply.
func spawnInit(tb testing.TB, bin string, env []string) time.Duration {
	tb.Helper()
	cmd := exec.Command(bin)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	if _, err := stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n")); err != nil {
		tb.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	var got []byte
	for !bytes.Contains(got, []byte("\n")) {
		n, err := stdout.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			tb.Fatalf("reading the initialize reply: %v (%q)", err, got)
		}
	}
	d := time.Since(t0)
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		tb.Fatal(err)
	}
	return d
}

func report(b *testing.B, acpd, floor time.Duration, unit string) {
	b.ReportMetric(float64(acpd.Microseconds())/1000/float64(b.N), "acpd-"+unit)
	b.ReportMetric(float64(floor.Microseconds())/1000/float64(b.N), "floor-"+unit)
	b.ReportMetric(float64(acpd)/float64(floor), "ratio")
}

// BenchmarkTableSpawnEmpty: spawn → initialize reply with an empty store,
// against the same-dependencies floor.
func BenchmarkTableSpawnEmpty(b *testing.B) {
	iso := newIsolation(b)
	bin, floor := acpdBinary(b), floorBinary(b)
	var ta, tf time.Duration
	for b.Loop() {
		ta += spawnInit(b, bin, iso.Env())
		tf += spawnInit(b, floor, iso.Env())
	}
	report(b, ta, tf, "ms")
}

// BenchmarkTableSpawn10k: spawn → initialize with 10,000 stored sessions,
// against an empty store.
func BenchmarkTableSpawn10k(b *testing.B) {
	full, empty := newIsolation(b), newIsolation(b)
	fillStore(b, full, 10_000)
	bin := acpdBinary(b)
	var ta, tf time.Duration
	for b.Loop() {
		ta += spawnInit(b, bin, full.Env())
		tf += spawnInit(b, bin, empty.Env())
	}
	report(b, ta, tf, "ms")
}

// benchSessionNew: session/new with a store of n sessions, against an empty
// store, on two running processes.
func benchSessionNew(b *testing.B, n int) {
	full, empty := newIsolation(b), newIsolation(b)
	fillStore(b, full, n)
	project := b.TempDir()
	pa, pf := startProc(b, full.Env()), startProc(b, empty.Env())
	pa.initialize()
	pf.initialize()
	var ta, tf time.Duration
	for b.Loop() {
		for _, x := range []struct {
			p *proc
			t *time.Duration
		}{{pa, &ta}, {pf, &tf}} {
			t0 := time.Now()
			x.p.newSession(project)
			*x.t += time.Since(t0)
			x.p.backlog, x.p.got, x.p.sent = x.p.backlog[:0], x.p.got[:0], x.p.sent[:0]
		}
	}
	report(b, ta, tf, "ms")
	b.StopTimer()
	pa.close()
	pf.close()
}

func BenchmarkTableSessionNew1k(b *testing.B)  { benchSessionNew(b, 1000) }
func BenchmarkTableSessionNew10k(b *testing.B) { benchSessionNew(b, 10_000) }

// BenchmarkTableList1k: session/list of 1,000 sessions, against reading
// and parsing the index snapshot (the cheapest a list can be).
func BenchmarkTableList1k(b *testing.B) {
	iso := newIsolation(b)
	fillStore(b, iso, 1000)
	p := startProc(b, iso.Env())
	p.initialize()
	var ta, tf time.Duration
	for b.Loop() {
		t0 := time.Now()
		p.mustCall("session/list", map[string]any{}, nil)
		ta += time.Since(t0)
		p.backlog, p.got, p.sent = p.backlog[:0], p.got[:0], p.sent[:0]
		t0 = time.Now()
		data, err := os.ReadFile(filepath.Join(iso.State, "acpd", "index.json"))
		if err != nil {
			b.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
		tf += time.Since(t0)
	}
	report(b, ta, tf, "ms")
	b.StopTimer()
	p.close()
}

// promptAll sends a prompt and reads until its reply, returning the text of
// the agent_message_chunk updates received.
func promptAll(b *testing.B, p *proc, sid string) int {
	id := p.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "stream"}}})
	n := 0
	for {
		line := p.next()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Params updateParams    `json:"params"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			b.Fatal(err)
		}
		if string(m.ID) == id {
			break
		}
		if m.Params.Update.Kind == "agent_message_chunk" {
			n += len(m.Params.Update.Content.Text)
		}
	}
	p.got, p.sent, p.backlog = p.got[:0], p.sent[:0], p.backlog[:0]
	return n
}

// BenchmarkTableStream100k: 100,000 text deltas from a local OpenAI
// Chat Completions server to the client, end to end, against a bare SSE
// client reading the same response; also the session log's size per byte
// of text.
func BenchmarkTableStream100k(b *testing.B) {
	const deltas = 100_000
	m, total := newSSEModel(b, deltas, func(i int) string { return "tok" + strconv.Itoa(i%10) + " " })
	iso := newIsolation(b)
	project := b.TempDir()
	p := startProc(b, m.env(iso), "--model", "openai/gpt-test")
	p.initialize()
	var ta, tf time.Duration
	var logBytes int64
	for b.Loop() {
		sid := p.newSession(project)
		p.backlog = p.backlog[:0]
		t0 := time.Now()
		if got := promptAll(b, p, sid); got != total {
			b.Fatalf("received %d bytes of text, want %d", got, total)
		}
		ta += time.Since(t0)
		fi, err := os.Stat(filepath.Join(iso.State, "acpd", "sessions", sid+".jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		logBytes = fi.Size()
		t0 = time.Now()
		if got := m.bareRead(b); got != total {
			b.Fatalf("bare client read %d bytes of text, want %d", got, total)
		}
		tf += time.Since(t0)
	}
	report(b, ta, tf, "ms")
	b.ReportMetric(float64(logBytes)/float64(total), "log/text")
	b.StopTimer()
	p.close()
}

// sseModel is a local OpenAI Chat Completions server whose every response
// streams deltas text deltas (text(i)), generated on the fly.
type sseModel struct {
	srv    *httptest.Server
	deltas int
	text   func(i int) string
}

func newSSEModel(b *testing.B, deltas int, text func(i int) string) (*sseModel, int) {
	m := &sseModel{deltas: deltas, text: text}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	b.Cleanup(m.srv.Close)
	total := 0
	for i := range deltas {
		total += len(text(i))
	}
	return m, total
}

func (m *sseModel) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	writeSSE(w, m.deltas, m.text)
}

// writeSSE writes a Chat Completions stream of deltas text deltas
// (text(i)), generated on the fly.
func writeSSE(w http.ResponseWriter, deltas int, text func(i int) string) {
	w.Header().Set("Content-Type", "text/event-stream")
	bw := bufio.NewWriterSize(w, 64<<10)
	const pre = `data: {"id":"c","object":"chat.completion.chunk","created":1754000000,"model":"gpt-test","choices":[{"index":0,"delta":`
	const post = `,"finish_reason":null}]}` + "\n\n"
	fmt.Fprint(bw, pre+`{"role":"assistant","content":""}`+post)
	for i := range deltas {
		q, _ := json.Marshal(text(i))
		bw.WriteString(pre + `{"content":`)
		bw.Write(q)
		bw.WriteString(`}` + post)
	}
	fmt.Fprint(bw, `data: {"id":"c","object":"chat.completion.chunk","created":1754000000,"model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n")
	fmt.Fprint(bw, `data: {"id":"c","object":"chat.completion.chunk","created":1754000000,"model":"gpt-test","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}`+"\n\n")
	fmt.Fprint(bw, "data: [DONE]\n\n")
	bw.Flush()
}

// env returns acpd's environment for using m as its model.
func (m *sseModel) env(iso *isolation) []string {
	return withEnv(iso, "ACPD_DISCOVER=0", "OPENAI_API_KEY=sk-bench", "OPENAI_BASE_URL="+m.srv.URL+"/v1")
}

// bareRead is the floor of streaming: a bare SSE client reading the same
// response and decoding every delta. It returns the text's length.
func (m *sseModel) bareRead(b *testing.B) int {
	resp, err := http.Post(m.srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if d, ok := bytes.CutPrefix(line, []byte("data: {")); ok {
			var c struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if jerr := json.Unmarshal(append([]byte("{"), d...), &c); jerr != nil {
				b.Fatal(jerr)
			}
			for _, ch := range c.Choices {
				n += len(ch.Delta.Content)
			}
		}
		if err != nil {
			return n
		}
	}
}

// procStatus returns a field of /proc/PID/status in KiB.
func procStatus(b *testing.B, pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

func inotifyFDs(pid int) int {
	ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name())); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// BenchmarkTableIdle100: RSS per idle session (100 sessions opened by
// session/new, RSS growth divided by 100) and the process's inotify
// instances.
func BenchmarkTableIdle100(b *testing.B) {
	var perSession, inotify float64
	for b.Loop() {
		iso := newIsolation(b)
		project := b.TempDir()
		writeFile(b, filepath.Join(project, "main.go"), "package main\n")
		p := startProc(b, iso.Env())
		p.initialize()
		p.newSession(project)
		before := procStatus(b, p.pid(), "VmRSS")
		for range 100 {
			p.newSession(project)
			p.backlog, p.got, p.sent = p.backlog[:0], p.got[:0], p.sent[:0]
		}
		time.Sleep(200 * time.Millisecond)
		after := procStatus(b, p.pid(), "VmRSS")
		perSession += float64(after-before) / 100
		inotify += float64(inotifyFDs(p.pid()))
		p.close()
	}
	b.ReportMetric(perSession/float64(b.N), "KiB/session")
	b.ReportMetric(inotify/float64(b.N), "inotify")
}

// BenchmarkTablePeakRSS32M: peak RSS (VmHWM) of acpd streaming a 32 MiB
// answer in 8 KiB deltas from a local OpenAI server while a second session
// streams answers of 10,000 small deltas, one after another, the whole
// time; then the peak of the next model request of the same session, whose
// body carries the answer back (the peak is reset first through
// /proc/PID/clear_refs), with the second session streaming again. Both
// peaks are measured against the answer's size. BENCH_GODEBUG (e.g.
// gctrace=1) is passed to acpd as GODEBUG, and acpd's stderr printed, for
// profiling; with BENCH_MEMSAMPLE=DIR and a profiling build (-acpd.bin),
// what each peak was made of is written to DIR/answer and DIR/next (see
// memSample).
func BenchmarkTablePeakRSS32M(b *testing.B) {
	const size = 32 << 20
	m := newPromptModel(b)
	var peak, nextPeak, side, nextBody float64
	var nextTime time.Duration
	for b.Loop() {
		iso := newIsolation(b)
		env := m.env(iso)
		if g := os.Getenv("BENCH_GODEBUG"); g != "" {
			env = append(env, "GODEBUG="+g)
		}
		sampled := os.Getenv("BENCH_MEMSAMPLE")
		if sampled != "" {
			env = append(env, "ACPD_MEMSAMPLE="+filepath.Join(sampled, "peak"))
		}
		p := startProc(b, env, "--model", "openai/gpt-test")
		p.initialize()
		dir := b.TempDir()
		sid, sid2 := p.newSession(dir), p.newSession(dir)
		p.backlog = p.backlog[:0]
		got, sideGot := promptBeside(b, p, sid, "big", sid2)
		if got != size || sideGot == 0 {
			b.Fatalf("received %d bytes of text beside %d, want %d beside some", got, sideGot, size)
		}
		peak += float64(procStatus(b, p.pid(), "VmHWM")) / 1024
		side += float64(sideGot)
		memSample(b, p, sampled, "answer")
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.pid()), []byte("5"), 0); err != nil {
			b.Fatalf("resetting the peak RSS: %v", err)
		}
		t0 := time.Now()
		if got, _ := promptBeside(b, p, sid, "next", sid2); got != len("ok") {
			b.Fatalf("the next answer is %d bytes, want 2", got)
		}
		nextTime += time.Since(t0)
		nextPeak += float64(procStatus(b, p.pid(), "VmHWM")) / 1024
		memSample(b, p, sampled, "next")
		nextBody += float64(m.lastNext.Load())
		if m.lastNext.Load() < size {
			b.Fatalf("the next request carried %d bytes, less than the answer", m.lastNext.Load())
		}
		p.close()
		if os.Getenv("BENCH_GODEBUG") != "" {
			fmt.Fprintln(os.Stderr, p.stderr.String())
		}
	}
	n := float64(b.N)
	b.ReportMetric(peak/n, "peak-MiB")
	b.ReportMetric(float64(size)/(1<<20), "answer-MiB")
	b.ReportMetric(side/n/(1<<20), "beside-MiB")
	b.ReportMetric(nextPeak/n, "next-peak-MiB")
	b.ReportMetric(nextBody/n/(1<<20), "next-body-MiB")
	b.ReportMetric(float64(nextTime.Microseconds())/1000/n, "next-ms")
}

// memSample has acpd, a profiling build run with ACPD_MEMSAMPLE (see
// cmd/acpd/memsample_tag.go) under dir, write what its peak since the last
// sample was made of, and moves the files to dir/NAME and dir/NAME.heap.
// It does nothing when dir is empty.
func memSample(b *testing.B, p *proc, dir, name string) {
	if dir == "" {
		return
	}
	base := filepath.Join(dir, "peak")
	_ = os.Remove(base)
	if err := p.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		b.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(base); err == nil {
			break
		}
		if i == 500 {
			b.Fatalf("no memory sample in %s: is acpd a profiling build?", dir)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = os.Rename(base+".heap", filepath.Join(dir, name+".heap"))
	if err := os.Rename(base, filepath.Join(dir, name)); err != nil {
		b.Fatal(err)
	}
}

// promptBeside sends text to session sid and, until its reply, keeps
// session sid2 streaming ("side" prompts, one after another); it returns
// the text each received, waiting for the last side prompt to end too.
func promptBeside(b *testing.B, p *proc, sid, text, sid2 string) (got, beside int) {
	prompt := func(sid, text string) string {
		return p.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	}
	main, side := prompt(sid, text), prompt(sid2, "side")
	for main != "" || side != "" {
		line := p.next()
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
		switch id := string(m.ID); {
		case m.Error != nil:
			b.Fatalf("prompt failed: %s", m.Error)
		case id != "" && id == main:
			main = ""
		case id != "" && id == side:
			side = ""
			if main != "" {
				side = prompt(sid2, "side")
			}
		case m.Params.Update.Kind == "agent_message_chunk":
			if m.Params.SessionID == sid {
				got += len(m.Params.Update.Content.Text)
			} else {
				beside += len(m.Params.Update.Content.Text)
			}
		}
		p.got, p.sent = p.got[:0], p.sent[:0]
	}
	return got, beside
}

// promptModel is a local OpenAI Chat Completions server that answers by
// the last user message: "big" with 32 MiB in 8 KiB deltas, "side" with
// 10,000 small deltas, anything else (the next request) with "ok",
// counting that request's body in lastNext.
type promptModel struct {
	srv      *httptest.Server
	lastNext atomic.Int64
}

func newPromptModel(b *testing.B) *promptModel {
	m := &promptModel{}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	b.Cleanup(m.srv.Close)
	return m
}

func (m *promptModel) serve(w http.ResponseWriter, r *http.Request) {
	cr := &countingReader{r: r.Body}
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(cr).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	_, _ = io.Copy(io.Discard, cr)
	last := ""
	for _, msg := range req.Messages {
		if msg.Role == "user" {
			_ = json.Unmarshal(msg.Content, &last)
		}
	}
	big := strings.Repeat("0123456789abcdef", 512) // 8 KiB
	switch last {
	case "big":
		writeSSE(w, (32<<20)/len(big), func(int) string { return big })
	case "side":
		writeSSE(w, 10_000, func(i int) string { return "tok" + strconv.Itoa(i%10) + " " })
	default:
		m.lastNext.Store(cr.n)
		writeSSE(w, 1, func(int) string { return "ok" })
	}
}

func (m *promptModel) env(iso *isolation) []string {
	return withEnv(iso, "ACPD_DISCOVER=0", "OPENAI_API_KEY=sk-bench", "OPENAI_BASE_URL="+m.srv.URL+"/v1")
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
