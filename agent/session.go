package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"acpd/acp"
	"acpd/config"
	"acpd/editor"
	"acpd/fs"
	"acpd/internal/outbox"
	"acpd/mcpbridge"
	"acpd/model"
	"acpd/permissions"
	"acpd/session"
	"acpd/tools"
)

var thoughtLevels = []struct{ id, name string }{
	{"off", "Off"}, {"low", "Low"}, {"medium", "Medium"}, {"high", "High"},
}

func validThought(t string) bool {
	for _, tl := range thoughtLevels {
		if tl.id == t {
			return true
		}
	}
	return false
}

// settings are a session's persisted choices (record kind "meta").
type settings struct {
	Mode    string `json:"mode,omitempty"`
	Model   string `json:"model,omitempty"`
	Thought string `json:"thought,omitempty"`
	Title   string `json:"title,omitempty"`
}

// sess is one open session. Its fields after construction are guarded by mu,
// except the immutable ones (id, cwd, dirs, log, cfg).
type sess struct {
	a    *Agent
	id   acp.SessionID
	cwd  string
	dirs []string
	log  *session.Log
	cfg  *config.Config
	// mcpServers are the editor's MCP servers for this session.
	mcpServers []acp.McpServer
	// configWarning says why the project file was ignored (nil: it was
	// not); announced with the commands once the session is open.
	configWarning error
	// sandboxNotice tells the session once that commands run unconfined.
	sandboxNotice sync.Once
	// abandoned counts tool calls a cancelled turn stopped waiting for.
	abandoned sync.WaitGroup

	roots  *fs.Roots
	broker *fs.Broker
	policy *permissions.Policy
	mcp    *mcpbridge.Bridge // nil without MCP servers

	mu         sync.Mutex
	set        settings
	transcript []model.Message
	turn       *turn
	closed     bool
	msgSeq     int
	used       int64           // context tokens of the last response
	cost       float64         // USD spent in this process, when prices are known
	plan       string          // the latest plan, as text (kept across compaction)
	changed    map[string]bool // files changed outside the agent since it last read them
	// sysPrompt is the system prompt built for sysKey (see systemPrompt);
	// facts the environment facts, gathered once per session.
	sysPrompt, sysKey, facts string
	// jobs are the session's background commands, stopped when it closes.
	jobs *tools.Jobs

	// chunks buffers streamed text for the log, out queues updates for
	// the client (package internal/outbox).
	chunks *outbox.Log
	out    *outbox.Queue

	// cancelledBefore is the arrival (acp.Arrival) of the latest
	// session/cancel: a prompt read before it is cancelled even when its
	// turn had not begun when the cancel was handled. Guarded by mu.
	cancelledBefore uint64
}

// turn is the running prompt turn of a session.
type turn struct {
	ctx       context.Context // ends when the turn is cancelled, by any means
	cancel    context.CancelFunc
	done      chan struct{}
	cancelled bool // guarded by sess.mu
	// replying means the prompt handler has returned and its reply is being
	// written; the slot is freed right after. Guarded by sess.mu.
	replying bool
}

// newSess wraps an opened log with the session's file broker and permission
// policy. On error the caller still owns l.
func (a *Agent) newSess(l *session.Log, cwd string, dirs []string, cfg *config.Config, mcp []acp.McpServer) (*sess, error) {
	roots, err := fs.NewRoots(cwd, dirs...)
	if err != nil {
		return nil, invalidParams("session directories: %v", err)
	}
	rules := make([]permissions.Rule, 0, len(cfg.Permissions.Rules))
	for _, r := range cfg.Permissions.Rules {
		rules = append(rules, permissions.Rule{Action: permissions.Action(r.Action), Tool: r.Tool, Match: r.Match})
	}
	policy, err := permissions.NewPolicy(permissions.PolicyOptions{
		Rules:     rules,
		Protected: a.opts.Protected,
		Store:     a.opts.Permissions,
		Project:   permissions.ProjectKey(cwd),
		Tools:     a.toolKinds,
	})
	if err != nil {
		return nil, invalidParams("permission rules: %v", err)
	}
	s := &sess{a: a, id: acp.SessionID(l.ID()), cwd: cwd, dirs: dirs, log: l, cfg: cfg, mcpServers: mcp, roots: roots, policy: policy, jobs: tools.NewJobs(a.log)}
	s.chunks = outbox.NewLog(func(u acp.SessionUpdate) { s.appendRecord(kindUpdate, u) })
	s.out = outbox.NewQueue(s.sendNow)
	caps := a.clientCapabilities()
	var ed fs.Editor
	canRead, canWrite := false, false
	if caps.Fs != nil && (caps.Fs.ReadTextFile || caps.Fs.WriteTextFile) {
		ed = editor.FS{Conn: a.peer, Session: s.id}
		canRead, canWrite = caps.Fs.ReadTextFile, caps.Fs.WriteTextFile
	}
	s.broker = fs.NewBroker(fs.BrokerOptions{Roots: roots, Editor: ed, CanEditorRead: canRead, CanEditorWrite: canWrite, Logger: a.log})
	s.set = settings{Mode: cfg.Agent.DefaultMode, Model: cfg.Model, Thought: "medium"}
	if s.set.Model == "" {
		s.set.Model = a.fallbackModel()
	}
	if !permissions.Mode(s.set.Mode).Valid() {
		s.set.Mode = string(permissions.ModeAsk)
	}
	s.startMCP()
	return s, nil
}

// restore applies a stored session's records to s and returns the "update"
// payloads in order (for session/load to replay).
func (s *sess) restore(recs []session.Record) ([]json.RawMessage, error) {
	var updates []json.RawMessage
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range recs {
		switch r.Kind {
		case kindUpdate:
			updates = append(updates, r.Data)
			if bytes.Contains(r.Data, []byte(`"plan"`)) {
				var u acp.SessionUpdate
				if json.Unmarshal(r.Data, &u) == nil && u.Plan != nil {
					s.plan = tools.PlanText(u.Plan)
				}
			}
		case kindCompact:
			var msgs []model.Message
			if err := json.Unmarshal(r.Data, &msgs); err != nil {
				return nil, fmt.Errorf("session %s record %d: %w", s.id, r.Seq, err)
			}
			s.transcript = msgs
		case kindMessage:
			var m model.Message
			if err := json.Unmarshal(r.Data, &m); err != nil {
				return nil, fmt.Errorf("session %s record %d: %w", s.id, r.Seq, err)
			}
			s.transcript = append(s.transcript, m)
		case kindMeta:
			var st settings
			if err := json.Unmarshal(r.Data, &st); err != nil {
				return nil, fmt.Errorf("session %s record %d: %w", s.id, r.Seq, err)
			}
			if st.Mode != "" {
				s.set.Mode = st.Mode
			}
			if st.Model != "" {
				s.set.Model = st.Model
			}
			if st.Thought != "" {
				s.set.Thought = st.Thought
			}
			if st.Title != "" {
				s.set.Title = st.Title
			}
		}
	}
	for _, m := range s.transcript {
		if m.Role == model.RoleAssistant {
			s.msgSeq++
		}
	}
	return updates, nil
}

// Record kinds of the session log.
const (
	kindUpdate  = "update"
	kindMessage = "message"
	kindMeta    = "meta"
	// kindCompact replaces the whole transcript (data: []model.Message).
	kindCompact = "compact"
)

// notify sends one session/update to the client and records it in the log.
// It is called by the turn (or by setting changes) only; ctx bounds a blocked
// write to a peer that stopped reading.
//
// Text chunks are logged per message and merged while the client is behind
// (see package internal/outbox); every other update has been written when
// notify returns.
func (s *sess) notify(ctx context.Context, u acp.SessionUpdate) {
	s.chunks.Record(u)
	s.out.Post(ctx, u)
}

// send writes one session/update without recording it, after the updates
// queued before it.
func (s *sess) send(ctx context.Context, u acp.SessionUpdate) {
	s.out.Post(ctx, u)
}

// sendNow writes one session/update.
func (s *sess) sendNow(ctx context.Context, u acp.SessionUpdate) {
	peer, ok := s.a.peer()
	if !ok {
		return
	}
	if err := peer.SessionUpdate(ctx, &acp.SessionNotification{SessionID: s.id, Update: u}); err != nil {
		s.a.log.Debug("session/update not sent", "session", s.id, "err", err)
	}
}

// record appends one record to the log; failures are logged (the session
// goes on in memory, and the next Sync reports the problem).
func (s *sess) record(kind string, v any) {
	if kind == kindUpdate {
		s.chunks.Flush() // keeps updates in order
	}
	s.appendRecord(kind, v)
}

func (s *sess) appendRecord(kind string, v any) {
	if _, err := s.log.Append(kind, v); err != nil {
		s.a.log.Error("session log append failed", "session", s.id, "err", err)
	}
}

// sync is a turn boundary: the buffered text is logged, the queued updates
// written (bounded by the connection's life), and the log made durable.
func (s *sess) sync() {
	s.chunks.Flush()
	s.out.Flush(s.a.baseContext())
	if err := s.log.Sync(); err != nil {
		s.a.log.Error("session log sync failed", "session", s.id, "err", err)
	}
}

// settings returns a copy of the current settings.
func (s *sess) settings() settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.set
}

// update changes settings, persists them and refreshes the index.
func (s *sess) update(f func(*settings)) settings {
	s.mu.Lock()
	before := s.set
	f(&s.set)
	after := s.set
	s.mu.Unlock()
	if before != after {
		s.record(kindMeta, after)
		s.sync()
		if before.Title != after.Title {
			if err := s.log.UpdateMeta(func(m *session.Meta) { m.Title = after.Title; m.UpdatedAt = time.Now() }); err != nil {
				s.a.log.Warn("session index update failed", "session", s.id, "err", err)
			}
		}
	}
	return after
}

// cancelTurn cancels the running turn, if any, and every prompt read
// before the cancel (its arrival, 0 when unknown) whose turn has not begun
// yet. It never blocks.
func (s *sess) cancelTurn(arrival uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelledBefore = max(s.cancelledBefore, arrival)
	if s.turn != nil {
		s.turn.cancelled = true
		s.turn.cancel()
	}
}

// errCancelledEarly: the prompt was cancelled before its turn began.
var errCancelledEarly = errors.New("prompt cancelled before its turn began")

// errTurnInProgress answers a prompt that overlaps a running, uncancelled turn.
var errTurnInProgress = &acp.Error{Code: int(acp.ErrorCodeInvalidParams), Message: "turn in progress: wait for the running prompt to finish or send session/cancel first"}

// beginTurn starts a turn. A prompt that arrives while a cancelled turn is
// winding down, or while a finished turn's reply is being written, waits for
// it (editors send session/cancel then the next prompt at once, and may send
// the next prompt as soon as they read a reply); any other overlap is
// refused.
func (s *sess) beginTurn(ctx context.Context) (context.Context, *turn, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, nil, &acp.Error{Code: int(acp.ErrorCodeResourceNotFound), Message: fmt.Sprintf("session %q is closed", s.id)}
		}
		if a := acp.Arrival(ctx); a != 0 && a < s.cancelledBefore {
			s.mu.Unlock()
			return nil, nil, errCancelledEarly
		}
		cur := s.turn
		if cur == nil {
			tctx, cancel := context.WithCancel(ctx)
			t := &turn{ctx: tctx, cancel: cancel, done: make(chan struct{})}
			s.turn = t
			s.mu.Unlock()
			return tctx, t, nil
		}
		// A turn whose request the client cancelled ($/cancel_request) is
		// winding down too.
		wait := cur.cancelled || cur.replying || cur.ctx.Err() != nil
		s.mu.Unlock()
		if !wait {
			return nil, nil, errTurnInProgress
		}
		select {
		case <-cur.done:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// markReplying records that t's prompt handler returned (see turn.replying).
func (s *sess) markReplying(t *turn) {
	s.mu.Lock()
	t.replying = true
	s.mu.Unlock()
}

// endTurn releases the turn slot.
func (s *sess) endTurn(t *turn) {
	s.mu.Lock()
	if s.turn == t {
		s.turn = nil
	}
	s.mu.Unlock()
	t.cancel()
	close(t.done)
}

// wasCancelled reports whether session/cancel hit t.
func (s *sess) wasCancelled(t *turn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return t.cancelled
}

// close cancels the running turn, waits for it, and closes the log (which
// syncs and unlocks it). Idempotent.
// abandonedWait bounds how long closing a session waits for abandoned
// tool calls.
const abandonedWait = 10 * time.Second

func (s *sess) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	t := s.turn
	if t != nil {
		t.cancelled = true
		t.cancel()
	}
	s.mu.Unlock()
	if t != nil {
		<-t.done
	}
	// Calls a cancelled turn abandoned may still use the session: wait
	// for them, bounded (one stuck in the kernel may never return).
	stuck := make(chan struct{})
	go func() { s.abandoned.Wait(); close(stuck) }()
	select {
	case <-stuck:
	case <-time.After(abandonedWait):
		s.a.log.Warn("closing the session with tool calls still stuck", "session", s.id)
	}
	jctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	s.jobs.Close(jctx)
	cancel()
	s.mcp.Close()
	if err := s.broker.Close(); err != nil {
		s.a.log.Warn("closing file broker", "session", s.id, "err", err)
	}
	s.out.Flush(s.a.baseContext())
	s.out.Close()
	s.chunks.Close()
	if err := s.log.Close(); err != nil {
		s.a.log.Warn("closing session log", "session", s.id, "err", err)
	}
}
