package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/config"
	"acpd/internal/loadfixture"
	"acpd/model"
	"acpd/session"
	"acpd/terminal"
)

// benchConn is one Agent serving a minimal client over os.Pipes, for
// benchmarks (the test harness's testEnv needs a *testing.T). The client
// hands every session/update to onUpdate, on its notification worker, in
// arrival order; it answers no agent requests.
type benchConn struct {
	b      *testing.B
	agent  *Agent
	conn   *jsonrpc.Conn
	out    io.Closer // client → agent
	served chan struct{}
	cancel context.CancelFunc
	cwd    string
}

// newBench starts an agent whose every model resolves to backend with info.
func newBench(b *testing.B, backend model.Backend, info model.ModelInfo, onUpdate func(acp.SessionNotification)) *benchConn {
	b.Helper()
	base, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cwd := filepath.Join(base, "project")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		b.Fatal(err)
	}
	vars := map[string]string{
		"XDG_CONFIG_HOME": filepath.Join(base, "config"),
		"XDG_STATE_HOME":  filepath.Join(base, "state"),
		"HOME":            filepath.Join(base, "home"),
		"ACPD_MODEL":      mainModel,
	}
	loader, err := config.NewLoader(config.Overrides{}, func(k string) string { return vars[k] })
	if err != nil {
		b.Fatal(err)
	}
	store, err := session.Open(b.Context(), loader.User().State.Dir)
	if err != nil {
		b.Fatal(err)
	}
	a := New(Options{
		Config:  loader,
		Store:   store,
		Resolve: func(string) (model.Backend, model.ModelInfo, error) { return backend, info, nil },
		Env:     terminal.FilterEnv(os.Environ(), nil),
		Logger:  slog.New(slog.DiscardHandler),
	})
	agentIn, clientOut, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	clientIn, agentOut, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	bc := &benchConn{b: b, agent: a, out: clientOut, served: make(chan struct{}), cancel: cancel, cwd: cwd}
	go func() {
		defer close(bc.served)
		_ = a.Serve(ctx, agentIn, agentOut)
	}()
	bc.conn = jsonrpc.NewConn(context.Background(), clientIn, clientOut, func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != acp.ClientMethodSessionUpdate {
			return nil, jsonrpc.ErrMethodNotFound(method)
		}
		if onUpdate == nil {
			return nil, nil // a client that shows nothing decodes no more than the envelope
		}
		var n acp.SessionNotification
		if err := acp.Unmarshal(params, &n); err == nil {
			onUpdate(n)
		}
		return nil, nil
	}, jsonrpc.Options{Logger: slog.New(slog.DiscardHandler)})
	b.Cleanup(bc.close)
	bc.call(acp.AgentMethodInitialize, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersion1}, &acp.InitializeResponse{})
	return bc
}

func (bc *benchConn) call(method string, params, result any) {
	bc.b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), liveness)
	defer cancel()
	if err := bc.conn.Call(ctx, method, params, result); err != nil {
		bc.b.Fatalf("%s: %v", method, err)
	}
}

func (bc *benchConn) newSession() acp.SessionID {
	bc.b.Helper()
	var resp acp.NewSessionResponse
	bc.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: bc.cwd, McpServers: []acp.McpServer{}}, &resp)
	return resp.SessionID
}

func (bc *benchConn) prompt(sid acp.SessionID, text string) {
	bc.b.Helper()
	var resp acp.PromptResponse
	bc.call(acp.AgentMethodSessionPrompt, acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: text}}}}, &resp)
	if resp.StopReason != acp.StopReasonEndTurn {
		bc.b.Fatalf("stop reason %q", resp.StopReason)
	}
}

// close closes the agent's input, waits for Serve, then closes the client.
func (bc *benchConn) close() {
	_ = bc.out.Close()
	tm := time.NewTimer(liveness)
	defer tm.Stop()
	select {
	case <-bc.served:
	case <-tm.C:
		bc.b.Error("Serve did not return")
		bc.cancel()
		<-bc.served
	}
	bc.cancel()
	_ = bc.conn.Close()
	<-bc.conn.Done()
}

// BenchmarkFirstChunkLatency measures the time from the backend yielding
// its first text event to the client receiving the agent_message_chunk:
// the agent's per-event path (session log append, JSON encoding, the pipe)
// and the client's decoding.
func BenchmarkFirstChunkLatency(b *testing.B) {
	yielded := make(chan time.Time, 1)
	arrived := make(chan time.Time, 1)
	backend := backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		yielded <- time.Now()
		_ = yield(model.Event{Type: model.EventText, Text: "first"}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
	})
	bc := newBench(b, backend, model.ModelInfo{ID: "main", Tools: true}, func(n acp.SessionNotification) {
		if n.Update.AgentMessageChunk != nil {
			arrived <- time.Now()
		}
	})
	var sid acp.SessionID
	var total time.Duration
	b.ResetTimer()
	for i := range b.N {
		if i%100 == 0 {
			// A fresh session now and then: the transcript's growth is
			// not what this measures.
			b.StopTimer()
			sid = bc.newSession()
			b.StartTimer()
		}
		bc.prompt(sid, "hi")
		t0 := await(b, "the backend", yielded)
		t1 := await(b, "the first chunk", arrived)
		total += t1.Sub(t0)
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(b.N), "ns/first-chunk")
}

// BenchmarkStreamThroughput streams a response of 100,000 text deltas and
// measures end to end: from the prompt until the client has received all
// their text (in as many chunks as the agent merged them into, reported as
// updates/op), and the session log's bytes per byte of text.
func BenchmarkStreamThroughput(b *testing.B) {
	const deltas = 100_000
	backend := backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		for range deltas {
			if !yield(model.Event{Type: model.EventText, Text: "tok "}, nil) {
				return
			}
		}
		yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
	})
	var mu sync.Mutex
	got, updates := 0, 0
	done := make(chan struct{}, 1)
	bc := newBench(b, backend, model.ModelInfo{ID: "main", Tools: true}, func(n acp.SessionNotification) {
		c := n.Update.AgentMessageChunk
		if c == nil || c.Content.Text == nil {
			return
		}
		mu.Lock()
		got += len(c.Content.Text.Text)
		updates++
		if got == deltas*len("tok ") {
			got = 0
			done <- struct{}{}
		}
		mu.Unlock()
	})
	sid := bc.newSession()
	var elapsed time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		bc.prompt(sid, "stream")
		await(b, "every chunk", done)
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(deltas*b.N)/elapsed.Seconds(), "events/s")
	mu.Lock()
	b.ReportMetric(float64(updates)/float64(b.N), "updates/op")
	mu.Unlock()
}

// BenchmarkLongConversationMemory builds a session whose transcript holds
// about 200k tokens (about 800 KB of text in 400 messages), runs one turn
// and reports the heap in use while the model holds the request and after
// the turn, next to the transcript's size.
func BenchmarkLongConversationMemory(b *testing.B) {
	const (
		messages = 400
		msgBytes = 2000 // 400 × 2000 B ≈ 800 KB ≈ 200k tokens
	)
	heapInUse := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	var during uint64
	backend := backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		during = heapInUse() // req is live here
		_ = yield(model.Event{Type: model.EventText, Text: "ok"}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
		runtime.KeepAlive(req)
	})
	bc := newBench(b, backend, model.ModelInfo{ID: "main", Tools: true, ContextWindow: 1_000_000}, nil)
	line := strings.Repeat("lorem ipsum dolor sit amet ", msgBytes/27+1)[:msgBytes]
	var sumDuring, sumAfter, sumBase uint64
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		sid := bc.newSession()
		s := bc.agent.lookup(sid)
		base := heapInUse()
		for i := range messages {
			role := model.RoleUser
			if i%2 == 1 {
				role = model.RoleAssistant
			}
			// A distinct string per message, as a real transcript has.
			text := strconv.Itoa(i) + ":" + line[len(strconv.Itoa(i))+1:]
			s.appendMessage(model.Message{Role: role, Parts: []model.Part{{Type: model.PartText, Text: text}}})
		}
		b.StartTimer()
		bc.prompt(sid, "one more turn")
		b.StopTimer()
		sumBase += base
		sumDuring += during
		sumAfter += heapInUse()
		bc.call(acp.AgentMethodSessionClose, acp.CloseSessionRequest{SessionID: sid}, &acp.CloseSessionResponse{})
		b.StartTimer()
	}
	n := uint64(b.N)
	b.ReportMetric(float64(messages*msgBytes), "transcript-B")
	b.ReportMetric(float64(sumDuring/n), "heap-during-request-B")
	b.ReportMetric(float64(sumAfter/n), "heap-after-turn-B")
	b.ReportMetric(float64(int64(sumAfter/n)-int64(sumBase/n)), "heap-growth-B")
}

// BenchmarkLoad10k measures session/load of a session of 10,000 records,
// replay included (until the reply, which follows every replayed update),
// interleaved with its floor: reading the log and parsing every line as
// plain JSON (what JSON.parse per line costs a client reading the file).
func BenchmarkLoad10k(b *testing.B) {
	const n = 10_000
	bc := newBench(b, backendFunc(func(context.Context, *model.Request, func(model.Event, error) bool) {}), model.ModelInfo{ID: "main"}, nil)
	store, err := session.Open(b.Context(), filepath.Join(filepath.Dir(bc.cwd), "state", "acpd"))
	if err != nil {
		b.Fatal(err)
	}
	id, path, err := loadfixture.Write(store, bc.cwd, n)
	if err != nil {
		b.Fatal(err)
	}
	sid := acp.SessionID(id)
	var acpd, floor time.Duration
	for b.Loop() {
		t0 := time.Now()
		bc.call(acp.AgentMethodSessionLoad, acp.LoadSessionRequest{SessionID: sid, Cwd: bc.cwd, McpServers: []acp.McpServer{}}, &acp.LoadSessionResponse{})
		acpd += time.Since(t0)
		b.StopTimer()
		bc.call(acp.AgentMethodSessionClose, acp.CloseSessionRequest{SessionID: sid}, &acp.CloseSessionResponse{})
		b.StartTimer()
		t0 = time.Now()
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		lines := 0
		for line := range bytes.Lines(data) {
			var v any
			if err := json.Unmarshal(line, &v); err != nil {
				b.Fatal(err)
			}
			lines++
		}
		if lines != n+1 {
			b.Fatalf("%d lines", lines)
		}
		floor += time.Since(t0)
	}
	b.ReportMetric(float64(acpd.Nanoseconds())/float64(b.N), "acpd-ns/op")
	b.ReportMetric(float64(floor.Nanoseconds())/float64(b.N), "floor-ns/op")
	b.ReportMetric(float64(acpd)/float64(floor), "ratio")
}

// BenchmarkListSessions1000 measures session/list (first page, and all
// pages) over 1,000 stored sessions: agent-shell calls it around every
// prompt.
func BenchmarkListSessions1000(b *testing.B) {
	const n = 1000
	bc := newBench(b, backendFunc(func(context.Context, *model.Request, func(model.Event, error) bool) {}), model.ModelInfo{ID: "main"}, nil)
	store, err := session.Open(b.Context(), filepath.Join(filepath.Dir(bc.cwd), "state", "acpd"))
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		l, err := store.Create(session.Meta{Cwd: bc.cwd, Title: fmt.Sprintf("session %d", i)})
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("FirstPage", func(b *testing.B) {
		for b.Loop() {
			var resp acp.ListSessionsResponse
			bc.call(acp.AgentMethodSessionList, acp.ListSessionsRequest{}, &resp)
			if len(resp.Sessions) == 0 {
				b.Fatal("no sessions listed")
			}
		}
	})
	b.Run("AllPages", func(b *testing.B) {
		for b.Loop() {
			seen := 0
			var cursor *string
			for {
				var resp acp.ListSessionsResponse
				bc.call(acp.AgentMethodSessionList, acp.ListSessionsRequest{Cursor: cursor}, &resp)
				seen += len(resp.Sessions)
				if resp.NextCursor == nil {
					break
				}
				cursor = resp.NextCursor
			}
			if seen < n {
				b.Fatalf("listed %d sessions, want %d", seen, n)
			}
		}
	})
}

// BenchmarkNewSession measures session/new in process: with -benchmem its
// allocations are what an idle session leaves behind as garbage (the
// Sessions50 row reads RSS before the collector has run).
func BenchmarkNewSession(b *testing.B) {
	bc := newBench(b, backendFunc(func(context.Context, *model.Request, func(model.Event, error) bool) {}), model.ModelInfo{ID: "main"}, nil)
	for b.Loop() {
		var resp acp.NewSessionResponse
		bc.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: bc.cwd, McpServers: []acp.McpServer{}}, &resp)
		if resp.SessionID == "" {
			b.Fatal("no session id")
		}
	}
}
