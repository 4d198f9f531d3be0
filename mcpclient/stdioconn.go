package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"acpd/internal/jsonscan"
)

// lineConn is the connection to a stdio server: the SDK's [mcp.IOTransport]
// but for how a line is read. The lineFilter has found each line (and
// checked that it is JSON), so a line is decoded once (see decodeLine),
// where the SDK's connection scanned it again and decoded it twice (first
// trying it as a batch), each decode taking a 32 KiB buffer: most of what
// a tool call allocated.
//
// A batch (a JSON array) is read as its messages, one by one, whatever
// the protocol version (the SDK refuses batches from 2025-06-18 on), and
// answers to requests in it are written one by one.
//
// Read reads the server's stdout itself, on the SDK's reading goroutine:
// a goroutine of its own passing lines on cost every message one more
// hand-off between goroutines (a thread woken, on a busy machine tens of
// microseconds), twice per tool call counting the SDK's to the caller.
// Close ends a Read waiting for a line by closing stdout (the server is
// stopped first), and a context that ends does by the read's deadline.
type lineConn struct {
	p      *stdioProc
	closed chan struct{}     // closed when Close starts
	queue  []jsonrpc.Message // the rest of a batch (Read is not concurrent)

	writeMu   sync.Mutex
	closeOnce sync.Once
	closeErr  error
}

var _ mcp.Connection = (*lineConn)(nil)

// newLineConn connects to p.
func newLineConn(p *stdioProc) *lineConn {
	return &lineConn{p: p, closed: make(chan struct{})}
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	select {
	case <-c.closed:
		return nil, io.EOF
	default:
	}
	// The SDK's context for stdio is never done; another's ends the
	// read through its deadline (which leaves the connection broken, as
	// the SDK ends it on any error).
	stop := context.AfterFunc(ctx, func() { _ = c.p.stdout.SetReadDeadline(time.Now()) })
	line, err := c.p.filter.next()
	stop()
	if err != nil {
		select {
		case <-c.closed:
			return nil, io.EOF
		default:
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if line[0] != '[' {
		return decodeLine(line)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(line, &raws); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, len(raws))
	for i, raw := range raws {
		m, err := decodeLine(raw)
		if err != nil {
			return nil, err
		}
		msgs[i] = m
	}
	c.queue = msgs[1:]
	return msgs[0], nil
}

// decodeLine decodes one JSON-RPC message. The answer to a request (most
// of what a server sends: a tool call's result, a list) is read without
// reflection when it has the plain shape {"jsonrpc":"2.0","id":N,
// "result":...}, each member once: jsonrpc.DecodeMessage takes a 32 KiB
// buffer for every line it decodes. Anything else (requests,
// notifications, errors, string ids, other members) goes to
// jsonrpc.DecodeMessage, which decides what it is.
func decodeLine(line []byte) (jsonrpc.Message, error) {
	if m, ok := plainResponse(line); ok {
		return m, nil
	}
	return jsonrpc.DecodeMessage(line)
}

// plainResponse decodes line when it is a response of the plain shape
// (see decodeLine); its Result is line's own bytes.
func plainResponse(line []byte) (*jsonrpc.Response, bool) {
	const (
		version = 1 << iota
		id
		result
	)
	var (
		seen       jsonscan.Seen
		n          int
		start, end int
	)
	sc := jsonscan.New(string(line))
	ok := sc.Object(func(key string) bool {
		switch key {
		case "jsonrpc":
			v, ok := sc.String()
			return ok && v == "2.0" && seen.First(version)
		case "id":
			var ok bool
			n, ok = sc.Int()
			return ok && seen.First(id)
		case "result":
			var ok bool
			start, end, ok = sc.Span()
			return ok && seen.First(result)
		}
		return false
	})
	if !ok || !sc.End() || seen != version|id|result {
		return nil, false
	}
	rid, err := jsonrpc.MakeID(float64(n))
	if err != nil {
		return nil, false
	}
	return &jsonrpc.Response{ID: rid, Result: json.RawMessage(line[start:end:end])}, true
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.p.Write(append(data, '\n'))
	return err
}

// Close stops the server (stdioProc.Close, which returns once the
// server's stdout is closed, so that a waiting Read ends, with io.EOF).
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.closeErr = c.p.Close()
	})
	return c.closeErr
}

func (c *lineConn) SessionID() string { return "" }

// next returns the next JSON line, a copy without its terminator.
func (f *lineFilter) next() ([]byte, error) {
	if _, err := f.Read(nil); err != nil && len(f.pending) == 0 {
		return nil, err
	}
	line := bytes.Clone(bytes.TrimSuffix(f.pending, []byte("\n")))
	f.pending = f.pending[:0]
	return line, nil
}
