package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/log"
	"github.com/sourcegraph/jsonrpc2"
	"go.uber.org/goleak"

	"acpd/acp/internal/strict"
	"acpd/internal/syncbuf"
)

var testMessages = flag.Int("acp.messages", 200, "messages sent by the ordering and concurrency tests")

func TestMain(m *testing.M) {
	if os.Getenv(protectChildEnv) != "" {
		os.Exit(protectStdoutChild())
	}
	goleak.VerifyTestMain(m)
}

// waitTimeout only turns a hang into a test failure; no test asserts timing.
const waitTimeout = 30 * time.Second

// testHandler is a Handler that also receives its Conn.
type testHandler func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error)

// peer is the raw, line-level other end of a Conn under test.
type peer struct {
	t     *testing.T
	conn  *Conn
	in    *io.PipeWriter // peer -> conn
	outR  *io.PipeReader // conn -> peer
	lines chan []byte
	stop  chan struct{}
	wg    sync.WaitGroup
}

func newPeer(t *testing.T, th testHandler, opts Options) *peer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	return startPeer(t, th, opts, inR, inW, outR, outW)
}

func startPeer(t *testing.T, th testHandler, opts Options, inR io.Reader, inW *io.PipeWriter, outR *io.PipeReader, outW io.WriteCloser) *peer {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = discardLogger()
	}
	p := &peer{t: t, in: inW, outR: outR, lines: make(chan []byte, 64), stop: make(chan struct{})}
	var ref atomic.Pointer[Conn]
	h := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		return th(ref.Load(), ctx, method, params)
	}
	p.conn = NewConn(context.Background(), inR, outW, h, opts)
	ref.Store(p.conn)
	if outR != nil {
		p.wg.Go(p.readLoop)
	}
	t.Cleanup(p.shutdown)
	return p
}

func (p *peer) readLoop() {
	defer close(p.lines)
	br := bufio.NewReader(p.outR)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if len(line) > 0 {
				p.t.Errorf("conn wrote a message without a trailing newline: %q", line)
			}
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
	if p.outR != nil {
		p.outR.Close()
	}
	p.wg.Wait()
}

// send writes one line to the conn (blocking until the conn has read it).
func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("peer send: %v", err)
	}
}

// recv returns the next message the conn wrote, checking its framing.
func (p *peer) recv() wireMsg {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatal("conn output ended")
		}
		body := line[:len(line)-1]
		if bytes.IndexByte(body, '\n') >= 0 || !json.Valid(body) {
			p.t.Fatalf("conn wrote an invalid line: %q", line)
		}
		var m wireMsg
		if err := json.Unmarshal(body, &m); err != nil {
			p.t.Fatalf("decoding %q: %v", line, err)
		}
		m.raw = string(body)
		if m.JSONRPC != "2.0" {
			p.t.Fatalf("message without jsonrpc 2.0: %s", body)
		}
		return m
	case <-time.After(waitTimeout):
		p.t.Fatal("timed out waiting for a message from the conn")
	}
	return wireMsg{}
}

// expectError receives an error response and checks its exact id and code.
func (p *peer) expectError(id string, code int) *Error {
	p.t.Helper()
	m := p.recv()
	if m.Error == nil || m.Method != "" || m.Result != nil {
		p.t.Fatalf("want error response, got %s", m.raw)
	}
	if string(m.ID) != id {
		p.t.Fatalf("error response id = %s, want %s (%s)", m.ID, id, m.raw)
	}
	if m.Error.Code != code {
		p.t.Fatalf("error code = %d, want %d (%s)", m.Error.Code, code, m.raw)
	}
	return m.Error
}

// expectResult receives a success response and checks its exact id.
func (p *peer) expectResult(id string) json.RawMessage {
	p.t.Helper()
	m := p.recv()
	if m.Error != nil || m.Result == nil || string(m.ID) != id {
		p.t.Fatalf("want result for id %s, got %s", id, m.raw)
	}
	return m.Result
}

// ping proves that everything sent before it produced no other output.
func (p *peer) ping() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"ping","method":"ping"}`)
	if got := p.expectResult(`"ping"`); string(got) != `"pong"` {
		p.t.Fatalf("ping result = %s", got)
	}
}

type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *Error          `json:"error"`
	raw     string
}

func discardLogger() *slog.Logger {
	return slog.New(log.NewWithOptions(io.Discard, log.Options{Level: log.DebugLevel}))
}

// basicHandler answers "ping" and "echo" and rejects other methods.
func basicHandler(_ *Conn, _ context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "ping":
		return "pong", nil
	case "echo":
		return params, nil
	}
	return nil, ErrMethodNotFound(method)
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

func TestFraming(t *testing.T) {
	p := newPeer(t, basicHandler, Options{})
	p.send("")
	p.send("   \t")
	p.send("\r")
	p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}` + "\r")
	if got := p.expectResult("1"); string(got) != `{"a":1}` {
		t.Fatalf("echo = %s", got)
	}
	// A message split across writes is reassembled.
	if _, err := io.WriteString(p.in, `{"jsonrpc":"2.0",`); err != nil {
		t.Fatal(err)
	}
	p.send(`"id":2,"method":"ping"}`)
	p.expectResult("2")
}

func TestRejectsMalformedInputAndKeepsServing(t *testing.T) {
	var calls atomic.Int64
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != "ping" {
			calls.Add(1)
		}
		return basicHandler(c, ctx, method, params)
	}
	p := newPeer(t, h, Options{})
	cases := []struct {
		name, line, id string
		code           int
	}{
		{"parse error", `{"jsonrpc":"2.0","id":1,"method":`, "null", codeParseError},
		{"garbage", `hello`, "null", codeParseError},
		{"trailing data", `{"jsonrpc":"2.0","id":1,"method":"x"} {}`, "null", codeParseError},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"echo"}]`, "null", codeInvalidRequest},
		{"empty batch", `[]`, "null", codeInvalidRequest},
		{"number", `42`, "null", codeInvalidRequest},
		{"string", `"x"`, "null", codeInvalidRequest},
		{"null", `null`, "null", codeInvalidRequest},
		{"bool", `true`, "null", codeInvalidRequest},
		{"missing jsonrpc", `{"id":7,"method":"echo"}`, "7", codeInvalidRequest},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":"a","method":"echo"}`, `"a"`, codeInvalidRequest},
		{"numeric jsonrpc", `{"jsonrpc":2.0,"id":8,"method":"echo"}`, "8", codeInvalidRequest},
		{"notification without jsonrpc", `{"method":"echo"}`, "null", codeInvalidRequest},
		{"Method instead of method", `{"jsonrpc":"2.0","id":1,"Method":"echo"}`, "1", codeInvalidRequest},
		{"Method beside method", `{"jsonrpc":"2.0","id":2,"method":"echo","Method":"x"}`, "2", codeInvalidRequest},
		{"ID", `{"jsonrpc":"2.0","ID":3,"method":"echo"}`, "null", codeInvalidRequest},
		{"Params", `{"jsonrpc":"2.0","id":4,"method":"echo","Params":{}}`, "4", codeInvalidRequest},
		{"JSONRPC", `{"JSONRPC":"2.0","jsonrpc":"2.0","id":5,"method":"echo"}`, "5", codeInvalidRequest},
		{"unicode fold", `{"jſonrpc":"2.0","jsonrpc":"2.0","id":6,"method":"echo"}`, "6", codeInvalidRequest},
		{"duplicate method", `{"jsonrpc":"2.0","id":9,"method":"echo","method":"ping"}`, "9", codeInvalidRequest},
		{"method not a string", `{"jsonrpc":"2.0","id":10,"method":5}`, "10", codeInvalidRequest},
		{"id object", `{"jsonrpc":"2.0","id":{},"method":"echo"}`, "null", codeInvalidRequest},
		{"id array", `{"jsonrpc":"2.0","id":[1],"method":"echo"}`, "null", codeInvalidRequest},
		{"id bool", `{"jsonrpc":"2.0","id":true,"method":"echo"}`, "null", codeInvalidRequest},
		{"params string", `{"jsonrpc":"2.0","id":11,"method":"echo","params":"x"}`, "11", codeInvalidRequest},
		{"params number", `{"jsonrpc":"2.0","id":12,"method":"echo","params":1}`, "12", codeInvalidRequest},
		{"request with result", `{"jsonrpc":"2.0","id":13,"method":"echo","result":1}`, "13", codeInvalidRequest},
		{"neither request nor response", `{"jsonrpc":"2.0","id":14}`, "null", codeInvalidRequest},
		{"empty object", `{}`, "null", codeInvalidRequest},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			p.send(tc.line)
			p.expectError(tc.id, tc.code)
			p.ping()
		})
	}
	p.t = t
	if n := calls.Load(); n != 0 {
		t.Fatalf("handler ran %d times for invalid messages", n)
	}
}

func TestUnknownEnvelopeKeysIgnoredAndParamsRaw(t *testing.T) {
	got := make(chan json.RawMessage, 2)
	h := func(_ *Conn, _ context.Context, method string, params json.RawMessage) (any, error) {
		got <- params
		return nil, nil
	}
	p := newPeer(t, h, Options{})
	params := `{ "sessionId" : "s\u0041", "_meta": {"x": [1, 2.50, "<&>"]}, "Unknown":true, "n": 1e400 }`
	p.send(`{"extra":{"nested":1},"jsonrpc":"2.0","id":1,"method":"m","params":` + params + `}`)
	if r := p.expectResult("1"); string(r) != "null" {
		t.Fatalf("result = %s, want null", r)
	}
	if g := recvChan(t, got); string(g) != params {
		t.Fatalf("params = %s, want them byte for byte: %s", g, params)
	}
	p.send(`{"jsonrpc":"2.0","method":"n"}`)
	if g := recvChan(t, got); g != nil {
		t.Fatalf("absent params = %q, want nil", g)
	}
}

func TestRequestIDsEchoedExactly(t *testing.T) {
	p := newPeer(t, basicHandler, Options{})
	for _, id := range []string{
		`0`, `1`, `-1`, `9223372036854775807`, `-9223372036854775808`, `18446744073709551615`,
		`123456789012345678901234567890`, `1.5`, `1e3`, `-0`, `""`, `"abc"`, `"\u0041\n"`, `"ünï"`, `null`,
	} {
		t.Run(id, func(t *testing.T) {
			p.t = t
			p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
			p.expectResult(id)
			p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"nope"}`)
			p.expectError(id, codeMethodNotFound)
		})
	}
}

func TestHandlerErrors(t *testing.T) {
	type params struct {
		SessionID string `json:"sessionId"`
	}
	h := func(c *Conn, ctx context.Context, method string, raw json.RawMessage) (any, error) {
		switch method {
		case "params":
			var p params
			if err := strictUnmarshal(raw, &p); err != nil {
				return nil, ErrInvalidParams(err)
			}
			return p, nil
		case "plain":
			return nil, errors.New("disk on fire")
		case "wrapped":
			return nil, fmt.Errorf("context: %w", &Error{Code: -32000, Message: "auth required", Data: json.RawMessage(`{"k":1}`)})
		case "typed nil":
			var e *Error
			return nil, e
		case "unencodable":
			return make(chan int), nil
		case "bad data":
			return nil, &Error{Code: 1, Message: "m", Data: json.RawMessage(`{bad`)}
		case "panic":
			panic("boom")
		}
		return basicHandler(c, ctx, method, raw)
	}
	p := newPeer(t, h, Options{})

	p.send(`{"jsonrpc":"2.0","id":1,"method":"nope"}`)
	if e := p.expectError("1", codeMethodNotFound); !strings.Contains(e.Message, "nope") {
		t.Errorf("method-not-found message %q does not name the method", e.Message)
	}
	p.send(`{"jsonrpc":"2.0","id":2,"method":"params","params":{"SessionId":"x"}}`)
	if e := p.expectError("2", codeInvalidParams); !strings.Contains(e.Message, `"SessionId"`) {
		t.Errorf("invalid-params message %q does not name the key", e.Message)
	}
	p.send(`{"jsonrpc":"2.0","id":3,"method":"params","params":[1]}`)
	p.expectError("3", codeInvalidParams)
	p.send(`{"jsonrpc":"2.0","id":4,"method":"params"}`)
	p.expectError("4", codeInvalidParams)
	p.send(`{"jsonrpc":"2.0","id":5,"method":"params","params":{"sessionId":"ok","other":1}}`)
	if r := p.expectResult("5"); string(r) != `{"sessionId":"ok"}` {
		t.Errorf("result = %s", r)
	}
	p.send(`{"jsonrpc":"2.0","id":6,"method":"plain"}`)
	if e := p.expectError("6", codeInternalError); e.Message != "disk on fire" {
		t.Errorf("message = %q", e.Message)
	}
	p.send(`{"jsonrpc":"2.0","id":7,"method":"wrapped"}`)
	if e := p.expectError("7", -32000); e.Message != "auth required" || string(e.Data) != `{"k":1}` {
		t.Errorf("wrapped error = %+v", e)
	}
	p.send(`{"jsonrpc":"2.0","id":8,"method":"typed nil"}`)
	p.expectError("8", codeInternalError)
	p.send(`{"jsonrpc":"2.0","id":9,"method":"unencodable"}`)
	p.expectError("9", codeInternalError)
	p.send(`{"jsonrpc":"2.0","id":10,"method":"bad data"}`)
	p.expectError("10", codeInternalError)
	p.send(`{"jsonrpc":"2.0","id":11,"method":"panic"}`)
	p.expectError("11", codeInternalError)
	// A notification's errors and panics are not answered.
	p.send(`{"jsonrpc":"2.0","method":"panic"}`)
	p.send(`{"jsonrpc":"2.0","method":"plain"}`)
	p.ping()
}

func TestNullIDRequestIsARequest(t *testing.T) {
	ran := make(chan string, 1)
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		ran <- method
		return "done", nil
	}
	p := newPeer(t, h, Options{})
	p.send(`{"jsonrpc":"2.0","id":null,"method":"work"}`)
	if r := p.expectResult("null"); string(r) != `"done"` {
		t.Fatalf("result = %s", r)
	}
	if m := recvChan(t, ran); m != "work" {
		t.Fatalf("handler method = %q", m)
	}
}

func TestResponsesAreNeverAnswered(t *testing.T) {
	p := newPeer(t, basicHandler, Options{})
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":99,"result":{}}`,
		`{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"1.0","id":5,"result":1}`,
		`{"jsonrpc":"2.0","id":1,"Result":{}}`,
		`{"jsonrpc":"2.0","id":{},"result":1}`,
		`{"jsonrpc":"2.0","result":1}`,
		`{"jsonrpc":"2.0","id":-3,"result":1,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":2,"error":5}`,
	} {
		p.send(line)
	}
	p.ping()
}

func TestDuplicateRunningID(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method == "hold" {
			started <- struct{}{}
			<-release
			return "held", nil
		}
		return basicHandler(c, ctx, method, params)
	}
	p := newPeer(t, h, Options{})
	p.send(`{"jsonrpc":"2.0","id":"d","method":"hold"}`)
	recvChan(t, started)
	p.send(`{"jsonrpc":"2.0","id":"d","method":"ping"}`)
	p.expectError(`"d"`, codeInvalidRequest)
	close(release)
	if r := p.expectResult(`"d"`); string(r) != `"held"` {
		t.Fatalf("result = %s", r)
	}
	// The id is free again once answered.
	p.send(`{"jsonrpc":"2.0","id":"d","method":"ping"}`)
	p.expectResult(`"d"`)
}

// A handler that calls back into the peer and needs its answer must not
// deadlock the connection.
func TestHandlerCallsPeer(t *testing.T) {
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != "session/prompt" {
			return basicHandler(c, ctx, method, params)
		}
		var got struct {
			Content string `json:"content"`
		}
		if err := c.Call(ctx, "fs/read_text_file", map[string]string{"path": "/x"}, &got); err != nil {
			return nil, err
		}
		return map[string]string{"read": got.Content}, nil
	}
	p := newPeer(t, h, Options{})
	p.send(`{"jsonrpc":"2.0","id":"p1","method":"session/prompt","params":{}}`)
	req := p.recv()
	if req.Method != "fs/read_text_file" || string(req.Params) != `{"path":"/x"}` || req.ID == nil {
		t.Fatalf("unexpected outbound request %s", req.raw)
	}
	// While the handler waits, the conn still serves other requests.
	p.ping()
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":"hello"}}`)
	if r := p.expectResult(`"p1"`); string(r) != `{"read":"hello"}` {
		t.Fatalf("result = %s", r)
	}
}

// connPair returns two Conns talking to each other.
func connPair(t testing.TB, ha, hb Handler) (a, b *Conn) {
	t.Helper()
	abR, abW := io.Pipe()
	baR, baW := io.Pipe()
	a = NewConn(context.Background(), baR, abW, ha, Options{Logger: discardLogger()})
	b = NewConn(context.Background(), abR, baW, hb, Options{Logger: discardLogger()})
	t.Cleanup(func() {
		a.Close()
		b.Close()
		<-a.Done()
		<-b.Done()
	})
	return a, b
}

func TestConnPairCallsBothWays(t *testing.T) {
	var a, b *Conn
	var ready sync.WaitGroup
	ready.Add(1)
	ha := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		var p struct {
			Q string `json:"q"`
		}
		if err := strictUnmarshal(params, &p); err != nil {
			return nil, ErrInvalidParams(err)
		}
		return strings.ToUpper(p.Q), nil
	}
	hb := func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		ready.Wait()
		var p struct {
			N int `json:"n"`
		}
		if err := strictUnmarshal(params, &p); err != nil {
			return nil, ErrInvalidParams(err)
		}
		var s string
		if err := b.Call(ctx, "ask", map[string]string{"q": "n" + strconv.Itoa(p.N)}, &s); err != nil {
			return nil, err
		}
		return s, nil
	}
	a, b = connPair(t, ha, hb)
	ready.Done()

	// Callers stay within b's MaxConcurrentRequests: b's handlers wait on
	// calls back to a, so more pipelined requests would stall b's read loop
	// (documented on Options.MaxConcurrentRequests).
	const callers = 16
	n := *testMessages
	work := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for i := range work {
				var got string
				if err := a.Call(context.Background(), "work", map[string]int{"n": i}, &got); err != nil {
					errs <- err
					continue
				}
				if want := "N" + strconv.Itoa(i); got != want {
					errs <- fmt.Errorf("call %d = %q, want %q", i, got, want)
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	err := a.Call(context.Background(), "work", map[string]string{"n": "x"}, nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != codeInvalidParams {
		t.Fatalf("call with bad params: %v", err)
	}
}

func TestNotificationsInOrder(t *testing.T) {
	n := *testMessages
	var mu sync.Mutex
	var seen []int
	all := make(chan struct{})
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != "session/update" {
			return basicHandler(c, ctx, method, params)
		}
		var p struct {
			Seq int `json:"seq"`
		}
		if err := strictUnmarshal(params, &p); err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, p.Seq)
		if len(seen) == n {
			close(all)
		}
		return nil, nil
	}
	p := newPeer(t, h, Options{NotificationQueue: 4})
	for i := range n {
		p.send(`{"jsonrpc":"2.0","method":"session/update","params":{"seq":` + strconv.Itoa(i) + `}}`)
		if i%7 == 0 {
			p.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"ping"}`)
		}
	}
	recvChan(t, all)
	mu.Lock()
	defer mu.Unlock()
	for i, s := range seen {
		if s != i {
			t.Fatalf("notification %d handled at position %d: %v", s, i, seen)
		}
	}
}

func TestImmediateNotificationBypassesQueue(t *testing.T) {
	release := make(chan struct{})
	blocked := make(chan struct{})
	cancelSeen := make(chan struct{})
	var mu sync.Mutex
	var order []string
	record := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "block":
			record("block")
			close(blocked)
			<-release
		case "session/cancel":
			record("cancel")
			close(cancelSeen)
		case "queued":
			record("queued")
		case "$/cancel_request":
			record("$/cancel_request")
		default:
			return basicHandler(c, ctx, method, params)
		}
		return nil, nil
	}
	p := newPeer(t, h, Options{Immediate: func(m string) bool { return m == "session/cancel" }})
	p.send(`{"jsonrpc":"2.0","method":"block"}`)
	recvChan(t, blocked)
	p.send(`{"jsonrpc":"2.0","method":"queued"}`)
	p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":1}}`)
	p.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`)
	recvChan(t, cancelSeen) // runs although the worker is blocked
	close(release)
	p.send(`{"jsonrpc":"2.0","method":"last"}`)
	p.ping()
	waitFor(t, "queued notification", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) == 3
	})
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"block", "cancel", "queued"}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Fatalf("order = %v, want %v", order, want)
	}
}

func TestCancelRequest(t *testing.T) {
	started := make(chan string, 4)
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "wait":
			started <- method
			<-ctx.Done()
			return nil, ctx.Err()
		case "wait then succeed":
			started <- method
			<-ctx.Done()
			return "finished anyway", nil
		case "wait then custom error":
			started <- method
			<-ctx.Done()
			return nil, &Error{Code: -32000, Message: "custom"}
		}
		return basicHandler(c, ctx, method, params)
	}
	p := newPeer(t, h, Options{})
	for _, tc := range []struct{ method, id string }{
		{"wait", `7`},
		{"wait", `"str-id"`},
		{"wait", `null`},
		{"wait then succeed", `-2`},
		{"wait then custom error", `"c"`},
	} {
		p.send(`{"jsonrpc":"2.0","id":` + tc.id + `,"method":"` + tc.method + `"}`)
		recvChan(t, started)
		// Cancelling another id has no effect.
		p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":12345}}`)
		p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"RequestId":` + tc.id + `}}`)
		p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":[` + tc.id + `]}`)
		p.ping()
		p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":` + tc.id + `,"_meta":{}}}`)
		if e := p.expectError(tc.id, codeRequestCancelled); e.Message != "request cancelled" {
			t.Errorf("message = %q", e.Message)
		}
		// A second cancel, after the reply, is ignored.
		p.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":` + tc.id + `}}`)
		p.ping()
	}
}

func TestCallCancelSendsCancelRequest(t *testing.T) {
	p := newPeer(t, basicHandler, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		var res struct{}
		errc <- p.conn.Call(ctx, "session/request_permission", map[string]int{"a": 1}, &res)
	}()
	req := p.recv()
	if req.Method != "session/request_permission" || string(req.Params) != `{"a":1}` {
		t.Fatalf("request = %s", req.raw)
	}
	cancel()
	cr := p.recv()
	if cr.Method != "$/cancel_request" || cr.ID != nil {
		t.Fatalf("want $/cancel_request notification, got %s", cr.raw)
	}
	if want := `{"requestId":` + string(req.ID) + `}`; string(cr.Params) != want {
		t.Fatalf("cancel params = %s, want %s", cr.Params, want)
	}
	if err := recvChan(t, errc); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call = %v, want context.Canceled", err)
	}
	// The late reply is dropped, and the connection keeps working.
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32800,"message":"request cancelled"}}`)
	p.ping()
	go func() {
		var s string
		err := p.conn.Call(context.Background(), "again", nil, &s)
		if err == nil && s != "ok" {
			err = fmt.Errorf("result %q", s)
		}
		errc <- err
	}()
	req2 := p.recv()
	if string(req2.ID) == string(req.ID) || req2.Params != nil {
		t.Fatalf("second request = %s", req2.raw)
	}
	p.send(`{"jsonrpc":"2.0","id":` + string(req2.ID) + `,"result":"ok"}`)
	if err := recvChan(t, errc); err != nil {
		t.Fatal(err)
	}
	// An already-cancelled context sends nothing.
	if err := p.conn.Call(ctx, "never", nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Call with done ctx = %v", err)
	}
	p.ping()
}

func TestCallReplies(t *testing.T) {
	p := newPeer(t, basicHandler, Options{})
	type result struct {
		Outcome string `json:"outcome"`
	}
	call := func(res any) <-chan error {
		errc := make(chan error, 1)
		go func() { errc <- p.conn.Call(context.Background(), "m", nil, res) }()
		return errc
	}
	cases := []struct {
		name  string
		reply string // %s is the id
		check func(t *testing.T, err error, res *result)
	}{
		{"result", `{"jsonrpc":"2.0","id":%s,"result":{"outcome":"allow"}}`, func(t *testing.T, err error, res *result) {
			if err != nil || res.Outcome != "allow" {
				t.Fatalf("err=%v res=%+v", err, res)
			}
		}},
		{"null result", `{"jsonrpc":"2.0","id":%s,"result":null}`, func(t *testing.T, err error, res *result) {
			if err != nil || res.Outcome != "" {
				t.Fatalf("err=%v res=%+v", err, res)
			}
		}},
		{"case variant in result", `{"jsonrpc":"2.0","id":%s,"result":{"Outcome":"allow"}}`, func(t *testing.T, err error, res *result) {
			if err == nil || !strings.Contains(err.Error(), `"Outcome"`) || res.Outcome != "" {
				t.Fatalf("err=%v res=%+v", err, res)
			}
		}},
		{"error", `{"jsonrpc":"2.0","id":%s,"error":{"code":-32002,"message":"not found","data":{"uri":"x"}}}`, func(t *testing.T, err error, res *result) {
			var e *Error
			if !errors.As(err, &e) || e.Code != -32002 || e.Message != "not found" || string(e.Data) != `{"uri":"x"}` {
				t.Fatalf("err = %#v", err)
			}
		}},
		{"both result and error", `{"jsonrpc":"2.0","id":%s,"result":1,"error":{"code":1,"message":"m"}}`, func(t *testing.T, err error, res *result) {
			var e *Error
			if err == nil || errors.As(err, &e) {
				t.Fatalf("err = %v", err)
			}
		}},
		{"malformed error", `{"jsonrpc":"2.0","id":%s,"error":{"code":"x","message":"m"}}`, func(t *testing.T, err error, res *result) {
			var e *Error
			if err == nil || errors.As(err, &e) {
				t.Fatalf("err = %v", err)
			}
		}},
		{"bad version", `{"jsonrpc":"2","id":%s,"result":{}}`, func(t *testing.T, err error, res *result) {
			if err == nil {
				t.Fatal("want error")
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			var res result
			errc := call(&res)
			req := p.recv()
			p.send(fmt.Sprintf(tc.reply, req.ID))
			tc.check(t, recvChan(t, errc), &res)
		})
	}
	p.t = t
	// A reply with the right number as a string does not match.
	errc := call(nil)
	req := p.recv()
	p.send(`{"jsonrpc":"2.0","id":"` + string(req.ID) + `","result":1}`)
	p.ping()
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":1}`)
	if err := recvChan(t, errc); err != nil {
		t.Fatal(err)
	}
}

func TestAfterReply(t *testing.T) {
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "session/new":
			AfterReply(ctx, func() {
				if err := c.Notify(context.Background(), "session/update", map[string]string{"sessionId": "s1"}); err != nil {
					t.Errorf("Notify: %v", err)
				}
			})
			AfterReply(ctx, nil)
			return map[string]string{"sessionId": "s1"}, nil
		case "note":
			AfterReply(ctx, func() { t.Error("AfterReply ran for a notification") })
			return nil, nil
		}
		return basicHandler(c, ctx, method, params)
	}
	p := newPeer(t, h, Options{})
	AfterReply(context.Background(), func() { t.Error("AfterReply ran outside a handler") })
	for i := range *testMessages / 10 {
		id := strconv.Itoa(i)
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"session/new"}`)
		p.expectResult(id)
		if m := p.recv(); m.Method != "session/update" {
			t.Fatalf("after the reply got %s", m.raw)
		}
	}
	p.send(`{"jsonrpc":"2.0","method":"note"}`)
	p.ping()
}

func TestMaxConcurrentRequests(t *testing.T) {
	started := make(chan string, 8)
	release := make(chan struct{})
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		started <- string(params)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, nil
	}
	p := newPeer(t, h, Options{MaxConcurrentRequests: 2})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"hold","params":[1]}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"hold","params":[2]}`)
	recvChan(t, started)
	recvChan(t, started)
	p.send(`{"jsonrpc":"2.0","id":3,"method":"hold","params":[3]}`)
	waitFor(t, "the read loop to wait for a slot", func() bool { return p.conn.slotWaits.Load() == 1 })
	select {
	case s := <-started:
		t.Fatalf("request %s started beyond the limit", s)
	default:
	}
	release <- struct{}{}
	if s := recvChan(t, started); s != "[3]" {
		t.Fatalf("started %s, want [3]", s)
	}
	close(release)
	ids := map[string]bool{}
	for range 3 {
		ids[string(p.recv().ID)] = true
	}
	if len(ids) != 3 {
		t.Fatalf("replies for %v", ids)
	}
}

func TestNotificationQueueBackpressure(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	blocked := make(chan struct{})
	release := make(chan struct{})
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method == "ping" {
			return "pong", nil
		}
		mu.Lock()
		seen = append(seen, method)
		mu.Unlock()
		if method == "n1" {
			close(blocked)
			<-release
		}
		return nil, nil
	}
	p := newPeer(t, h, Options{NotificationQueue: 1})
	p.send(`{"jsonrpc":"2.0","method":"n1"}`)
	recvChan(t, blocked)
	p.send(`{"jsonrpc":"2.0","method":"n2"}`) // fills the queue
	p.send(`{"jsonrpc":"2.0","method":"n3"}`) // the read loop waits for room
	waitFor(t, "the read loop to wait for queue room", func() bool { return p.conn.queueWaits.Load() == 1 })
	close(release)
	p.ping()
	waitFor(t, "all notifications", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == 3
	})
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, ","); got != "n1,n2,n3" {
		t.Fatalf("order = %s", got)
	}
}

func TestReadEOF(t *testing.T) {
	started := make(chan struct{})
	var handled atomic.Int64
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "long":
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		case "note":
			handled.Add(1)
			return nil, nil
		}
		return basicHandler(c, ctx, method, params)
	}
	p := newPeer(t, h, Options{})
	p.send(`{"jsonrpc":"2.0","id":"L","method":"long"}`)
	<-started
	callErr := make(chan error, 1)
	go func() { callErr <- p.conn.Call(context.Background(), "pending", nil, nil) }()
	if m := p.recv(); m.Method != "pending" {
		t.Fatalf("got %s", m.raw)
	}
	n := *testMessages
	for range n {
		p.send(`{"jsonrpc":"2.0","method":"note"}`)
	}
	if err := p.conn.Err(); err != nil {
		t.Fatalf("Err before Done = %v", err)
	}
	p.in.Close()
	// The running request is cancelled and still answered.
	p.expectError(`"L"`, codeRequestCancelled)
	recvChan(t, p.conn.Done())
	if got := handled.Load(); got != int64(n) {
		t.Fatalf("%d of %d queued notifications handled before Done", got, n)
	}
	if err := p.conn.Err(); err != io.EOF {
		t.Fatalf("Err = %v, want io.EOF", err)
	}
	if err := recvChan(t, callErr); !errors.Is(err, io.EOF) || !errors.Is(err, net.ErrClosed) {
		t.Fatalf("pending Call = %v", err)
	}
	if err := p.conn.Call(context.Background(), "x", nil, nil); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Call after EOF = %v", err)
	}
	// Notifications can still be written until Close.
	if err := p.conn.Notify(context.Background(), "bye", nil); err != nil {
		t.Fatalf("Notify after EOF: %v", err)
	}
	if m := p.recv(); m.Method != "bye" {
		t.Fatalf("got %s", m.raw)
	}
}

// enterWriter reports when a Write starts.
type enterWriter struct {
	io.WriteCloser
	entered chan struct{}
	once    sync.Once
}

func (w *enterWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	return w.WriteCloser.Write(b)
}

// A peer that never reads blocks writers; Close still ends everything.
func TestCloseWithStuckPeer(t *testing.T) {
	inR, inW := io.Pipe()
	outConn, peerEnd := net.Pipe() // synchronous: nobody reads peerEnd
	defer peerEnd.Close()
	w := &enterWriter{WriteCloser: outConn, entered: make(chan struct{})}
	returned := make(chan struct{})
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		defer close(returned)
		return "reply that cannot be written", nil
	}
	p := startPeer(t, h, Options{}, inR, inW, nil, w)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"x"}`)
	recvChan(t, returned)
	recvChan(t, w.entered)

	// A writer waiting behind the stuck one gives up when its ctx ends.
	ctx, cancel := context.WithCancel(context.Background())
	notifyErr := make(chan error, 1)
	go func() { notifyErr <- p.conn.Notify(ctx, "session/update", nil) }()
	cancel()
	if err := recvChan(t, notifyErr); !errors.Is(err, context.Canceled) {
		t.Fatalf("Notify = %v", err)
	}
	// Another one is released by Close.
	go func() { notifyErr <- p.conn.Notify(context.Background(), "session/update", nil) }()
	callErr := make(chan error, 1)
	go func() { callErr <- p.conn.Call(context.Background(), "m", nil, nil) }()

	if err := p.conn.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	recvChan(t, p.conn.Done())
	if err := recvChan(t, notifyErr); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Notify after Close = %v", err)
	}
	if err := recvChan(t, callErr); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Call after Close = %v", err)
	}
	if err := p.conn.Err(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Err = %v", err)
	}
	if err := p.conn.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// The production writer is an *os.File (see ProtectStdout); Close must
// release a write stuck on a full pipe.
func TestCloseUnblocksStuckOSPipe(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close() // never read: the pipe fills up
	w := &enterWriter{WriteCloser: outW, entered: make(chan struct{})}
	p := startPeer(t, basicHandler, Options{}, inR, inW, nil, w)
	big := map[string]string{"text": strings.Repeat("x", 1<<20)}
	notifyErr := make(chan error, 1)
	go func() { notifyErr <- p.conn.Notify(context.Background(), "session/update", big) }()
	recvChan(t, w.entered)
	if err := p.conn.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := recvChan(t, notifyErr); err == nil {
		t.Fatal("a write into a full, unread pipe succeeded")
	}
	recvChan(t, p.conn.Done())
}

func TestCloseCancelsHandlersAndCalls(t *testing.T) {
	started := make(chan struct{}, 2)
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	p := newPeer(t, h, Options{})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"r"}`)
	p.send(`{"jsonrpc":"2.0","method":"n"}`)
	recvChan(t, started)
	recvChan(t, started)
	callErr := make(chan error, 1)
	go func() { callErr <- p.conn.Call(context.Background(), "m", nil, nil) }()
	p.recv()
	if err := p.conn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := recvChan(t, callErr); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Call = %v", err)
	}
	if err := p.conn.Notify(context.Background(), "x", nil); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Notify after Close = %v", err)
	}
	recvChan(t, p.conn.Done())
}

func TestOutboundFraming(t *testing.T) {
	p := newPeer(t, basicHandler, Options{})
	ctx := context.Background()
	if err := p.conn.Notify(ctx, "session/update", map[string]string{"text": "line1\nline2\r\n\u2028", "code": "<a>&b</a>"}); err != nil {
		t.Fatal(err)
	}
	m := p.recv()
	var got map[string]string
	if err := json.Unmarshal(m.Params, &got); err != nil || got["text"] != "line1\nline2\r\n\u2028" || !strings.Contains(m.raw, "<a>&b</a>") {
		t.Fatalf("params = %s (%v)", m.Params, err)
	}
	if err := p.conn.Notify(ctx, "raw", json.RawMessage("{\n  \"a\" : [1,\n 2]\n}")); err != nil {
		t.Fatal(err)
	}
	if m := p.recv(); string(m.Params) != `{"a":[1,2]}` {
		t.Fatalf("raw params = %s", m.Params)
	}
	if err := p.conn.Notify(ctx, "bad", json.RawMessage("{bad")); err == nil {
		t.Fatal("Notify with invalid raw params succeeded")
	}
	if err := p.conn.Call(ctx, "bad", func() {}, nil); err == nil {
		t.Fatal("Call with unencodable params succeeded")
	}
	p.ping()
}

func TestLineTooLarge(t *testing.T) {
	const limit = 256
	p := newPeer(t, basicHandler, Options{MaxLineBytes: limit})
	big := `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"s":"` + strings.Repeat("x", 10*limit) + `"}}`
	p.send(big)
	if e := p.expectError("null", codeInvalidRequest); e.Message != "message too large" {
		t.Fatalf("message = %q", e.Message)
	}
	// Exactly at the limit is fine.
	exact := `{"jsonrpc":"2.0","id":2,"method":"echo","params":{"s":"`
	exact += strings.Repeat("y", limit-len(exact)-3) + `"}}`
	p.send(exact)
	p.expectResult("2")
	p.ping()
	p.in.Close()
	recvChan(t, p.conn.Done()) // the read loop is done with its buffer
	if c := cap(p.conn.in.buf); c > limit {
		t.Fatalf("line buffer grew to %d bytes, limit %d", c, limit)
	}
}

func TestLogsNeverContainParams(t *testing.T) {
	var buf syncbuf.Buffer
	logger := slog.New(log.NewWithOptions(&buf, log.Options{Level: log.DebugLevel}))
	const secret = "s3cr3t-t0ken"
	h := func(c *Conn, ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method == "call" {
			var r any
			err := c.Call(ctx, "fs/read_text_file", map[string]string{"token": secret}, &r)
			return r, err
		}
		return basicHandler(c, ctx, method, params)
	}
	p := newPeer(t, h, Options{Logger: logger, MaxLineBytes: 4096})
	p.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"env":{"KEY":"` + secret + `"}}}`)
	p.expectError("1", codeMethodNotFound)
	p.send(`{"jsonrpc":"2.0","method":"session/update","params":{"token":"` + secret + `"}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"x","params":{"token":"` + secret + `"},"Method":1}`)
	p.expectError("2", codeInvalidRequest)
	p.send(`{"jsonrpc":"2.0","id":3,"method":"x","params":{"token":"` + secret + `"`)
	p.expectError("null", codeParseError)
	p.send(`{"jsonrpc":"2.0","id":4,"method":"x","params":{"token":"` + secret + strings.Repeat("z", 5000) + `"}}`)
	p.expectError("null", codeInvalidRequest)
	p.send(`{"jsonrpc":"2.0","id":5,"method":"call"}`)
	req := p.recv()
	p.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":"` + secret + `"}}`)
	p.expectResult("5")
	p.send(`{"jsonrpc":"2.0","id":77,"result":{"content":"` + secret + `"}}`)
	p.ping()
	out := buf.String()
	if strings.Contains(out, secret) {
		t.Fatalf("log contains params content:\n%s", out)
	}
	if !strings.Contains(out, "session/new") {
		t.Fatalf("debug log lacks method names:\n%s", out)
	}
}

// BenchmarkNotify streams small session/update-like notifications through a
// Conn to a reader that decodes every line.
func BenchmarkNotify(b *testing.B) {
	r, w := io.Pipe()
	c := NewConn(context.Background(), eofReader{}, w, func(context.Context, string, json.RawMessage) (any, error) {
		return nil, nil
	}, Options{Logger: slog.New(log.NewWithOptions(io.Discard, log.Options{Level: log.InfoLevel}))})
	type update struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string `json:"sessionUpdate"`
			Content       struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"update"`
	}
	var u update
	u.SessionID = "sess_0123456789abcdef"
	u.Update.SessionUpdate = "agent_message_chunk"
	u.Update.Content.Type = "text"
	u.Update.Content.Text = "Here is a streamed chunk of model output, <b>with</b> some markup & text."
	done := make(chan int)
	go func() {
		n := 0
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				done <- n
				return
			}
			var m struct {
				Method string `json:"method"`
				Params update `json:"params"`
			}
			if json.Unmarshal(line, &m) == nil && m.Params.SessionID == u.SessionID {
				n++
			}
		}
	}()
	ctx := context.Background()
	sent := 0
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Notify(ctx, "session/update", &u); err != nil {
			b.Fatal(err)
		}
		sent++
	}
	c.Close()
	<-c.Done()
	if n := <-done; n != sent {
		b.Fatalf("reader decoded %d of %d notifications", n, sent)
	}
}

// eofReader is an input that ends at once.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// BenchmarkRoundTrip measures request/reply between two Conns.
func BenchmarkRoundTrip(b *testing.B) {
	echo := func(_ context.Context, _ string, params json.RawMessage) (any, error) { return params, nil }
	a, _ := connPair(b, echo, echo)
	params := map[string]string{"sessionId": "sess_0123456789abcdef", "path": "/home/user/project/main.go"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var out map[string]string
		if err := a.Call(ctx, "fs/read_text_file", params, &out); err != nil {
			b.Fatal(err)
		}
		if out["path"] != params["path"] {
			b.Fatalf("echo = %v", out)
		}
	}
}

// TestHandOffChecksTicket: Handle takes the message the stream read last
// only when the library hands it that message's ticket; a request the
// connection did not read is never dispatched.
func TestHandOffChecksTicket(t *testing.T) {
	called := make(chan string, 1)
	p := newPeer(t, func(_ *Conn, _ context.Context, method string, _ json.RawMessage) (any, error) {
		called <- method
		return nil, nil
	}, Options{})
	c := p.conn
	req := &inbound{method: "m", id: json.RawMessage(`-1.5`), arrival: 7, conn: c}
	note := &inbound{method: "n", arrival: 8, conn: c}
	for _, tc := range []struct {
		name string
		next *inbound
		got  *jsonrpc2.Request
		ok   bool
	}{
		{"nothing read", nil, &jsonrpc2.Request{Method: "m", ID: jsonrpc2.ID{Num: 7}}, false},
		{"request", req, &jsonrpc2.Request{Method: "m", ID: jsonrpc2.ID{Num: 7}}, true},
		{"other id", req, &jsonrpc2.Request{Method: "m", ID: jsonrpc2.ID{Num: 6}}, false},
		{"string id", req, &jsonrpc2.Request{Method: "m", ID: jsonrpc2.ID{Str: "7", IsString: true}}, false},
		{"other method", req, &jsonrpc2.Request{Method: "x", ID: jsonrpc2.ID{Num: 7}}, false},
		{"request for a notification", note, &jsonrpc2.Request{Method: "n", ID: jsonrpc2.ID{Num: 8}}, false},
		{"notification for a request", req, &jsonrpc2.Request{Method: "m", Notif: true}, false},
		{"notification", note, &jsonrpc2.Request{Method: "n", Notif: true}, true},
	} {
		c.handoffMu.Lock()
		c.next = tc.next
		c.handoffMu.Unlock()
		if m := c.takeInbound(tc.got); (m != nil) != tc.ok || (m != nil && m != tc.next) {
			t.Errorf("%s: takeInbound = %v, want ok=%v", tc.name, m, tc.ok)
		}
		if c.next != nil {
			t.Errorf("%s: the slot was not emptied", tc.name)
		}
	}
	rpcHandler{c}.Handle(context.Background(), nil, &jsonrpc2.Request{Method: "m", ID: jsonrpc2.ID{Num: 1}})
	// A real message still goes through, and is the first the handler sees.
	p.send(`{"jsonrpc":"2.0","method" : "real","params":{}}`)
	if got := <-called; got != "real" {
		t.Fatalf("handler called for %q, want only the message read", got)
	}
}

// BenchmarkTicket measures what going through jsonrpc2's public API adds
// per inbound request: the library's own decoding of a ticket (see handOff)
// into its message and its dispatch to a Handler, on its read loop.
func BenchmarkTicket(b *testing.B) {
	s := &ticketStream{n: b.N, method: []byte(`"session/prompt"`)}
	done := make(chan struct{})
	h := &countTickets{}
	b.ReportAllocs()
	b.ResetTimer()
	conn := jsonrpc2.NewConn(context.Background(), s, h)
	go func() { <-conn.DisconnectNotify(); close(done) }()
	<-done
	b.StopTimer()
	if h.got != b.N {
		b.Fatalf("handled %d of %d tickets", h.got, b.N)
	}
}

// countTickets counts the request tickets handed over in order.
type countTickets struct{ got int }

func (h *countTickets) Handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Method == "session/prompt" && !req.Notif && req.ID.Num == uint64(h.got+1) {
		h.got++
	}
}

// ticketStream yields n request tickets, then EOF.
type ticketStream struct {
	n, i   int
	method []byte
	buf    []byte
}

func (s *ticketStream) ReadObject(v any) error {
	if s.i == s.n {
		return io.EOF
	}
	s.i++
	s.buf = appendTicket(s.buf[:0], s.method, true, uint64(s.i))
	return json.Unmarshal(s.buf, v)
}

func (*ticketStream) WriteObject(any) error { return nil }
func (*ticketStream) Close() error          { return nil }

// writeCounter is a WriteCloser that records each Write.
type writeCounter struct {
	mu     sync.Mutex
	writes [][]byte
}

func (w *writeCounter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, bytes.Clone(b))
	return len(b), nil
}

func (w *writeCounter) Close() error { return nil }

func (w *writeCounter) count() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.writes), string(bytes.Join(w.writes, nil))
}

// During a Burst, notifications are held and leave together, in order, at
// release (or once 64 KiB have gathered).
func TestBurst(t *testing.T) {
	w := &writeCounter{}
	c := NewConn(context.Background(), eofReader{}, w, func(context.Context, string, json.RawMessage) (any, error) {
		return nil, nil
	}, Options{Logger: discardLogger()})
	defer c.Close()
	ctx := context.Background()
	release := c.Burst()
	for i := range 100 {
		if err := c.Notify(ctx, "n", map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := w.count(); n != 0 {
		t.Fatalf("%d writes during the burst, want none", n)
	}
	release()
	release() // once only
	n, out := w.count()
	if n != 1 {
		t.Fatalf("%d writes at release, want 1", n)
	}
	if lines := strings.Count(out, "\n"); lines != 100 || !strings.HasPrefix(out, `{"jsonrpc":"2.0","method":"n","params":{"i":0}}`) {
		t.Fatalf("%d lines written, starting %.60q", lines, out)
	}
	// A large burst is written as it passes the buffer's size.
	release = c.Burst()
	big := strings.Repeat("x", 1000)
	for range 200 {
		if err := c.Notify(ctx, "n", big); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := w.count(); n < 3 {
		t.Fatalf("%d writes after 200 KB held, want some", n)
	}
	release()
	// After the burst, a notification leaves at once.
	before, _ := w.count()
	if err := c.Notify(ctx, "n", 1); err != nil {
		t.Fatal(err)
	}
	if n, _ := w.count(); n != before+1 {
		t.Fatal("a notification after the burst was held")
	}
}

// strictUnmarshal decodes like acp.Unmarshal.
func strictUnmarshal(data []byte, v any) error { return strict.Unmarshal(data, v, false, true) }
