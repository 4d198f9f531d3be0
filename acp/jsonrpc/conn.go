package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sourcegraph/jsonrpc2"

	"acpd/acp/internal/strict"
)

// Handler serves one inbound request or notification. For notifications the
// result is ignored.
//
// params is the message's "params" member exactly as received (nil when the
// member is absent); decode it with acp.Unmarshal. Return an *Error (possibly
// wrapped) to choose the JSON-RPC error code, e.g. ErrMethodNotFound or
// ErrInvalidParams; any other error is answered with -32603 and its message,
// so it must not contain secrets. A panic is recovered and answered -32603.
//
// Requests run concurrently, each on its own goroutine, and may Call the peer.
// Notifications run one at a time in arrival order on the notification worker
// (or inline on the read loop when Options.Immediate selects them). ctx is
// cancelled when the peer cancels the request, when the read side ends
// (requests only) or on Close; the handler must then return promptly.
type Handler func(ctx context.Context, method string, params json.RawMessage) (result any, err error)

// Options tunes a Conn. The zero value selects the defaults.
type Options struct {
	// MaxLineBytes bounds one inbound message (the bytes before its "\n").
	// A longer line is discarded as it is read, in bounded memory, and
	// answered with -32600 "message too large" and id null; the connection
	// lives on. Default 32 MiB.
	MaxLineBytes int

	// Logger receives the connection's diagnostics. Params and results are
	// never logged; at debug level, method names and ids are. Default
	// slog.Default().
	Logger *slog.Logger

	// Immediate selects notifications that run inline on the read loop, ahead
	// of queued ones (acpd: "session/cancel"). It and the handler it selects
	// must not block, since no input is read meanwhile. "$/cancel_request" is
	// always handled inside Conn and never reaches the Handler.
	Immediate func(method string) bool

	// NotificationQueue bounds the notifications waiting for the worker.
	// When the queue is full the read loop waits for room, which stops
	// reading and so pushes back on the peer. Default 1024.
	NotificationQueue int

	// MaxConcurrentRequests bounds the request handlers running at once.
	// When all slots are taken the read loop waits for one to free, which
	// stops reading (responses to our own calls included), so a peer that
	// pipelines more requests than this while our handlers wait on Call
	// replies stalls the connection. Default 64.
	MaxConcurrentRequests int
}

const (
	defaultMaxLineBytes          = 32 << 20
	defaultNotificationQueue     = 1024
	defaultMaxConcurrentRequests = 64

	cancelRequestMethod = "$/cancel_request"
)

// errConnClosed is returned once Close has been called.
var errConnClosed = fmt.Errorf("acp: connection closed: %w", net.ErrClosed)

// Error is a JSON-RPC error object. It is returned by Call for error replies
// and may be returned by a Handler to choose the reply's code.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements error.
func (e *Error) Error() string {
	if e == nil {
		return "jsonrpc error: <nil>"
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// ErrMethodNotFound returns the -32601 error for an unknown method.
func ErrMethodNotFound(method string) *Error {
	return &Error{Code: codeMethodNotFound, Message: "method not found: " + strict.Clip(method)}
}

// ErrInvalidParams returns the -32602 error for params that do not decode
// (typically the error from acp.Unmarshal).
func ErrInvalidParams(err error) *Error {
	msg := "invalid params"
	if err != nil {
		msg += ": " + err.Error()
	}
	return &Error{Code: codeInvalidParams, Message: msg}
}

// Conn is one JSON-RPC 2.0 connection. All methods are safe for concurrent
// use. Its goroutines: the read loop (ends when r returns EOF or an error),
// one goroutine per running request handler, and the notification worker.
type Conn struct {
	h    Handler
	opts Options
	log  *slog.Logger
	r    io.Reader
	in   *lineReader
	out  *lineWriter
	rpc  *jsonrpc2.Conn

	reqCtx      context.Context // parent of request handler contexts
	cancelReqs  context.CancelFunc
	noteCtx     context.Context // context of notification handlers
	cancelNotes context.CancelFunc

	slots      chan struct{} // request handler slots
	queue      chan *inbound // notifications for the worker; closed when reading ends
	workerDone chan struct{}
	handlers   sync.WaitGroup // request handler goroutines

	closing   chan struct{} // closed by Close
	closeOnce sync.Once
	closeErr  error
	done      chan struct{} // closed when reading ended and all handlers returned

	nextID atomic.Uint64
	// next is the message read last, waiting for the library to hand its
	// ticket to Handle (see handOff).
	handoffMu sync.Mutex
	next      *inbound
	ticket    []byte // the ticket's buffer, reused by the read loop
	// arrivals numbers inbound requests and notifications on the read
	// loop, in the order they were read (see Arrival).
	arrivals atomic.Uint64

	mu        sync.Mutex
	closed    bool
	readEnded bool
	readErr   error
	inflight  map[string]*inbound     // inbound requests by idKey
	pending   map[uint64]*pendingCall // outbound calls by id

	// Counters read by tests: times the read loop waited for a request slot
	// or for room in the notification queue.
	slotWaits  atomic.Int64
	queueWaits atomic.Int64
}

// inbound is an inbound request or notification.
type inbound struct {
	method string
	id     json.RawMessage // requests only
	key    string          // idKey(id)
	params json.RawMessage

	arrival uint64 // see Arrival

	// Request state, guarded by Conn.mu.
	cancel    context.CancelFunc
	cancelled bool // by the peer's $/cancel_request
	returned  bool // the handler has returned
	after     []func()
	conn      *Conn
}

// pendingCall is an outbound request waiting for its reply.
type pendingCall struct {
	done   chan struct{} // closed when one of the fields below is set
	result json.RawMessage
	rpcErr *Error
	err    error
}

// NewConn starts a connection reading messages from r and writing them to w,
// dispatching inbound requests and notifications to h, which must not be nil.
//
// ctx is the parent of every handler context (its values are visible to
// handlers, and cancelling it cancels them) but does not close the connection:
// call Close. The Conn owns r and w: Close closes w, and r too if it is an
// io.Closer. Close must be able to unblock a pending w.Write (true for an
// *os.File in non-blocking mode such as the one ProtectStdout returns, for
// net.Conn and for io.Pipe); otherwise a peer that stops reading can make
// Close wait forever.
func NewConn(ctx context.Context, r io.Reader, w io.WriteCloser, h Handler, opts Options) *Conn {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = defaultMaxLineBytes
	}
	if opts.NotificationQueue <= 0 {
		opts.NotificationQueue = defaultNotificationQueue
	}
	if opts.MaxConcurrentRequests <= 0 {
		opts.MaxConcurrentRequests = defaultMaxConcurrentRequests
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	c := &Conn{
		h:          h,
		opts:       opts,
		log:        logger.With("component", "acp"),
		r:          r,
		in:         newLineReader(r, opts.MaxLineBytes, readBufSize),
		out:        newLineWriter(w),
		slots:      make(chan struct{}, opts.MaxConcurrentRequests),
		queue:      make(chan *inbound, opts.NotificationQueue),
		workerDone: make(chan struct{}),
		closing:    make(chan struct{}),
		done:       make(chan struct{}),
		inflight:   make(map[string]*inbound),
		pending:    make(map[uint64]*pendingCall),
	}
	// Shadow any request state a parent handler context may carry, so that
	// AfterReply only ever sees this connection's own requests.
	base := context.WithValue(ctx, inboundKey{}, (*inbound)(nil))
	c.reqCtx, c.cancelReqs = context.WithCancel(base)
	c.noteCtx, c.cancelNotes = context.WithCancel(base)
	go c.notificationWorker()
	c.rpc = jsonrpc2.NewConn(context.Background(), (*objectStream)(c), rpcHandler{c}, jsonrpc2.SetLogger(libLogger{c.log}))
	return c
}

// Call sends a request and waits for its reply, decoding a successful result
// into result (if non-nil) with the same strict rules as Unmarshal, except
// that a null result leaves result unchanged.
//
// A JSON-RPC error reply is returned as *Error. If ctx ends first, Call stops
// waiting, sends "$/cancel_request" for the request to the peer (waiting for
// the writer if it is busy, until Close) and returns ctx.Err(); a reply that
// arrives later is logged and dropped. When the connection is closed or its
// input ends before the reply (or before the call), Call fails with an error
// wrapping net.ErrClosed (and, at input end, the read error, e.g. io.EOF).
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	id := c.nextID.Add(1)
	buf, err := encodeLine(wireRequest{JSONRPC: "2.0", ID: &id, Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("acp: encoding %s request: %w", strict.Clip(method), err)
	}
	defer putBuf(buf)
	pc := &pendingCall{done: make(chan struct{})}
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return errConnClosed
	case c.readEnded:
		c.mu.Unlock()
		return fmt.Errorf("acp: connection input has ended: %w", net.ErrClosed)
	}
	c.pending[id] = pc
	c.mu.Unlock()

	c.log.Debug("call", "method", strict.Clip(method), "id", id)
	if err := c.out.writeLine(ctx, buf.Bytes()); err != nil {
		c.forgetCall(id)
		return err
	}
	select {
	case <-pc.done:
		return pc.decode(result)
	case <-ctx.Done():
		if !c.forgetCall(id) {
			<-pc.done // the reply won the race
			return pc.decode(result)
		}
		c.log.Debug("call abandoned; cancelling", "method", strict.Clip(method), "id", id)
		if err := c.notify(context.WithoutCancel(ctx), cancelRequestMethod, cancelRequestParams{RequestID: id}); err != nil {
			c.log.Debug("sending $/cancel_request failed", "id", id, "err", err)
		}
		return ctx.Err()
	}
}

type cancelRequestParams struct {
	RequestID any `json:"requestId"`
}

// forgetCall removes a pending call; it reports whether the call was still
// pending (no reply routed to it yet).
func (c *Conn) forgetCall(id uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pending[id]
	delete(c.pending, id)
	return ok
}

func (pc *pendingCall) decode(result any) error {
	switch {
	case pc.err != nil:
		return pc.err
	case pc.rpcErr != nil:
		return pc.rpcErr
	case result == nil:
		return nil
	}
	if err := strict.Unmarshal(pc.result, result, true, true); err != nil {
		return fmt.Errorf("acp: decoding result: %w", err)
	}
	return nil
}

// Notify sends a notification. It returns once the message is written, so
// messages sent one after another by one goroutine (including a handler's
// reply, written before its AfterReply functions run) reach the peer in that
// order. If ctx ends while waiting for the writer, nothing is written and
// ctx.Err() is returned; a write in progress is never abandoned. After Close
// it fails with an error wrapping net.ErrClosed.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return errConnClosed
	}
	return c.notify(ctx, method, params)
}

func (c *Conn) notify(ctx context.Context, method string, params any) error {
	buf, err := encodeLine(wireRequest{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("acp: encoding %s notification: %w", strict.Clip(method), err)
	}
	defer putBuf(buf)
	return c.out.writeLine(ctx, buf.Bytes())
}

// Burst holds the messages written from now on (by any caller) in the
// connection's buffer, writing them only when it passes 64 KiB, until
// release is called, which writes the rest: a burst of many small messages,
// such as session/load's replay, then leaves in a few writes instead of one
// each (and wakes the peer a few times instead of once a line). Messages
// written meanwhile by others wait with the burst's, so hold it only while
// writing one. release must be called, once.
func (c *Conn) Burst() (release func()) {
	c.out.waiting.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			c.out.waiting.Add(-1)
			c.out.flushIfIdle()
		})
	}
}

// Done returns a channel that is closed when the read side has ended (EOF,
// read error, or Close closing r) and every handler has returned. After read
// EOF the queued notifications are still handled before Done is closed, and
// replies of the cancelled requests are still written; if the peer has
// stopped reading, those writes wait until Close unblocks them.
func (c *Conn) Done() <-chan struct{} {
	return c.done
}

// Err returns nil until Done is closed. Then it returns why reading ended:
// io.EOF when the peer closed its end, an error wrapping net.ErrClosed when
// Close ended it, or the read error.
func (c *Conn) Err() error {
	select {
	case <-c.done:
	default:
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// Close shuts the connection down: outbound calls fail, every handler context
// is cancelled, queued notifications are dropped, w is closed (and r, if it is
// an io.Closer), and Close waits for the request handlers, AfterReply
// functions and the notification worker to return. Replies of handlers that
// finish after Close are not sent. It returns w's Close error. Close is
// idempotent; it must not be called from a Handler or AfterReply function
// (it would wait for itself).
//
// Close does not wait for the read loop, which ends when r returns; Done
// reports that. If r is not an io.Closer and never returns, Done never closes.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		pending := c.pending
		c.pending = make(map[uint64]*pendingCall)
		c.mu.Unlock()
		close(c.closing)
		for _, pc := range pending {
			pc.err = errConnClosed
			close(pc.done)
		}
		c.cancelReqs()
		c.cancelNotes()
		_ = c.rpc.Close() // stops the library's context watcher; ErrClosed if reading already ended
		c.closeErr = c.out.close()
		if rc, ok := c.r.(io.Closer); ok {
			if err := rc.Close(); err != nil {
				c.log.Debug("closing reader", "err", err)
			}
		}
		c.handlers.Wait()
		<-c.workerDone
	})
	return c.closeErr
}

func (c *Conn) isClosed() bool {
	select {
	case <-c.closing:
		return true
	default:
		return false
	}
}

// endRead runs on the read loop once input has ended: it fails outstanding
// calls, cancels request handlers, lets the worker drain the queue, waits for
// all of them and closes done.
func (c *Conn) endRead(err error) {
	c.mu.Lock()
	if c.closed {
		err = errConnClosed
	}
	c.readEnded = true
	c.readErr = err
	pending := c.pending
	c.pending = make(map[uint64]*pendingCall)
	c.mu.Unlock()
	for _, pc := range pending {
		pc.err = fmt.Errorf("acp: connection input ended before the reply: %w (%w)", net.ErrClosed, err)
		close(pc.done)
	}
	if err == io.EOF {
		c.log.Debug("peer closed the connection")
	} else if !errors.Is(err, net.ErrClosed) {
		c.log.Warn("reading from peer failed", "err", err)
	}
	c.cancelReqs()
	close(c.queue)
	c.handlers.Wait()
	<-c.workerDone
	close(c.done)
}

// objectStream is the jsonrpc2.ObjectStream the library's read loop uses.
type objectStream Conn

// ReadObject reads lines until one holds a request or notification, which
// it stores into v, the library's message, as a *jsonrpc2.Request (see
// setRequest). Invalid lines are answered here and responses are routed to
// their Call. ReadObject returns an error only once input has ended.
func (s *objectStream) ReadObject(v any) error {
	c := (*Conn)(s)
	for {
		line, tooLong, err := c.in.next()
		if err == nil && c.isClosed() {
			err = errConnClosed
		}
		if err != nil {
			c.endRead(err)
			return io.EOF // the library closes itself quietly
		}
		switch {
		case tooLong:
			c.log.Warn("rejected message", "code", codeInvalidRequest, "reason", "message too large", "limit", c.opts.MaxLineBytes)
			c.replyError(context.Background(), jsonNull, &Error{Code: codeInvalidRequest, Message: "message too large"})
			continue
		case isBlank(line):
			continue
		}
		e := decodeEnvelope(line)
		switch e.kind {
		case kindInvalid:
			c.log.Warn("rejected message", "code", e.code, "reason", e.message)
			c.replyError(context.Background(), e.replyID, &Error{Code: e.code, Message: e.message})
			continue
		case kindResponse:
			c.routeResponse(&e)
			continue
		}
		// The line is reused for the next one: copy what the message keeps.
		m := &inbound{method: e.method, conn: c, params: cloneRaw(e.params), arrival: c.arrivals.Add(1)}
		if e.kind == kindRequest {
			m.id = cloneRaw(e.id)
		}
		return s.handOff(v, m, e.rawMethod)
	}
}

// handOff passes m to the library's read loop through its public API: v is
// the library's message, and the library's own decoding (json.Unmarshal into
// v) fills it from a ticket, a message of m's kind with m's method, no
// params and, for a request, m's arrival number as its id. The library's
// decoding cannot carry m itself (it re-encodes params, losing the
// duplicate keys acp.Unmarshal must see, and cannot represent every valid
// id: negative, fractional, huge, null), so m waits in c.next for Handle,
// which the library calls with the ticket before it reads again
// (jsonrpc2.Handler: "While it is running, the connection does not process
// any other requests or responses"). Handle takes m only if the ticket
// matches it.
func (s *objectStream) handOff(v any, m *inbound, rawMethod []byte) error {
	c := (*Conn)(s)
	t := appendTicket(s.ticket[:0], rawMethod, m.id != nil, m.arrival)
	if cap(t) <= retainLimit {
		s.ticket = t
	} else {
		s.ticket = nil
	}
	c.handoffMu.Lock()
	c.next = m
	c.handoffMu.Unlock()
	if err := json.Unmarshal(t, v); err != nil {
		err = fmt.Errorf("acp: jsonrpc2 cannot decode a request ticket: %w", err)
		c.log.Error("internal error", "err", err)
		c.endRead(err)
		return err
	}
	return nil
}

// appendTicket appends the ticket of a message with the raw method (a JSON
// string) to dst: a request with id arrival, or a notification. It is a
// complete JSON-RPC 2.0 message ("jsonrpc" included, though v0.2.3 ignores
// it: 3 of the ticket's allocations), so that a library version that checks
// its input still accepts it.
func appendTicket(dst, rawMethod []byte, request bool, arrival uint64) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = append(dst, rawMethod...)
	if request {
		dst = append(dst, `,"id":`...)
		dst = strconv.AppendUint(dst, arrival, 10)
	}
	return append(dst, '}')
}

// takeInbound returns the message whose ticket req is (see handOff), or nil
// if req is not the ticket of the message last read.
func (c *Conn) takeInbound(req *jsonrpc2.Request) *inbound {
	c.handoffMu.Lock()
	m := c.next
	c.next = nil
	c.handoffMu.Unlock()
	switch {
	case m == nil, req.Method != m.method, req.Notif != (m.id == nil):
		return nil
	case !req.Notif && (req.ID.IsString || req.ID.Num != m.arrival):
		return nil
	}
	return m
}

// WriteObject implements jsonrpc2.ObjectStream. This package sends all its
// messages itself, so the library never calls it; it still writes correctly.
func (s *objectStream) WriteObject(obj any) error {
	buf, err := encodeLine(obj)
	if err != nil {
		return err
	}
	defer putBuf(buf)
	return (*Conn)(s).out.writeLine(context.Background(), buf.Bytes())
}

// Close implements jsonrpc2.ObjectStream. The library calls it when reading
// ends; the streams stay open for replies still being written, and Conn.Close
// closes them.
func (s *objectStream) Close() error { return nil }

func cloneRaw(b []byte) json.RawMessage {
	if b == nil {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

// routeResponse delivers a response to its pending Call.
func (c *Conn) routeResponse(e *envelope) {
	var id uint64
	var ok bool
	if e.id != nil {
		var err error
		id, err = strconv.ParseUint(string(e.id), 10, 64)
		ok = err == nil
	}
	var pc *pendingCall
	if ok {
		c.mu.Lock()
		pc = c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if pc == nil {
		c.log.Debug("dropped response to an unknown or abandoned request", "id", strict.Clip(string(e.id)))
		return
	}
	switch {
	case e.problem != "":
		c.log.Warn("malformed response", "id", id, "reason", e.problem)
		pc.err = fmt.Errorf("acp: malformed response from peer: %s", e.problem)
	case e.errObj != nil:
		var re Error
		if err := strict.Unmarshal(e.errObj, &re, false, true); err != nil {
			c.log.Warn("malformed error response", "id", id)
			pc.err = fmt.Errorf("acp: malformed error response from peer: %w", err)
		} else {
			pc.rpcErr = &re // Unmarshal copied everything out of the line
		}
	default:
		pc.result = cloneRaw(e.result)
	}
	close(pc.done)
}

// replyError writes an error response with the raw id.
func (c *Conn) replyError(ctx context.Context, id json.RawMessage, e *Error) {
	c.writeResponse(ctx, wireResponse{JSONRPC: "2.0", ID: id, Error: e})
}

// writeResponse encodes and writes a response; if the result or error data
// cannot be encoded it sends -32603 instead.
func (c *Conn) writeResponse(ctx context.Context, resp wireResponse) {
	buf, err := encodeLine(resp)
	if err != nil {
		c.log.Error("encoding reply failed", "id", strict.Clip(string(resp.ID)), "err", err)
		buf, err = encodeLine(wireResponse{JSONRPC: "2.0", ID: resp.ID, Error: &Error{Code: codeInternalError, Message: "internal error: reply could not be encoded"}})
		if err != nil {
			return
		}
	}
	defer putBuf(buf)
	if err := c.out.writeLine(ctx, buf.Bytes()); err != nil {
		c.log.Debug("writing reply failed", "id", strict.Clip(string(resp.ID)), "err", err)
	}
}

// rpcHandler receives the library's dispatch on the read loop.
type rpcHandler struct{ c *Conn }

// Handle implements jsonrpc2.Handler for the tickets ReadObject decoded.
func (h rpcHandler) Handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) {
	c := h.c
	m := c.takeInbound(req)
	if m == nil {
		c.log.Error("internal error: jsonrpc2 handed over a request this connection did not read", "method", strict.Clip(req.Method))
		return
	}
	if m.id == nil {
		c.dispatchNotification(m)
		return
	}
	key, ok := idKey(m.id)
	if !ok {
		c.log.Error("internal error: request without its id", "method", strict.Clip(m.method))
		return
	}
	m.key = key
	c.dispatchRequest(m)
}

func (c *Conn) dispatchNotification(m *inbound) {
	c.log.Debug("notification", "method", strict.Clip(m.method))
	switch {
	case m.method == cancelRequestMethod:
		c.cancelInbound(m.params)
	case c.opts.Immediate != nil && c.opts.Immediate(m.method):
		c.runNotification(m)
	default:
		select {
		case c.queue <- m:
		default:
			c.queueWaits.Add(1)
			select {
			case c.queue <- m:
			case <-c.closing:
			}
		}
	}
}

func (c *Conn) notificationWorker() {
	defer close(c.workerDone)
	for {
		select {
		case <-c.closing:
			return
		case m, ok := <-c.queue:
			if !ok || c.isClosed() {
				return
			}
			c.runNotification(m)
		}
	}
}

func (c *Conn) runNotification(m *inbound) {
	if _, err := c.invoke(context.WithValue(c.noteCtx, arrivalKey{}, m.arrival), m.method, m.params); err != nil {
		// Unknown notifications are ignored quietly; others are worth a look.
		if e := (*Error)(nil); errors.As(err, &e) && e.Code == codeMethodNotFound {
			c.log.Debug("ignored notification", "method", strict.Clip(m.method))
		} else {
			c.log.Warn("notification handler failed", "method", strict.Clip(m.method), "err", err)
		}
	}
}

// invoke calls the handler, turning a panic into -32603.
func (c *Conn) invoke(ctx context.Context, method string, params json.RawMessage) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("handler panicked", "method", strict.Clip(method), "panic", p, "stack", string(debug.Stack()))
			result, err = nil, &Error{Code: codeInternalError, Message: "internal error"}
		}
	}()
	return c.h(ctx, method, params)
}

// cancelInbound handles "$/cancel_request" on the read loop.
func (c *Conn) cancelInbound(params json.RawMessage) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if err := strict.Unmarshal(params, &p, false, true); err != nil {
		c.log.Debug("ignored malformed $/cancel_request", "err", err)
		return
	}
	key, ok := idKey(p.RequestID)
	if !ok {
		c.log.Debug("ignored $/cancel_request without a valid requestId")
		return
	}
	c.mu.Lock()
	m := c.inflight[key]
	var cancel context.CancelFunc
	if m != nil && !m.returned && !m.cancelled {
		m.cancelled = true
		cancel = m.cancel
	}
	c.mu.Unlock()
	if cancel == nil {
		c.log.Debug("ignored $/cancel_request for no running request", "id", strict.Clip(string(p.RequestID)))
		return
	}
	c.log.Debug("request cancelled by peer", "id", strict.Clip(string(p.RequestID)))
	cancel()
}

func (c *Conn) dispatchRequest(m *inbound) {
	select {
	case c.slots <- struct{}{}:
	default:
		c.slotWaits.Add(1)
		select {
		case c.slots <- struct{}{}:
		case <-c.closing:
			return
		}
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		<-c.slots
		return
	}
	if _, dup := c.inflight[m.key]; dup {
		c.mu.Unlock()
		<-c.slots
		c.log.Warn("rejected request reusing a running request's id", "id", strict.Clip(string(m.id)))
		c.replyError(context.Background(), m.id, &Error{Code: codeInvalidRequest, Message: "request id is already in use"})
		return
	}
	ctx, cancel := context.WithCancel(c.reqCtx)
	ctx = context.WithValue(ctx, inboundKey{}, m)
	m.cancel = cancel
	c.inflight[m.key] = m
	c.handlers.Go(func() { c.serveRequest(ctx, m) })
	c.mu.Unlock()
}

// serveRequest runs one request handler and writes its reply exactly once.
func (c *Conn) serveRequest(ctx context.Context, m *inbound) {
	defer func() { <-c.slots }()
	c.log.Debug("request", "method", strict.Clip(m.method), "id", strict.Clip(string(m.id)))
	result, err := c.invoke(ctx, m.method, m.params)

	c.mu.Lock()
	m.returned = true
	peerCancelled := m.cancelled
	after := m.after
	m.after = nil
	delete(c.inflight, m.key)
	c.mu.Unlock()
	ctxErr := ctx.Err()
	m.cancel()

	resp := wireResponse{JSONRPC: "2.0", ID: m.id}
	var rpcErr *Error
	switch {
	case peerCancelled:
		resp.Error = &Error{Code: codeRequestCancelled, Message: "request cancelled"}
	case err != nil && errors.As(err, &rpcErr) && rpcErr != nil:
		resp.Error = rpcErr
	case err != nil && ctxErr != nil:
		resp.Error = &Error{Code: codeRequestCancelled, Message: "request cancelled"}
	case err != nil:
		resp.Error = &Error{Code: codeInternalError, Message: err.Error()}
	case result == nil:
		resp.Result = jsonNull
	default:
		resp.Result = result
	}
	if resp.Error != nil {
		c.log.Debug("request failed", "method", strict.Clip(m.method), "id", strict.Clip(string(m.id)), "code", resp.Error.Code)
	}
	c.writeResponse(context.WithoutCancel(ctx), resp)
	for _, f := range after {
		c.runAfter(m, f)
	}
}

func (c *Conn) runAfter(m *inbound, f func()) {
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("AfterReply function panicked", "method", strict.Clip(m.method), "panic", p, "stack", string(debug.Stack()))
		}
	}()
	f()
}

type inboundKey struct{}

type arrivalKey struct{}

// Arrival is the position of the message whose handler received ctx among
// every request and notification the connection read (1 for the first),
// or 0 for a context of no handler. Handlers run concurrently, so it is how
// one handler tells that another message was read before its own: a
// session/cancel read after a session/prompt cancels that prompt even when
// the prompt's handler has not started its work yet.
func Arrival(ctx context.Context) uint64 {
	if m, _ := ctx.Value(inboundKey{}).(*inbound); m != nil {
		return m.arrival
	}
	n, _ := ctx.Value(arrivalKey{}).(uint64)
	return n
}

// AfterReply registers f to run right after the reply to the request whose
// handler received ctx has been written (or its write failed), on that
// request's goroutine, in registration order, before the request's
// concurrency slot is released. Use it when a message must follow the reply,
// e.g. a session's first "session/update" after the "session/new" reply.
//
// It must be called before the handler returns; later calls, calls with a
// notification handler's context and calls outside a handler do nothing.
func AfterReply(ctx context.Context, f func()) {
	m, _ := ctx.Value(inboundKey{}).(*inbound)
	if m == nil || f == nil {
		return
	}
	m.conn.mu.Lock()
	defer m.conn.mu.Unlock()
	if !m.returned {
		m.after = append(m.after, f)
	}
}

// libLogger routes the library's messages to the connection's logger.
type libLogger struct{ l *slog.Logger }

func (l libLogger) Printf(format string, args ...any) {
	if l.l.Enabled(context.Background(), slog.LevelDebug) {
		l.l.Debug(strings.TrimSpace(fmt.Sprintf(format, args...)))
	}
}

// Compile-time checks.
var (
	_ jsonrpc2.ObjectStream = (*objectStream)(nil)
	_ jsonrpc2.Handler      = rpcHandler{}
)
