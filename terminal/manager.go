package terminal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// DefaultKillGrace is the time between SIGTERM and SIGKILL when
// ManagerOptions.KillGrace is zero.
const DefaultKillGrace = 2 * time.Second

// ManagerOptions configures a Manager.
type ManagerOptions struct {
	// KillGrace is how long Kill, Release and Close wait after SIGTERM
	// before sending SIGKILL to a process group that is still alive.
	// Zero means DefaultKillGrace.
	KillGrace time.Duration
	// Logger receives diagnostics (terminal IDs, program names, PIDs and
	// exit statuses; never arguments or environment). Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Manager starts terminals and owns them: it reaps every process it started
// and runs the goroutines that collect their output. It is safe for
// concurrent use. Close ends everything it started.
type Manager struct {
	killGrace time.Duration
	log       *slog.Logger

	mu     sync.Mutex
	terms  map[string]*ptyTerminal
	closed bool

	// wg counts the reader and supervisor goroutines of every terminal
	// ever started, released or not.
	wg sync.WaitGroup
}

// NewManager returns a Manager with the given options.
func NewManager(opts ManagerOptions) *Manager {
	m := &Manager{
		killGrace: opts.KillGrace,
		log:       opts.Logger,
		terms:     make(map[string]*ptyTerminal),
	}
	if m.killGrace <= 0 {
		m.killGrace = DefaultKillGrace
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	return m
}

// Start validates spec and starts its command on a new PTY. ctx bounds only
// the start, not the life of the process: the process runs until it exits,
// is killed, or the Manager is closed. The returned terminal stays
// registered (see Get) until released. As a side effect, every descriptor
// >= 3 of the daemon is marked close-on-exec (see the package
// documentation).
//
// Errors: the command cannot be found or executed, Cwd is not an absolute
// path to a directory, spec is invalid, ctx has ended, or [ErrClosed].
func (m *Manager) Start(ctx context.Context, spec Spec) (Terminal, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if spec.Command == "" {
		return nil, errors.New("terminal: empty command")
	}
	limit := int64(MaxOutputByteLimit)
	switch {
	case spec.OutputByteLimit < 0:
		return nil, fmt.Errorf("terminal: negative output byte limit %d", spec.OutputByteLimit)
	case spec.OutputByteLimit > 0 && spec.OutputByteLimit < limit:
		limit = spec.OutputByteLimit
	}
	if spec.Cwd != "" {
		if !filepath.IsAbs(spec.Cwd) {
			return nil, fmt.Errorf("terminal: working directory %q is not an absolute path", spec.Cwd)
		}
		fi, err := os.Stat(spec.Cwd)
		if err != nil {
			return nil, fmt.Errorf("terminal: working directory: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("terminal: working directory %q is not a directory", spec.Cwd)
		}
	}
	env, err := buildEnv(spec)
	if err != nil {
		return nil, err
	}
	pathEnv, hasPath := envLookup(env, "PATH")
	prog, err := lookPath(spec.Command, pathEnv, hasPath)
	if err != nil {
		return nil, err
	}
	id, err := newID()
	if err != nil {
		return nil, err
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	for m.terms[id] != nil {
		if id, err = newID(); err != nil {
			return nil, err
		}
	}
	t, err := start(m, id, prog, spec, env, int(limit))
	if err != nil {
		return nil, err
	}
	m.terms[id] = t
	m.log.Debug("terminal started", "id", id, "program", filepath.Base(spec.Command), "pid", t.pid)
	return t, nil
}

// Get returns the terminal with the given ID if it was started by m and has
// not been released (and m has not been closed).
func (m *Manager) Get(id string) (Terminal, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.terms[id]
	if !ok {
		return nil, false
	}
	return t, true
}

// Close kills the process group of every terminal it started (SIGTERM, then
// SIGKILL after KillGrace), waits until every command has been reaped and
// every goroutine has ended, and forgets all terminals. Terminals obtained
// earlier keep answering Output and WaitForExit. Start fails with ErrClosed
// afterwards. Close takes at most about KillGrace plus the output drain time
// (processes stuck in uninterruptible sleep excepted). It is safe to call
// more than once; later calls wait for the first to finish its work.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	terms := make([]*ptyTerminal, 0, len(m.terms))
	for _, t := range m.terms {
		terms = append(terms, t)
	}
	clear(m.terms)
	m.mu.Unlock()

	var (
		wg   sync.WaitGroup
		errs = make([]error, len(terms))
	)
	for i, t := range terms {
		wg.Go(func() { errs[i] = t.terminate(context.Background()) })
	}
	wg.Wait()
	m.wg.Wait()
	return errors.Join(errs...)
}

func (m *Manager) remove(id string) {
	m.mu.Lock()
	delete(m.terms, id)
	m.mu.Unlock()
}

func newID() (string, error) {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("terminal: id: %w", err)
	}
	return "term-" + hex.EncodeToString(b[:]), nil
}
