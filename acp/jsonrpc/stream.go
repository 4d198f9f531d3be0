package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"acpd/acp/internal/strict"
	"acpd/internal/jsonscan"
)

// JSON-RPC 2.0 and ACP error codes used by this package.
const (
	codeParseError       = -32700
	codeInvalidRequest   = -32600
	codeMethodNotFound   = -32601
	codeInvalidParams    = -32602
	codeInternalError    = -32603
	codeRequestCancelled = -32800
)

// readBufSize is the bufio buffer under the line framer. A connection holds
// at most readBufSize + MaxLineBytes bytes of unread input.
const readBufSize = 64 << 10

// retainLimit is the largest line buffer kept for reuse between lines.
const retainLimit = 1 << 20

// lineReader splits its input into newline-terminated lines in bounded
// memory. It is used by one goroutine at a time.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte // accumulates a line spanning several bufio buffers; cap <= max
}

func newLineReader(r io.Reader, max, bufSize int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, bufSize), max: max}
}

// next returns the next line without its "\n" (and without a "\r" before it).
// A final line without "\n" at EOF is returned too. When a line is longer than
// max bytes, its bytes are discarded as they arrive and next returns
// tooLong == true. The returned slice is valid until the next call. err is
// non-nil only at the end of input (io.EOF) or on a read error.
func (l *lineReader) next() (line []byte, tooLong bool, err error) {
	if cap(l.buf) > retainLimit {
		l.buf = nil
	}
	l.buf = l.buf[:0]
	for {
		chunk, rerr := l.r.ReadSlice('\n')
		complete := rerr == nil
		if complete {
			chunk = chunk[:len(chunk)-1]
		}
		if !tooLong {
			switch {
			case len(l.buf)+len(chunk) > l.max:
				tooLong = true
				l.buf = l.buf[:0]
			case complete && len(l.buf) == 0:
				return trimCR(chunk), false, nil // common case: no copy
			default:
				l.grow(chunk)
			}
		}
		switch {
		case complete:
			if tooLong {
				return nil, true, nil
			}
			return trimCR(l.buf), false, nil
		case rerr == bufio.ErrBufferFull:
			continue
		case rerr == io.EOF:
			if tooLong {
				return nil, true, nil
			}
			if len(l.buf) > 0 {
				return trimCR(l.buf), false, nil
			}
			return nil, false, io.EOF
		default:
			return nil, false, rerr
		}
	}
}

// grow appends p to l.buf without letting cap(l.buf) exceed l.max (the
// caller guarantees len(l.buf)+len(p) <= l.max).
func (l *lineReader) grow(p []byte) {
	need := len(l.buf) + len(p)
	if need > cap(l.buf) {
		newCap := min(max(2*cap(l.buf), need, 4096), l.max)
		nb := make([]byte, len(l.buf), newCap)
		copy(nb, l.buf)
		l.buf = nb
	}
	l.buf = append(l.buf, p...)
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if !jsonscan.IsSpace(c) {
			return false
		}
	}
	return true
}

// lineWriter serialises whole-line writes to w. Its lock is a one-slot
// channel so that a writer waiting for it can give up when its context ends
// or the writer is closed; a write that has started always completes (or
// fails), because abandoning half a line would corrupt the stream. There is
// no queue: a peer that stops reading blocks writers, and close unblocks them
// (close must make a pending w.Write return, as it does for *os.File in
// non-blocking mode, net.Conn and io.Pipe).
//
// Lines are written through a buffer that is flushed whenever no other
// writer is waiting for the lock: a lone writer's line leaves at once, and
// writers that queue up behind a slow peer are written together, in one
// write(2) per buffer.
type lineWriter struct {
	w         io.WriteCloser
	lock      chan struct{}
	closed    chan struct{}
	closeOnce sync.Once
	closeErr  error
	waiting   atomic.Int32 // writers waiting for or holding the lock
	buf       []byte       // unflushed lines; guarded by lock
	err       error        // sticky write error; guarded by lock
}

// lineBufMax is the buffered size past which a holder flushes even with
// writers waiting.
const lineBufMax = 64 << 10

func newLineWriter(w io.WriteCloser) *lineWriter {
	return &lineWriter{w: w, lock: make(chan struct{}, 1), closed: make(chan struct{})}
}

// writeLine writes line, which must end with its only "\n". It returns
// ctx.Err() (having written nothing) if ctx ends while waiting for the lock.
// A nil error means the line was written, or buffered behind a writer that
// will write it; a failure to write it is reported to later writers.
func (lw *lineWriter) writeLine(ctx context.Context, line []byte) error {
	if len(line) == 0 || line[len(line)-1] != '\n' || bytes.IndexByte(line[:len(line)-1], '\n') >= 0 {
		return errMultiline
	}
	return lw.writeLines(ctx, line)
}

// writeLines is writeLine for lines, one or more whole lines (a Batch's),
// written together.
func (lw *lineWriter) writeLines(ctx context.Context, lines []byte) error {
	if len(lines) == 0 || lines[len(lines)-1] != '\n' {
		return errors.New("acp: internal error: lines do not end a line")
	}
	line := lines
	lw.waiting.Add(1)
	select {
	case lw.lock <- struct{}{}:
	case <-ctx.Done():
		lw.giveUp()
		return ctx.Err()
	case <-lw.closed:
		lw.giveUp()
		return errConnClosed
	}
	err := lw.writeLocked(line)
	lw.waiting.Add(-1)
	<-lw.lock
	lw.flushIfIdle()
	return err
}

// giveUp is a waiter leaving without the lock: if it was the last one, it
// makes sure lines buffered for it are flushed.
func (lw *lineWriter) giveUp() {
	lw.waiting.Add(-1)
	lw.flushIfIdle()
}

// flushIfIdle flushes the buffer when nobody else is about to: no writer
// waits and the lock is free. A writer holding the lock flushes itself
// when it leaves.
func (lw *lineWriter) flushIfIdle() {
	if lw.waiting.Load() != 0 {
		return
	}
	select {
	case lw.lock <- struct{}{}:
	default:
		return
	}
	if len(lw.buf) > 0 && lw.err == nil {
		lw.err = lw.flush()
	}
	<-lw.lock
}

func (lw *lineWriter) writeLocked(line []byte) error {
	select {
	case <-lw.closed:
		return errConnClosed
	default:
	}
	if lw.err != nil {
		return lw.err
	}
	if lw.waiting.Load() <= 1 && len(lw.buf) == 0 {
		// Nobody behind us: write directly.
		lw.err = lw.write(line)
		return lw.err
	}
	lw.buf = append(lw.buf, line...)
	if lw.waiting.Load() <= 1 || len(lw.buf) >= lineBufMax {
		lw.err = lw.flush()
	}
	return lw.err
}

func (lw *lineWriter) flush() error {
	err := lw.write(lw.buf)
	if cap(lw.buf) > 4*lineBufMax {
		lw.buf = nil // do not pin a huge line
	} else {
		lw.buf = lw.buf[:0]
	}
	return err
}

func (lw *lineWriter) write(b []byte) error {
	n, err := lw.w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("acp: write: %w", err)
	}
	return nil
}

// close closes w once, unblocking a stuck Write, and fails later writes.
func (lw *lineWriter) close() error {
	lw.closeOnce.Do(func() {
		close(lw.closed)
		lw.closeErr = lw.w.Close()
	})
	return lw.closeErr
}

// Outbound wire forms.
type wireRequest struct {
	JSONRPC string  `json:"jsonrpc"`
	ID      *uint64 `json:"id,omitempty"`
	Method  string  `json:"method"`
	Params  any     `json:"params,omitempty"`
}

type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

var (
	jsonNull = json.RawMessage("null")
	bufPool  = sync.Pool{New: func() any { return new(bytes.Buffer) }}
)

// encodeLine encodes v as one line (compact JSON, no HTML escaping, "\n"
// terminated) into a pooled buffer; release it with putBuf.
func encodeLine(v any) (*bytes.Buffer, error) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		putBuf(buf)
		return nil, err
	}
	return buf, nil
}

func putBuf(buf *bytes.Buffer) {
	if buf.Cap() <= retainLimit {
		bufPool.Put(buf)
	}
}

// msgKind classifies an inbound line.
type msgKind int

const (
	kindInvalid msgKind = iota
	kindRequest
	kindNotification
	kindResponse
)

// envelope is a decoded inbound message. Its byte slices alias the line.
type envelope struct {
	kind   msgKind
	id     []byte // raw id JSON; nil when absent
	method string
	// rawMethod is the method as received (a JSON string); requests and
	// notifications only.
	rawMethod []byte
	params    []byte // raw params JSON; nil when absent
	result    []byte // responses
	errObj    []byte // responses

	// kindInvalid: the error response to send.
	code    int
	message string
	replyID []byte // raw id JSON for the error response ("null" if unknown)

	// kindResponse: why the response is malformed ("" if well formed).
	problem string
}

var envelopeKeys = [...]string{"jsonrpc", "id", "method", "params", "result", "error"}

const (
	keyJSONRPC = iota
	keyID
	keyMethod
	keyParams
	keyResult
	keyError
)

// decodeEnvelope validates one line strictly: exactly-spelled envelope keys,
// no duplicates, "jsonrpc":"2.0", an id that is a string, number or null.
// Unknown envelope keys are ignored. See envelope for the result.
func decodeEnvelope(line []byte) envelope {
	invalid := func(code int, msg string, id []byte) envelope {
		if id == nil {
			id = jsonNull
		}
		return envelope{kind: kindInvalid, code: code, message: msg, replyID: id}
	}
	if !json.Valid(line) {
		msg := "parse error"
		var se *json.SyntaxError
		if err := json.Unmarshal(line, new(json.RawMessage)); errors.As(err, &se) {
			msg = fmt.Sprintf("parse error at offset %d", se.Offset)
		}
		return invalid(codeParseError, msg, nil)
	}
	i := jsonscan.Space(line, 0)
	switch line[i] {
	case '{':
	case '[':
		return invalid(codeInvalidRequest, "batch messages are not supported", nil)
	default:
		return invalid(codeInvalidRequest, "message must be a JSON object", nil)
	}

	var (
		vals    [len(envelopeKeys)][]byte
		variant [len(envelopeKeys)]bool
		problem string
	)
	_ = strict.Members(line, func(key string, val []byte) error {
		for k, name := range envelopeKeys {
			switch {
			case key == name:
				if vals[k] != nil && problem == "" {
					problem = fmt.Sprintf("duplicate key %q", name)
				}
				vals[k] = val
				return nil
			case strings.EqualFold(key, name):
				variant[k] = true
				if problem == "" {
					problem = fmt.Sprintf("key %s must be spelled %q", strict.QuoteKey(key), name)
				}
				return nil
			}
		}
		return nil
	})

	id := vals[keyID]
	idValid := id == nil || isIDJSON(id)
	requestish := vals[keyMethod] != nil || variant[keyMethod]
	responseish := !requestish && (vals[keyResult] != nil || vals[keyError] != nil || variant[keyResult] || variant[keyError])

	if responseish {
		e := envelope{kind: kindResponse, id: id, result: vals[keyResult], errObj: vals[keyError]}
		switch {
		case problem != "":
			e.problem = problem
		case !isVersion2(vals[keyJSONRPC]):
			e.problem = `"jsonrpc" must be "2.0"`
		case id == nil || !idValid:
			e.problem = "missing or invalid id"
		case e.result != nil && e.errObj != nil:
			e.problem = "response has both result and error"
		case e.errObj != nil && e.errObj[0] != '{':
			e.problem = "error must be an object"
		}
		return e
	}
	if !requestish {
		// Not answered with its id: a response-shaped message with a
		// misspelled member must not be mistaken for an answer.
		return invalid(codeInvalidRequest, "message is neither a request nor a response", nil)
	}

	var replyID []byte
	if id != nil && idValid {
		replyID = id
	}
	switch {
	case problem != "":
		return invalid(codeInvalidRequest, problem, replyID)
	case !isVersion2(vals[keyJSONRPC]):
		return invalid(codeInvalidRequest, `"jsonrpc" must be "2.0"`, replyID)
	case !idValid:
		return invalid(codeInvalidRequest, "id must be a string, a number or null", nil)
	case vals[keyMethod][0] != '"':
		return invalid(codeInvalidRequest, "method must be a string", replyID)
	case vals[keyResult] != nil || vals[keyError] != nil:
		return invalid(codeInvalidRequest, "a request must not have result or error", replyID)
	}
	if p := vals[keyParams]; p != nil && p[0] != '{' && p[0] != '[' && p[0] != 'n' {
		return invalid(codeInvalidRequest, "params must be an object or an array", replyID)
	}
	m := vals[keyMethod]
	_, complex := jsonscan.StringEnd(m, 0)
	e := envelope{kind: kindNotification, method: strict.Unquote(m, complex), rawMethod: m, params: vals[keyParams]}
	if id != nil {
		e.kind = kindRequest
		e.id = id
	}
	return e
}

// isIDJSON reports whether raw (validated JSON) is a valid request id.
func isIDJSON(raw []byte) bool {
	switch c := raw[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	default:
		return string(raw) == "null"
	}
}

func isVersion2(raw []byte) bool {
	if len(raw) == 0 || raw[0] != '"' {
		return false
	}
	_, complex := jsonscan.StringEnd(raw, 0)
	return strict.Unquote(raw, complex) == "2.0"
}

// idKey maps a raw request id to a comparable key: strings by their decoded
// value, numbers by their literal text, and null.
func idKey(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !json.Valid(raw) || !isIDJSON(raw) {
		return "", false
	}
	switch raw[0] {
	case '"':
		_, complex := jsonscan.StringEnd(raw, 0)
		return "s" + strict.Unquote(raw, complex), true
	case 'n':
		return "null", true
	default:
		return "n" + string(raw), true
	}
}
