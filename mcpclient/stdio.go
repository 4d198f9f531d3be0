package mcpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"acpd/internal/procgroup"
	"acpd/internal/tailbuf"
)

// maxLine bounds one line a stdio server writes on stdout (the SDK's own
// frame limit).
const maxLine = mcp.DefaultMaxLineLength

// maxJunkLogs bounds how many skipped stdout lines of one process are
// logged; later ones are counted only.
const maxJunkLogs = 10

// stdioTransport runs a stdio server as a child process in its own process
// group and connects to it over pipes. Unlike the SDK's CommandTransport it
// reaps the child as soon as it exits (so a crash is noticed and never
// leaves a zombie), kills what is left of its process group, and reads
// stdout through a [lineFilter] that skips lines that are not JSON.
type stdioTransport struct {
	cmd  *exec.Cmd
	tail *tailbuf.Buffer
	log  *slog.Logger

	mu   sync.Mutex
	proc *stdioProc // set by Connect
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	p, err := startStdio(t.cmd, t.tail, t.log)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.proc = p
	t.mu.Unlock()
	return newLineConn(p), nil
}

// process returns the started process, or nil before Connect.
func (t *stdioTransport) process() *stdioProc {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.proc
}

// stdioProc is one running stdio server.
type stdioProc struct {
	cmd    *exec.Cmd
	group  *procgroup.Group
	stdin  *os.File // our write end of the child's stdin
	stdout *os.File // our read end of the child's stdout
	filter *lineFilter
	tail   *tailbuf.Buffer

	exited  chan struct{} // closed once the child has been reaped
	waitErr error         // set before exited closes
	done    chan struct{} // closed when the reaper goroutine has returned
	closing chan struct{} // closed when Close starts
	once    sync.Once
	// selfExit records that the child had exited before Close stopped it.
	selfExit atomic.Bool
}

// startStdio starts cmd with pipes for stdin and stdout and a goroutine that
// reaps it. cmd must not have been started and must have Stdin and Stdout
// unset.
func startStdio(cmd *exec.Cmd, tail *tailbuf.Buffer, lg *slog.Logger) (*stdioProc, error) {
	g, inW, outR, err := procgroup.StartPiped(cmd)
	if err != nil {
		return nil, err
	}
	p := &stdioProc{
		cmd: cmd, group: g, stdin: inW, stdout: outR, tail: tail,
		exited: make(chan struct{}), done: make(chan struct{}), closing: make(chan struct{}),
	}
	p.filter = newLineFilter(outR, lg)
	go p.reap()
	return p, nil
}

// reap waits for the child, kills the rest of its process group and, once
// stdout has drained (or after terminateGrace, when something outside the
// group still holds it), closes stdout so the connection ends.
func (p *stdioProc) reap() {
	defer close(p.done)
	p.waitErr = p.group.Wait()
	_ = p.group.Close() // what the server started dies with it
	close(p.exited)
	t := time.NewTimer(terminateGrace)
	defer t.Stop()
	select {
	case <-p.filter.eof:
	case <-p.closing:
	case <-t.C:
	}
	p.stdout.Close()
}

// Write sends to the child's stdin.
func (p *stdioProc) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close stops the child the way the MCP specification asks: close its
// stdin, wait, SIGTERM its process group, wait, SIGKILL. It returns once
// the child is reaped and stdout is closed; it is idempotent.
func (p *stdioProc) Close() error {
	p.once.Do(func() {
		// A child whose stdout just ended is likely exiting on its own.
		select {
		case <-p.filter.eof:
			p.wait(200 * time.Millisecond)
		default:
		}
		p.selfExit.Store(p.hasExited())
		_ = p.group.Stop(context.Background(), p.stdin, terminateGrace)
		close(p.closing)
		<-p.done
	})
	return nil
}

func (p *stdioProc) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// exitedOnItsOwn reports whether the child exited without being told to
// (before Close, or without Close).
func (p *stdioProc) exitedOnItsOwn() bool {
	select {
	case <-p.closing:
		return p.selfExit.Load()
	default:
		return p.hasExited()
	}
}

// hasExited reports whether the child has exited (it has been reaped).
func (p *stdioProc) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// exitReason describes how the child ended ("exited with status 3",
// "killed by signal: killed"), with the tail of its stderr; empty while it
// runs.
func (p *stdioProc) exitReason() string {
	if !p.hasExited() {
		return ""
	}
	var s string
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		s = "exited with status 0"
	case errors.As(p.waitErr, &ee) && ee.ProcessState != nil && !ee.Exited():
		s = "killed by " + ee.ProcessState.String()
	case errors.As(p.waitErr, &ee):
		s = fmt.Sprintf("exited with status %d", ee.ExitCode())
	default:
		s = p.waitErr.Error()
	}
	if t := p.tail.String(); t != "" {
		s += " (stderr: " + t + ")"
	}
	return s
}

// lineFilter reads newline-delimited messages and passes on only lines
// that are valid JSON (objects, arrays or any other JSON value: what is not
// JSON-RPC is still the SDK's error). Other non-empty lines — banners,
// stray log output — are skipped and logged. A line longer than maxLine is
// an error.
type lineFilter struct {
	r       *bufio.Reader
	log     *slog.Logger
	pending []byte
	line    []byte
	skipped int
	eof     chan struct{} // closed when the underlying reader returned an error
	eofOnce sync.Once
	err     error
}

// lineBuf is the size of a lineFilter's read buffer. Longer lines are
// read in pieces (readLine joins them), so it bounds no line: it only
// keeps what each connection holds small, twenty servers' worth of it
// allocated at once when a session starts.
const lineBuf = 4 << 10

func newLineFilter(r io.Reader, lg *slog.Logger) *lineFilter {
	return &lineFilter{r: bufio.NewReaderSize(r, lineBuf), log: lg, eof: make(chan struct{})}
}

func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.readLine()
		if err != nil {
			f.err = err
			f.eofOnce.Do(func() { close(f.eof) })
		}
		if len(line) > 0 {
			f.accept(line)
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// readLine returns the next line without its terminator.
func (f *lineFilter) readLine() ([]byte, error) {
	f.line = f.line[:0]
	for {
		chunk, err := f.r.ReadSlice('\n')
		if len(f.line)+len(chunk) > maxLine+1 {
			return nil, fmt.Errorf("mcpclient: server wrote a line longer than %d bytes", maxLine)
		}
		f.line = append(f.line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(f.line, "\r\n"), err
	}
}

func (f *lineFilter) accept(line []byte) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return
	}
	if json.Valid(trimmed) {
		f.pending = append(append(f.pending[:0], trimmed...), '\n')
		return
	}
	f.skipped++
	if f.log != nil && f.skipped <= maxJunkLogs {
		s := string(trimmed)
		if len(s) > 200 {
			s = s[:200] + "…"
		}
		f.log.Warn("skipping a non-JSON line on the server's stdout", "line", s)
		if f.skipped == maxJunkLogs {
			f.log.Warn("further non-JSON stdout lines are skipped silently")
		}
	}
}
