package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"acpd/acp"
	"acpd/model"
)

// TestPeerStopsReading: a client that stops reading the agent's output
// while a turn streams a huge answer must not make the agent buffer the
// answer in memory, and closing the agent's input, or cancelling Serve's
// context, must still end Serve.
func TestPeerStopsReading(t *testing.T) {
	t.Run("input closed", func(t *testing.T) { testPeerStopsReading(t, false) })
	t.Run("context cancelled", func(t *testing.T) { testPeerStopsReading(t, true) })
}

func testPeerStopsReading(t *testing.T, cancelCtx bool) {
	env := newEnv(t, "")
	const events = 50000 // ~100 MiB of text if nothing pushed back
	chunk := strings.Repeat("x", 2<<10)
	var produced atomic.Int64
	env.setModel(mainModel, backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		for range events {
			if err := ctx.Err(); err != nil {
				yield(model.Event{}, err)
				return
			}
			if !yield(model.Event{Type: model.EventText, Text: chunk}, nil) {
				return
			}
			produced.Add(1)
		}
		yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
	}))

	agentIn, toAgent, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromAgent, agentOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer fromAgent.Close()
	defer toAgent.Close()
	a := env.newAgent()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- a.Serve(ctx, agentIn, agentOut) }()
	send := func(id int, method string, params any) {
		t.Helper()
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := toAgent.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	send(1, acp.AgentMethodInitialize, acp.InitializeRequest{ProtocolVersion: 1})
	send(2, acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{}})
	br := bufio.NewReader(fromAgent)
	var sid acp.SessionID
	for sid == "" {
		line, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading the session/new reply: %v", err)
		}
		var m struct {
			ID     int                     `json:"id"`
			Result *acp.NewSessionResponse `json:"result"`
		}
		if json.Unmarshal(line, &m) == nil && m.ID == 2 && m.Result != nil {
			sid = m.Result.SessionID
		}
	}

	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	// From here on nobody reads the agent's output.
	send(3, acp.AgentMethodSessionPrompt, acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{{Text: &acp.TextContent{Text: "talk a lot"}}}})

	// Wait until the stream stalls on the full pipe (or, if the agent
	// buffers without bound, runs to its end).
	stable, last := 0, int64(-1)
	waitFor(t, "the stream to stall", func() bool {
		n := produced.Load()
		if n == last {
			stable++
		} else {
			stable, last = 0, n
		}
		return stable >= 100 || n == events // unchanged for ~0.5 s
	})
	runtime.GC()
	var now runtime.MemStats
	runtime.ReadMemStats(&now)
	if n := produced.Load(); n >= events {
		t.Errorf("the agent consumed all %d model events while nobody read its output", n)
	}
	if grew := int64(now.HeapInuse) - int64(base.HeapInuse); grew > 32<<20 {
		t.Errorf("heap in use grew by %d MiB while the peer was not reading", grew>>20)
	}
	t.Logf("stalled after %d events; heap in use %+d KiB", produced.Load(), (int64(now.HeapInuse)-int64(base.HeapInuse))>>10)

	// The client closes the agent's input (or the daemon is told to stop);
	// Serve must return although the agent's output is still blocked.
	if cancelCtx {
		cancel()
	} else if err := toAgent.Close(); err != nil {
		t.Fatal(err)
	}
	tm := time.NewTimer(liveness)
	defer tm.Stop()
	select {
	case err := <-served:
		if err != nil {
			t.Logf("Serve: %v", err)
		}
	case <-tm.C:
		// Unblock the agent so the test ends (goleak would report it).
		fromAgent.Close()
		<-served
		t.Fatal("Serve did not return while its output was blocked")
	}
	l, _, err := env.store.Open(string(sid))
	if err != nil {
		t.Fatalf("the session is still locked after Serve returned: %v", err)
	}
	l.Close()
}

// TestInputClosedMidMessage: input that ends inside a message (the editor
// died) ends Serve cleanly: the running turn is cancelled and every session
// is closed, so its log is unlocked.
func TestInputClosedMidMessage(t *testing.T) {
	env := newEnv(t, "")
	g := newGate()
	env.setModel(mainModel, g)
	c := env.start(nil)
	busy := c.newSession()
	idle := c.newSession()
	res := c.promptAsync(busy, "block")
	g.waitStarted(t)
	if err := c.out.raw(fmt.Sprintf(`{"jsonrpc":"2.0","id":"cut","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"te`, idle)); err != nil {
		t.Fatal(err)
	}
	if err := c.out.Close(); err != nil {
		t.Fatal(err)
	}
	if !c.waitServed() {
		t.Fatal("Serve did not return after its input ended mid-message")
	}
	if c.serveErr != nil {
		t.Errorf("Serve: %v", c.serveErr)
	}
	r := await(t, "the running prompt", res)
	if r.err == nil && r.stop != acp.StopReasonCancelled {
		t.Errorf("the running prompt ended %q, want cancelled (or no reply)", r.stop)
	}
	for _, id := range []acp.SessionID{busy, idle} {
		l, _, err := env.store.Open(string(id))
		if err != nil {
			t.Errorf("session %s is still locked after Serve returned: %v", id, err)
			continue
		}
		l.Close()
	}
	// The agent wrote nothing after its input ended but replies.
	for _, m := range c.in.messages() {
		if m.Method != "" && m.Method != acp.ClientMethodSessionUpdate {
			t.Errorf("unexpected %s from the agent", m.Method)
		}
	}
}
