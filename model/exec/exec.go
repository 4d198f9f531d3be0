package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"acpd/model"
	"acpd/model/internal/body"
)

// ProtocolVersion is the plug-in protocol version this package speaks (the
// "v" of every line).
const ProtocolVersion = 1

// DefaultHandshakeTimeout is the handshake timeout applied when
// Options.HandshakeTimeout is zero.
const DefaultHandshakeTimeout = 10 * time.Second

// MaxLineBytes bounds one line written by a plug-in.
const MaxLineBytes = 16 << 20

const (
	// defaultKillGrace is the time between SIGTERM and SIGKILL on Close.
	defaultKillGrace = 2 * time.Second
	// defaultReadGrace is how long the pipes may stay open after the
	// plug-in exited, or the process run after it closed a pipe.
	defaultReadGrace = 2 * time.Second
	// writeQueue is the number of lines waiting for the plug-in to read
	// its standard input; a Stream waits (honouring its context) while it
	// is full.
	writeQueue = 64
	// streamQueue is the number of lines waiting for one Stream's
	// consumer; while it is full the reader waits, which pauses the
	// plug-in's other requests until the consumer catches up or stops.
	streamQueue = 256
)

// Options configures a [Backend].
type Options struct {
	// Command is the plug-in's argv; Command[0] is looked up in PATH when
	// it has no slash.
	Command []string
	// Env holds "NAME=value" entries added to the plug-in's environment
	// after acpd's own environment, filtered of credentials (see the
	// package documentation); they override variables of the same name.
	Env []string
	// Allow lists secret-looking variable names (or path.Match patterns)
	// the plug-in inherits anyway: the `[env] allow` configuration.
	Allow []string
	// Hide names variables left out of the inherited environment whatever
	// their names and Allow (the key variables of other providers, for
	// example).
	Hide []string
	// Dir is the plug-in's working directory; empty means acpd's.
	Dir string
	// HandshakeTimeout bounds the wait for the plug-in's hello; 0 means
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// Logger receives the plug-in's standard error (debug level) and
	// lifecycle messages; nil means slog.Default().
	Logger *slog.Logger
	// Version is acpd's version, sent in the hello; empty sends "dev".
	Version string
}

// Backend runs a plug-in (see the package documentation). It is safe for
// concurrent use. The owner must call Close, which stops the plug-in and
// every goroutine the Backend started.
type Backend struct {
	argv      []string
	env       []string
	allow     []string
	hide      []string
	dir       string
	handshake time.Duration
	log       *slog.Logger
	version   string
	name      string // base name of the command, for messages
	// killGrace, readGrace and maxLine are constants replaced by tests.
	killGrace time.Duration
	readGrace time.Duration
	maxLine   int

	ids atomic.Uint64
	wg  sync.WaitGroup // one per process, done when its goroutines ended

	mu     sync.Mutex
	cur    *proc
	closed bool
}

// New returns a Backend for opts. It starts nothing: the plug-in starts at
// the first Stream or Models call. Options are copied.
func New(opts Options) *Backend {
	b := &Backend{
		argv:      slices.Clone(opts.Command),
		env:       slices.Clone(opts.Env),
		allow:     slices.Clone(opts.Allow),
		hide:      slices.Clone(opts.Hide),
		dir:       opts.Dir,
		handshake: opts.HandshakeTimeout,
		log:       opts.Logger,
		version:   opts.Version,
		killGrace: defaultKillGrace,
		readGrace: defaultReadGrace,
		maxLine:   MaxLineBytes,
	}
	if b.handshake <= 0 {
		b.handshake = DefaultHandshakeTimeout
	}
	if b.log == nil {
		b.log = slog.Default()
	}
	if b.version == "" {
		b.version = "dev"
	}
	if len(b.argv) > 0 {
		b.name = filepath.Base(b.argv[0])
	}
	return b
}

// process returns the running, handshaken plug-in, starting one when
// there is none or the last one died. It waits for the handshake with ctx.
func (b *Backend) process(ctx context.Context) (*proc, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "exec backend is closed"}
	}
	p := b.cur
	if p == nil || p.isDying() {
		var err error
		if p, err = b.start(); err != nil {
			b.mu.Unlock()
			return nil, err
		}
		b.cur = p
	}
	b.mu.Unlock()
	select {
	case <-p.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if p.startErr != nil {
		return nil, p.startErr
	}
	return p, nil
}

// Models returns the models the plug-in listed in its hello, starting the
// plug-in if needed.
func (b *Backend) Models(ctx context.Context) ([]model.ModelInfo, error) {
	p, err := b.process(ctx)
	if err != nil {
		return nil, err
	}
	return slices.Clone(p.models), nil
}

// Close stops the plug-in (SIGTERM to its process group, SIGKILL after a
// grace period), fails the requests in flight with model.ErrNetwork and
// waits for the process and every goroutine of the Backend. Later calls of
// Stream and Models fail. Close is idempotent.
func (b *Backend) Close() error {
	b.mu.Lock()
	p := b.cur
	b.cur, b.closed = nil, true
	b.mu.Unlock()
	if p != nil {
		p.terminate(b.killGrace)
	}
	b.wg.Wait()
	return nil
}

// toolArgs collects the streamed arguments of a response's tool calls, to
// check them at tool_done: a call whose streamed arguments are not JSON
// would become an assistant message that cannot be encoded (nor logged,
// nor sent back).
type toolArgs map[string][]byte

// check records a tool_delta and checks a tool_done without input (the
// input of one with input is JSON: its line decoded).
func (t *toolArgs) check(ev model.Event) error {
	switch ev.Type {
	case model.EventToolDelta:
		if *t == nil {
			*t = toolArgs{}
		}
		(*t)[ev.ToolCallID] = append((*t)[ev.ToolCallID], ev.Text...)
	case model.EventToolDone:
		args, ok := (*t)[ev.ToolCallID]
		delete(*t, ev.ToolCallID)
		if len(ev.Input) == 0 && ok && len(args) > 0 && !json.Valid(args) {
			return &model.Error{Kind: model.ErrServer, Message: fmt.Sprintf("exec plug-in sent an invalid event: tool call %q: its streamed arguments are not valid JSON", ev.ToolCallID)}
		}
	}
	return nil
}

// request is the line that sends a request.
type request struct {
	V       int            `json:"v"`
	Type    string         `json:"type"`
	ID      string         `json:"id"`
	Request *model.Request `json:"request"`
}

// Stream implements [model.Backend]: it sends req to the plug-in and
// yields the plug-in's events. Stopping the iteration early, or ctx
// ending, sends a cancel line. Failures are *model.Error values (or ctx's
// error) and are not retried here.
func (b *Backend) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		if len(b.argv) == 0 {
			yield(model.Event{}, &model.Error{Kind: model.ErrInvalidRequest, Message: "exec backend: no plug-in command configured"})
			return
		}
		p, err := b.process(ctx)
		if err != nil {
			yield(model.Event{}, err)
			return
		}
		id := "r" + strconv.FormatUint(b.ids.Add(1), 10)
		// Long texts are written from the transcript, not copied (package
		// body); an answer's run of parts is sent as one part.
		var bb body.Builder
		r := *req
		r.Messages = make([]model.Message, len(req.Messages))
		for i, m := range req.Messages {
			r.Messages[i] = bb.Message(m)
		}
		// The protocol marks breakpoints on the messages.
		for _, i := range req.CacheAt {
			if i >= 0 && i < len(r.Messages) {
				r.Messages[i].Cache = true
			}
		}
		r.CacheAt = nil
		line, err := bb.Marshal(request{V: ProtocolVersion, Type: "request", ID: id, Request: &r})
		if err != nil {
			yield(model.Event{}, &model.Error{Kind: model.ErrInvalidRequest, Message: "exec backend: encoding request: " + err.Error(), Err: err})
			return
		}
		st := &stream{ch: make(chan message, streamQueue), gone: make(chan struct{}), failed: make(chan struct{})}
		if !p.register(id, st) {
			yield(model.Event{}, p.failure())
			return
		}
		ended := false // the plug-in ended the request, or died
		defer func() {
			p.unregister(id, st)
			if !ended {
				p.cancel(id)
			}
		}()
		if err := p.send(ctx, line); err != nil {
			ended = true // never sent: nothing to cancel
			yield(model.Event{}, err)
			return
		}
		var calls toolArgs
		// deliver passes m on; done reports the end of the stream.
		deliver := func(m message) (done bool) {
			if m.err == nil {
				if err := calls.check(m.ev); err != nil {
					m = message{invalid: true, err: err}
				}
			}
			if m.err != nil {
				ended = !m.invalid // an invalid event leaves the plug-in working: cancel it
				yield(model.Event{}, m.err)
				return true
			}
			if m.ev.Type == model.EventFinish {
				ended = true
				yield(m.ev, nil)
				return true
			}
			return !yield(m.ev, nil)
		}
		for {
			select {
			case m := <-st.ch:
				if deliver(m) {
					return
				}
			case <-st.failed:
				// The reader has stopped: deliver what it queued first.
				for len(st.ch) > 0 {
					if deliver(<-st.ch) {
						return
					}
				}
				ended = true
				yield(model.Event{}, st.err)
				return
			case <-ctx.Done():
				yield(model.Event{}, ctx.Err())
				return
			}
		}
	}
}
