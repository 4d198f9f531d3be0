package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/log"

	"acpd/acp/jsonrpc"
)

// The JSON-RPC error codes the tests expect.
const (
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
)

// waitTimeout only turns a hang into a test failure; no test asserts timing.
const waitTimeout = 30 * time.Second

// peer is the raw, line-level other end of a jsonrpc.Conn serving this
// package's dispatchers (the transport's own tests have the same helper).
type peer struct {
	t     *testing.T
	conn  *jsonrpc.Conn
	in    *io.PipeWriter // peer -> conn
	outR  *io.PipeReader // conn -> peer
	lines chan []byte
	stop  chan struct{}
	wg    sync.WaitGroup
}

func newPeer(t *testing.T, th func(c *jsonrpc.Conn, ctx context.Context, method string, params json.RawMessage) (any, error), opts jsonrpc.Options) *peer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	if opts.Logger == nil {
		opts.Logger = slog.New(log.NewWithOptions(io.Discard, log.Options{Level: log.DebugLevel}))
	}
	p := &peer{t: t, in: inW, outR: outR, lines: make(chan []byte, 64), stop: make(chan struct{})}
	var ref atomic.Pointer[jsonrpc.Conn]
	h := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		return th(ref.Load(), ctx, method, params)
	}
	p.conn = jsonrpc.NewConn(context.Background(), inR, outW, h, opts)
	ref.Store(p.conn)
	p.wg.Go(p.readLoop)
	t.Cleanup(p.shutdown)
	return p
}

func (p *peer) readLoop() {
	defer close(p.lines)
	br := bufio.NewReader(p.outR)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		select {
		case p.lines <- line:
		case <-p.stop:
			return
		}
	}
}

func (p *peer) shutdown() {
	p.in.Close()
	if err := p.conn.Close(); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		p.t.Errorf("Close: %v", err)
	}
	select {
	case <-p.conn.Done():
	case <-time.After(waitTimeout):
		p.t.Errorf("Done not closed after Close")
	}
	close(p.stop)
	p.outR.Close()
	p.wg.Wait()
}

// send writes one line to the conn (blocking until the conn has read it).
func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("peer send: %v", err)
	}
}

type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
	raw     string
}

// recv returns the next message the conn wrote.
func (p *peer) recv() wireMsg {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatal("conn output ended")
		}
		body := bytes.TrimSuffix(line, []byte("\n"))
		var m wireMsg
		if err := json.Unmarshal(body, &m); err != nil {
			p.t.Fatalf("decoding %q: %v", line, err)
		}
		m.raw = string(body)
		return m
	case <-time.After(waitTimeout):
		p.t.Fatal("timed out waiting for a message from the conn")
	}
	return wireMsg{}
}

// ping proves that everything sent before it produced no other output.
func (p *peer) ping() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	m := p.recv()
	if m.Error != nil || string(m.ID) != `"ping"` || string(m.Result) != `"pong"` {
		p.t.Fatalf("want the ping's result, got %s", m.raw)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func recvChan[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatal("timed out waiting on channel")
	}
	var zero T
	return zero
}
