package exec

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"acpd/internal/procgroup"
	"acpd/model"
	"acpd/model/internal/body"
)

// message is what the reader passes to a Stream: an event, or the error
// ending the stream.
type message struct {
	ev  model.Event
	err error
	// invalid marks an error acpd found in the plug-in's line (the plug-in
	// may still be working on the request).
	invalid bool
}

// stream is the reader's side of one Stream call.
type stream struct {
	ch     chan message
	gone   chan struct{} // closed by unregister: the consumer left
	failed chan struct{} // closed when the process died; err is set
	err    error
}

// proc is one plug-in process and the four goroutines serving it: the
// waiter (owner of the others), the stdout reader, the stderr reader and
// the stdin writer.
type proc struct {
	b      *Backend
	cmd    *osexec.Cmd
	group  *procgroup.Group // the plug-in's process group (job object on Windows)
	stdin  *os.File         // our ends of the pipes
	stdout *os.File
	stderr *os.File
	writes chan *body.Payload // lines for the writer, without their newline

	ready     chan struct{} // closed when the handshake ended; then startErr and models are set
	readyOnce sync.Once
	startErr  error
	models    []model.ModelInfo
	timer     *time.Timer // handshake timeout

	dying     chan struct{} // closed once the process must not get new requests
	dyingOnce sync.Once
	exited    chan struct{} // closed when the process exited
	quit      chan struct{} // closed when the waiter stops waiting for the readers
	io        sync.WaitGroup

	mu      sync.Mutex
	streams map[string]*stream
	gone    bool   // the streams have been failed; no more registrations
	cause   error  // why acpd stopped the process; nil when it exited by itself
	death   error  // the error in-flight streams fail with
	lastErr string // last non-empty stderr line
}

// start starts a plug-in process and its goroutines; the handshake runs in
// the background and ends with p.ready. b.mu is held.
func (b *Backend) start() (*proc, error) {
	startErr := func(err error) error {
		return &model.Error{Kind: model.ErrInvalidRequest, Message: fmt.Sprintf("exec plug-in %q: cannot start: %v", b.name, err), Err: err}
	}
	var files []*os.File // every pipe end, closed on failure
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, startErr(err)
	}
	cmd := osexec.Command(b.argv[0], b.argv[1:]...)
	cmd.Env = pluginEnv(os.Environ(), b.env, b.allow, b.hide)
	cmd.Dir = b.dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	group, err := procgroup.Start(cmd)
	// The child has its own copies of its ends.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		closeAll()
		return nil, startErr(err)
	}
	p := &proc{
		b: b, cmd: cmd, group: group, stdin: inW, stdout: outR, stderr: errR,
		writes:  make(chan *body.Payload, writeQueue),
		ready:   make(chan struct{}),
		dying:   make(chan struct{}),
		exited:  make(chan struct{}),
		quit:    make(chan struct{}),
		streams: map[string]*stream{},
	}
	b.log.Debug("started plug-in", "plugin", b.name, "pid", cmd.Process.Pid)
	hello, _ := json.Marshal(struct {
		V    int    `json:"v"`
		Type string `json:"type"`
		ACPD string `json:"acpd"`
	}{ProtocolVersion, "hello", b.version})
	p.writes <- body.Raw(hello) // the queue is empty
	p.timer = time.AfterFunc(b.handshake, func() {
		p.stop(&model.Error{Kind: model.ErrInvalidRequest, Message: fmt.Sprintf("exec plug-in %q did not answer the hello within %v", b.name, b.handshake)})
	})
	b.wg.Add(1)
	p.io.Add(3)
	go p.readStdout()
	go p.readStderr()
	go p.write()
	go p.wait()
	return p, nil
}

// isDying reports whether the process no longer takes requests.
func (p *proc) isDying() bool {
	select {
	case <-p.dying:
		return true
	default:
		return false
	}
}

func (p *proc) markDying() { p.dyingOnce.Do(func() { close(p.dying) }) }

// stop records why acpd stops the process (the first reason wins) and
// kills it.
func (p *proc) stop(cause error) {
	p.mu.Lock()
	if p.cause == nil {
		p.cause = cause
	}
	p.mu.Unlock()
	p.markDying()
	_ = p.group.Kill()
}

// terminate stops the process for Close: SIGTERM to its group, then
// SIGKILL after grace (see procgroup.Group.Stop); it returns when the
// process has been reaped.
func (p *proc) terminate(grace time.Duration) {
	p.mu.Lock()
	if p.cause == nil {
		p.cause = errors.New("the exec backend was closed")
	}
	p.mu.Unlock()
	p.markDying()
	_ = p.group.Stop(context.Background(), nil, grace)
}

// endHandshake ends the handshake with err (nil: the plug-in is ready).
func (p *proc) endHandshake(models []model.ModelInfo, err error) {
	p.readyOnce.Do(func() {
		p.timer.Stop()
		p.models, p.startErr = models, err
		close(p.ready)
	})
}

// wait owns the process: it waits for its exit, ends the other goroutines
// and fails the streams in flight.
func (p *proc) wait() {
	defer p.b.wg.Done()
	waitErr := p.group.Wait()
	close(p.exited)
	p.markDying()
	p.timer.Stop()
	_ = p.group.Close() // kills what the plug-in left behind in its group
	readers := make(chan struct{})
	go func() { p.io.Wait(); close(readers) }()
	t := time.NewTimer(p.b.readGrace)
	select {
	case <-readers:
	case <-t.C:
		// A descendant outside the group holds a pipe open.
	}
	t.Stop()
	close(p.quit)
	p.stdout.Close()
	p.stderr.Close()
	p.stdin.Close()
	<-readers

	p.mu.Lock()
	cause, last := p.cause, p.lastErr
	p.mu.Unlock()
	started := false
	select {
	case <-p.ready:
		started = p.startErr == nil
	default:
	}
	var death *model.Error
	var me *model.Error
	switch {
	case errors.As(cause, &me):
		death = me
	case cause != nil:
		death = &model.Error{Kind: model.ErrNetwork, Message: fmt.Sprintf("exec plug-in %q: %v", p.b.name, cause), Err: cause}
	default:
		msg := fmt.Sprintf("exec plug-in %q exited", p.b.name)
		if waitErr != nil {
			msg += " (" + waitErr.Error() + ")"
		}
		if !started {
			msg += " before answering the hello"
		}
		if last != "" {
			msg += "; its last message: " + last
		}
		death = &model.Error{Kind: model.ErrNetwork, Message: msg, Err: waitErr}
	}
	if cause == nil {
		p.b.log.Warn("plug-in exited", "plugin", p.b.name, "status", waitErr)
	} else {
		p.b.log.Debug("plug-in stopped", "plugin", p.b.name, "cause", cause)
	}
	// A process that dies before its hello fails to start: not retried.
	startErr := death
	if death.Kind != model.ErrInvalidRequest {
		startErr = &model.Error{Kind: model.ErrInvalidRequest, Message: death.Message, Err: death}
	}
	p.endHandshake(nil, startErr)

	p.mu.Lock()
	p.gone, p.death = true, death
	streams := p.streams
	p.streams = nil
	p.mu.Unlock()
	for _, st := range streams {
		st.err = death
		close(st.failed)
	}
}

// failure returns the error streams fail with once the process is gone.
func (p *proc) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.death != nil {
		return p.death
	}
	return &model.Error{Kind: model.ErrNetwork, Message: fmt.Sprintf("exec plug-in %q is stopping", p.b.name)}
}

// register adds a stream; false when the process is gone.
func (p *proc) register(id string, st *stream) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone || p.isDying() {
		return false
	}
	p.streams[id] = st
	return true
}

// unregister removes a stream and releases a reader waiting to pass it a
// line.
func (p *proc) unregister(id string, st *stream) {
	p.mu.Lock()
	if p.streams[id] == st {
		delete(p.streams, id)
	}
	p.mu.Unlock()
	close(st.gone)
}

// send queues a line for the plug-in, waiting while the queue is full.
func (p *proc) send(ctx context.Context, line *body.Payload) error {
	select {
	case p.writes <- line:
		return nil
	case <-p.dying:
		return p.failure()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cancel queues a cancel line for id. It never waits: when the queue is
// full the plug-in is not reading its input, and would not read the
// cancel either; it is dropped.
func (p *proc) cancel(id string) {
	line, _ := json.Marshal(struct {
		V    int    `json:"v"`
		Type string `json:"type"`
		ID   string `json:"id"`
	}{ProtocolVersion, "cancel", id})
	select {
	case p.writes <- body.Raw(line):
	default:
		p.b.log.Debug("plug-in input queue full: cancel dropped", "plugin", p.b.name, "id", id)
	}
}

// write copies queued lines to the plug-in's standard input.
func (p *proc) write() {
	defer p.io.Done()
	for {
		select {
		case line := <-p.writes:
			_, err := line.WriteTo(p.stdin)
			if err == nil {
				_, err = p.stdin.Write([]byte{'\n'})
			}
			if err != nil {
				// The plug-in exited (the waiter reports it) or closed
				// its input (it cannot serve requests any more).
				p.pipeClosed(fmt.Errorf("writing to the plug-in: %w", err))
				return
			}
		case <-p.exited:
			return // nobody reads any more
		case <-p.quit:
			return
		}
	}
}

// protocolError stops the process for breaking the protocol.
func (p *proc) protocolError(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.b.log.Warn("plug-in protocol error", "plugin", p.b.name, "error", msg)
	p.stop(&model.Error{Kind: model.ErrServer, Message: fmt.Sprintf("exec plug-in %q broke the protocol: %s", p.b.name, msg)})
}

// inLine is any line a plug-in writes.
type inLine struct {
	V      *int              `json:"v"`
	Type   string            `json:"type"`
	ID     string            `json:"id"`
	Event  json.RawMessage   `json:"event"`
	Error  *wireError        `json:"error"`
	Models []model.ModelInfo `json:"models"`
}

// wireError is a plug-in's error object.
type wireError struct {
	Kind         string `json:"kind"`
	Message      string `json:"message"`
	Status       int    `json:"status"`
	RetryAfterMS int64  `json:"retryAfterMs"`
}

// readStdout reads the plug-in's lines and dispatches them.
func (p *proc) readStdout() {
	defer p.io.Done()
	r := bufio.NewReaderSize(p.stdout, 64<<10)
	handshaken := false
	for n := 1; ; n++ {
		line, err := readLine(r, p.b.maxLine)
		if errors.Is(err, errLineTooLong) {
			p.protocolError("line %d is longer than %d bytes", n, p.b.maxLine)
			return
		}
		if err != nil {
			p.pipeClosed(errors.New("the plug-in closed its standard output"))
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var in inLine
		if err := json.Unmarshal(line, &in); err != nil {
			p.protocolError("line %d is not a JSON object: %v", n, err)
			return
		}
		if in.V == nil || *in.V != ProtocolVersion {
			v := "none"
			if in.V != nil {
				v = fmt.Sprint(*in.V)
			}
			if !handshaken {
				p.stop(&model.Error{Kind: model.ErrInvalidRequest, Message: fmt.Sprintf(
					"exec plug-in %q speaks protocol version %s; this acpd speaks version %d", p.b.name, v, ProtocolVersion)})
				return
			}
			p.protocolError("line %d has protocol version %s, not %d", n, v, ProtocolVersion)
			return
		}
		if !handshaken {
			if !p.hello(&in) {
				return
			}
			handshaken = true
			continue
		}
		if in.ID == "" {
			p.protocolError("line %d has no request id", n)
			return
		}
		if !p.dispatch(&in) {
			return
		}
	}
}

// pipeClosed handles the end of the plug-in's output or input: the
// plug-in is exiting (the waiter reports why), or it is broken and is
// killed with cause.
func (p *proc) pipeClosed(cause error) {
	p.markDying()
	t := time.NewTimer(p.b.readGrace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-p.quit:
	case <-t.C:
		p.stop(cause)
	}
}

// hello handles the answer to the hello; false stops the reader.
func (p *proc) hello(in *inLine) bool {
	if in.Type != "hello" {
		p.stop(&model.Error{Kind: model.ErrInvalidRequest, Message: fmt.Sprintf("exec plug-in %q did not answer the hello (its first line has type %q)", p.b.name, in.Type)})
		return false
	}
	if in.Error != nil {
		p.stop(&model.Error{Kind: model.ErrInvalidRequest, Message: fmt.Sprintf("exec plug-in %q refused to start: %s", p.b.name, clip(in.Error.Message))})
		return false
	}
	for i, m := range in.Models {
		if m.ID == "" {
			p.stop(&model.Error{Kind: model.ErrInvalidRequest, Message: fmt.Sprintf("exec plug-in %q lists a model without an id (entry %d)", p.b.name, i)})
			return false
		}
	}
	if in.Models == nil {
		in.Models = []model.ModelInfo{}
	}
	p.b.log.Debug("plug-in ready", "plugin", p.b.name, "models", len(in.Models))
	p.endHandshake(in.Models, nil)
	return true
}

// dispatch passes a request's line to its stream; false stops the reader.
func (p *proc) dispatch(in *inLine) bool {
	p.mu.Lock()
	st := p.streams[in.ID]
	p.mu.Unlock()
	if st == nil {
		return true // cancelled, finished or unknown: ignored
	}
	m, terminal := decodeMessage(in)
	if terminal {
		p.mu.Lock()
		if p.streams[in.ID] == st {
			delete(p.streams, in.ID)
		}
		p.mu.Unlock()
	}
	select {
	case st.ch <- m:
	case <-st.gone:
	case <-p.quit:
		return false
	}
	return true
}

// decodeMessage turns a request's line into a message; terminal reports
// that it ends the request.
func decodeMessage(in *inLine) (m message, terminal bool) {
	invalid := func(format string, args ...any) (message, bool) {
		return message{invalid: true, err: &model.Error{Kind: model.ErrServer,
			Message: "exec plug-in sent an invalid event: " + fmt.Sprintf(format, args...)}}, true
	}
	hasEvent := len(in.Event) > 0 && string(in.Event) != "null"
	switch {
	case in.Error != nil && hasEvent:
		return invalid("line has both an event and an error")
	case in.Error != nil:
		return message{err: in.Error.modelError()}, true
	case !hasEvent:
		return invalid("line has neither an event nor an error")
	}
	var ev model.Event
	if err := json.Unmarshal(in.Event, &ev); err != nil {
		return invalid("%v", err)
	}
	switch ev.Type {
	case model.EventText, model.EventReasoning, model.EventReasoningDone:
	case model.EventToolStart, model.EventToolDelta, model.EventToolDone:
		if ev.ToolCallID == "" {
			return invalid("%s without toolCallId", ev.Type)
		}
	case model.EventUsage:
		if ev.Usage == nil {
			return invalid("usage without usage")
		}
	case model.EventFinish:
		switch ev.Finish {
		case model.FinishEndTurn, model.FinishToolUse, model.FinishMaxTokens, model.FinishRefusal:
		default:
			return invalid("finish reason %q", ev.Finish)
		}
		return message{ev: ev}, true
	default:
		return invalid("unknown event type %q", ev.Type)
	}
	return message{ev: ev}, false
}

// modelError converts a plug-in's error object.
func (e *wireError) modelError() *model.Error {
	kind := model.ErrorKind(e.Kind)
	switch kind {
	case model.ErrAuth, model.ErrQuota, model.ErrRateLimit, model.ErrOverloaded, model.ErrServer,
		model.ErrNetwork, model.ErrContextOverflow, model.ErrInvalidRequest:
	default:
		kind = model.ErrServer
	}
	out := &model.Error{Kind: kind, Message: clip(e.Message)}
	if e.Status >= 100 && e.Status < 1000 {
		out.Status = e.Status
	}
	if e.RetryAfterMS > 0 && e.RetryAfterMS < 1e9 {
		out.RetryAfter = time.Duration(e.RetryAfterMS) * time.Millisecond
	}
	if out.Message == "" {
		out.Message = "the plug-in reported an error"
	}
	return out
}

// readStderr logs the plug-in's standard error line by line, cutting long
// lines, and keeps the last line for error messages.
func (p *proc) readStderr() {
	defer p.io.Done()
	const maxLog = 4 << 10
	r := bufio.NewReaderSize(p.stderr, maxLog)
	for {
		line, err := r.ReadSlice('\n')
		cut := errors.Is(err, bufio.ErrBufferFull)
		if text := strings.TrimRight(string(line), "\r\n"); strings.TrimSpace(text) != "" {
			text = strings.ToValidUTF8(text, "\uFFFD")
			if cut {
				text += "..."
			}
			p.b.log.Debug("plug-in stderr", "plugin", p.b.name, "line", text)
			p.mu.Lock()
			p.lastErr = clip(text)
			p.mu.Unlock()
		}
		if cut { // skip the rest of the line
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
		}
		if err != nil {
			return
		}
	}
}

// errLineTooLong reports a line over the limit.
var errLineTooLong = errors.New("line too long")

// readLine returns the next line without its terminator; a last line
// without one is returned too. It fails with errLineTooLong beyond max
// bytes.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max+2 {
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (err != io.EOF || len(line) == 0) {
			return nil, err
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > max {
			return nil, errLineTooLong
		}
		return line, nil
	}
}

// clip bounds a message taken from the plug-in.
func clip(s string) string {
	const max = 1000
	s = strings.ToValidUTF8(strings.TrimSpace(s), "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
