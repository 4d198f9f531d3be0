package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"acpd/acp"
	"acpd/agent/internal/editor"
	"acpd/agent/internal/mcpbridge"
	"acpd/agent/internal/sysprompt"
	"acpd/agent/internal/turnslot"
	"acpd/config"
	"acpd/files"
	"acpd/internal/jsonesc"
	"acpd/internal/outbox"
	"acpd/model"
	"acpd/permissions"
	"acpd/session"
	"acpd/tools"
)

// settings are a session's persisted choices (record kind "meta").
type settings struct {
	Mode    string `json:"mode,omitempty"`
	Model   string `json:"model,omitempty"`
	Thought string `json:"thought,omitempty"`
	Title   string `json:"title,omitempty"`
	// MCPSkill names the MCP server's skill last loaded into the
	// conversation, "" before any: from then on commands ask first (see
	// sess.decide), also once the session is loaded in another process.
	MCPSkill string `json:"mcpSkill,omitempty"`
}

// sess is one open session. Its fields after construction are guarded by mu,
// except the immutable ones (id, cwd, dirs, log, cfg, root).
type sess struct {
	a  *Agent
	id acp.SessionID
	// head starts the params of the session's session/update
	// notifications, up to the update (updateHead).
	head []byte
	cwd  string
	dirs []string
	log  *session.Log
	cfg  *config.Config
	// root is the project's root (config.ProjectRoot of cwd), found once
	// at the session's start.
	root string
	// extSrc holds where the custom commands, skills and sub-agents are
	// read from (see sources); set once.
	extOnce sync.Once
	extSrc  extSources
	// mcpServers are the editor's MCP servers for this session.
	mcpServers []acp.McpServer
	// configWarning says why the project file was ignored (nil: it was
	// not); announced with the commands once the session is open.
	configWarning error
	// sandboxNotice tells the session once that commands run unconfined.
	sandboxNotice sync.Once
	// abandoned counts tool calls a cancelled turn stopped waiting for.
	abandoned sync.WaitGroup

	roots  *files.Roots
	broker *files.Broker
	policy *permissions.Policy
	mcp    *mcpbridge.Bridge // nil without MCP servers

	mu  sync.Mutex
	set settings
	// transcript is the model-facing conversation. Its messages are
	// memoized (model.Memo) as they enter it, and each request shares it
	// (a capped slice of it, see buildRequest), so an element is never
	// modified in place: the transcript is appended to, or replaced with
	// a new array (a compaction, a rewind), never truncated and appended
	// over (see model.Prefix).
	transcript []model.Message
	// slot holds the running prompt turn (package agent/internal/turnslot)
	// and the steering messages waiting for it (steer.go).
	slot turnslot.Slot[steerMsg]
	// detached counts the turns started by steering requests, which no
	// prompt request owns (steer.go); close waits for them.
	detached sync.WaitGroup
	// prompted: the session has had a prompt (or was stored before this
	// process opened it); session/list hides an open session until then.
	prompted atomic.Bool
	// asked: the running turn's last tool calls ended it on a question to
	// the user (ask_user without forms); the turn reads and clears it.
	asked atomic.Bool
	// cmdKey is the slash command list last announced (guarded
	// by mu; nil before the first refresh).
	cmdKey []acp.AvailableCommand
	// ext are the custom commands and skills as last read (guarded by mu).
	ext    extensions
	msgSeq int
	used   int64   // context tokens of the last response
	cost   float64 // USD spent in this process, when prices are known
	plan   string  // the latest plan, as text (kept across compaction)
	// tally sums the running prompt turn's usage (nil between turns).
	tally   *turnUsage
	changed map[string]bool // files changed outside the agent since it last read them
	// sysPrompt is the system prompt, kept while its inputs stay the same;
	// gathering counts the goroutines gathering its facts (gatherFacts).
	sysPrompt sysprompt.Cache
	gathering sync.WaitGroup
	// jobs are the session's background commands, stopped when it closes.
	jobs *tools.Jobs
	// builtin are the built-in tools, commands wrapped for checkpoints,
	// made at the first turn that asks (see builtinTools): an idle session
	// never does.
	builtin     map[string]*tools.Tool
	builtinOnce sync.Once
	// logger is the agent's logger with the session's id, made at the first
	// turn that runs tools (see sessLog): a logger's With copies it, 4 KiB
	// a tool call when each made its own.
	logger  *slog.Logger
	logOnce sync.Once
	// toolSet keeps the map tools returns while its inputs stay the same.
	toolSet toolSet
	// turns are the session's live model turns (see checkpoint.go).
	turns []turnInfo
	// ck is the session's checkpoint state (its own lock).
	ck ckpt

	// hookAnswers are the user's answers about untrusted project hooks,
	// by digest; hooksStarted: SessionStart hooks ran in this process;
	// haltReason: a hook asked the turn to end (all guarded by mu).
	// extWatch watches the custom commands', skills' and sub-agents'
	// directories (nil: none; guarded by mu).
	extWatch  *files.DirWatch
	extClosed bool // the session closed: no watch starts

	hookAnswers  map[string]bool
	hooksStarted bool
	haltReason   string

	// notSaved is the first failure to write the log since the user was
	// last told (see persistFailure).
	notSaved error

	// chunks buffers streamed text for the log, out queues updates for
	// the client (package internal/outbox).
	chunks *outbox.Log
	out    *outbox.Queue
}

// newSess wraps an opened log with the session's file broker and permission
// policy. On error the caller still owns l.
// initialSettings are a session's settings before any change: cfg's
// default mode and model.
func (a *Agent) initialSettings(cfg *config.Config) settings {
	set := settings{Mode: cfg.Agent.DefaultMode, Model: cfg.Model, Thought: "medium"}
	if set.Model == "" {
		set.Model = a.fallbackModel()
	}
	if !permissions.Mode(set.Mode).Valid() {
		set.Mode = string(permissions.ModeAsk)
	}
	return set
}

// newSess makes the session id of log l with the settings set
// (initialSettings, which a stored session's records then change). l may
// be nil for a new session whose log is being created (see NewSession):
// the caller sets s.log before the session is registered, and nothing the
// session started (its MCP servers) writes to the log before its reply.
func (a *Agent) newSess(id acp.SessionID, l *session.Log, cwd string, dirs []string, cfg *config.Config, set settings, mcp []acp.McpServer) (*sess, error) {
	root := cfg.Root
	if root == "" {
		root = config.ProjectRoot(cwd)
	}
	roots, err := files.NewRoots(cwd, dirs...)
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
		Project:   root, // permissions.ProjectKey(cwd), for cwd is absolute
		Tools:     a.toolKinds,
	})
	if err != nil {
		return nil, invalidParams("permission rules: %v", err)
	}
	s := &sess{a: a, id: id, cwd: cwd, root: root, dirs: dirs, log: l, cfg: cfg, mcpServers: mcp, roots: roots, policy: policy, jobs: tools.NewJobs(a.log, a.opts.Outputs), head: updateHead(id)}
	s.chunks = outbox.NewLog(func(e outbox.Encoded) {
		if thought, msg, text, ok := outbox.TextOf(&e.Update); ok {
			s.appendRecord(kindUpdate, chunkRecord{thought: thought, msg: msg, text: text})
			return
		}
		if e.JSON != nil {
			s.appendRecord(kindUpdate, encodedJSON(e.JSON))
			return
		}
		s.appendRecord(kindUpdate, e.Update)
	})
	s.out = outbox.NewQueue(s.sendNow)
	caps := a.clientCapabilities()
	var ed files.Editor
	canRead, canWrite := false, false
	if caps.Fs != nil && (caps.Fs.ReadTextFile || caps.Fs.WriteTextFile) {
		ed = editor.FS{Conn: a.peer, Session: s.id}
		canRead, canWrite = caps.Fs.ReadTextFile, caps.Fs.WriteTextFile
	}
	s.broker = files.NewBroker(files.BrokerOptions{Roots: roots, Editor: ed, CanEditorRead: canRead, CanEditorWrite: canWrite, Logger: a.log,
		Protected: a.opts.Protected, ProtectedNames: permissions.ProtectedNames()})
	s.broker.SetHook(ckptHook{s})
	s.set = set
	s.startMCP()
	return s, nil
}

// restore applies a stored session's records to s and returns the "update"
// payloads in order (for session/load to replay).
func (s *sess) restore(recs []session.Record) ([]json.RawMessage, error) {
	s.prompted.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applyLocked(session.Live(recs), true)
}

// rebuild makes the transcript, turns and plan those of the log's live
// records again (after a rewind); the settings stay as they are.
func (s *sess) rebuild() error {
	s.chunks.Flush()
	recs, err := s.a.opts.Store.Records(string(s.id))
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.transcript, s.turns, s.plan, s.msgSeq = nil, nil, "", 0
	_, err = s.applyLocked(session.Live(recs), false)
	return err
}

// applyLocked applies live records to s (settings too when withMeta) and
// returns their "update" payloads. The caller holds s.mu.
func (s *sess) applyLocked(recs []session.Record, withMeta bool) ([]json.RawMessage, error) {
	var updates []json.RawMessage
	msgs := decodeMessages(recs)
	next := 0 // of msgs
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
		case kindTurn:
			var tr turnRecord
			_ = json.Unmarshal(r.Data, &tr)
			s.turns = append(s.turns, turnInfo{ID: r.Seq, Title: tr.Title})
		case kindCompact:
			var msgs []model.Message
			if err := json.Unmarshal(r.Data, &msgs); err != nil {
				return nil, fmt.Errorf("session %s record %d: %w", s.id, r.Seq, err)
			}
			s.transcript = memoized(msgs)
		case kindMessage:
			m := &msgs[next]
			next++
			if m.err != nil {
				return nil, fmt.Errorf("session %s record %d: %w", s.id, r.Seq, m.err)
			}
			s.transcript = append(s.transcript, m.msg.Memoized())
		case kindMeta:
			if !withMeta {
				continue
			}
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
			if st.MCPSkill != "" {
				s.set.MCPSkill = st.MCPSkill
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

// decodedMessage is a "message" record decoded.
type decodedMessage struct {
	msg model.Message
	err error
}

// decodeMessagesMin is the fewest message records worth a worker of
// decodeMessages.
const decodeMessagesMin = 256

// decodeMessages decodes the "message" records of recs, in order, in
// parallel over contiguous runs on up to GOMAXPROCS workers (it waits for
// them all): a long conversation's transcript is most of what restoring it
// costs, and session/load's client waits idle meanwhile.
func decodeMessages(recs []session.Record) []decodedMessage {
	var data []json.RawMessage
	for _, r := range recs {
		if r.Kind == kindMessage {
			data = append(data, r.Data)
		}
	}
	out := make([]decodedMessage, len(data))
	run := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i].err = json.Unmarshal(data[i], &out[i].msg)
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(data)/decodeMessagesMin)
	if workers <= 1 {
		run(0, len(data))
		return out
	}
	var wg sync.WaitGroup
	per := (len(data) + workers - 1) / workers
	for lo := 0; lo < len(data); lo += per {
		wg.Go(func() { run(lo, min(lo+per, len(data))) })
	}
	wg.Wait()
	return out
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
// notify returns. An update is encoded once, for its record and its
// notification.
func (s *sess) notify(ctx context.Context, u acp.SessionUpdate) {
	e := outbox.Encode(u)
	s.chunks.RecordEncoded(e)
	s.out.PostEncoded(ctx, e)
}

// encodedJSON is a record's payload encoded already (outbox.Encoded.JSON):
// the log writes it as it is (see session.Log.Append).
type encodedJSON []byte

func (j encodedJSON) WriteJSON(w io.Writer) error {
	_, err := w.Write(j)
	return err
}

// notifyText is notify of a streamed delta of message msg's text (its
// thought, with thought): the log and the queue merge the text into what
// they hold, so no update is built for it.
func (s *sess) notifyText(ctx context.Context, thought bool, msg, text string) {
	s.chunks.RecordText(thought, msg, text)
	s.out.PostText(ctx, thought, msg, text)
}

// send writes one session/update without recording it, after the updates
// queued before it.
func (s *sess) send(ctx context.Context, u acp.SessionUpdate) {
	s.out.Post(ctx, u)
}

// sendNow writes one session/update: its encoding as it is when it has
// one (outbox.Encoded.JSON).
func (s *sess) sendNow(ctx context.Context, e outbox.Encoded) {
	u := e.Update
	if thought, msg, text, ok := outbox.TextOf(&u); ok {
		s.sendText(ctx, thought, msg, text)
		return
	}
	if e.JSON != nil {
		s.sendEncoded(ctx, e.JSON)
		return
	}
	peer, ok := s.a.peer()
	if !ok {
		return
	}
	if err := peer.SessionUpdate(ctx, &acp.SessionNotification{SessionID: s.id, Update: u}); err != nil {
		s.a.log.Debug("session/update not sent", "session", s.id, "err", err)
	}
}

// sendText writes the session/update of a text chunk (outbox.TextChunk),
// the line Notify writes for it, with its text escaped straight into the
// params: through encoding/json a merged chunk (up to 64 KiB) was copied
// about seven times, through growing buffers the encoder pools, which
// were live while a collection marked and raised the peak of a long
// answer.
func (s *sess) sendText(ctx context.Context, thought bool, msg, text string) {
	conn := s.a.connection()
	if conn == nil {
		return
	}
	params := textChunkParams(s.id, thought, msg, text)
	b := conn.Batch(ctx)
	err := b.NotifyRaw(acp.ClientMethodSessionUpdate, params)
	if err == nil {
		err = b.Flush()
	}
	if err != nil {
		s.a.log.Debug("session/update not sent", "session", s.id, "err", err)
	}
}

// sendEncoded writes the session/update whose update is encoded already,
// as Notify would write it.
func (s *sess) sendEncoded(ctx context.Context, update []byte) {
	conn := s.a.connection()
	if conn == nil {
		return
	}
	b := conn.Batch(ctx)
	err := b.NotifyRaw(acp.ClientMethodSessionUpdate, s.head, update, []byte("}"))
	if err == nil {
		err = b.Flush()
	}
	if err != nil {
		s.a.log.Debug("session/update not sent", "session", s.id, "err", err)
	}
}

// encodedParams is the params of the session/update of session id whose
// update is encoded already, as Notify encodes them.
func encodedParams(id acp.SessionID, update []byte) []byte {
	head := updateHead(id)
	return append(append(head, update...), '}')
}

// updateHead is the start of the params of a session/update of session id,
// up to its update, as Notify encodes them (HTML escaping off).
func updateHead(id acp.SessionID) []byte {
	var head bytes.Buffer
	head.WriteString(`{"sessionId":`)
	enc := json.NewEncoder(&head)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(id)            // a string encodes
	head.Truncate(head.Len() - 1) // Encode's newline
	head.WriteString(`,"update":`)
	return head.Bytes()
}

// chunkRecord is the record of a text chunk (outbox.TextChunk), which
// writes its own encoding (json.Marshal's, byte for byte) with the text
// escaped straight from the string through a small buffer: through
// encoding/json and the union's marshaler a 64 KiB chunk was copied about
// four times, garbage that a long answer's collections had to keep up with.
type chunkRecord struct {
	thought   bool
	msg, text string
}

// chunkRecordBuf is the size of the pieces chunkRecord writes.
const chunkRecordBuf = 4 << 10

func (c chunkRecord) WriteJSON(w io.Writer) error {
	kind := `agent_message_chunk`
	if c.thought {
		kind = `agent_thought_chunk`
	}
	buf := make([]byte, 0, chunkRecordBuf+64)
	buf = append(buf, `{"sessionUpdate":"`...)
	buf = append(buf, kind...)
	buf = append(buf, `","content":{"type":"text","text":"`...)
	for text := c.text; ; {
		var n int
		buf, n = jsonesc.Append(buf, text, chunkRecordBuf-len(buf))
		text = text[n:]
		if text == "" {
			break
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
		buf = buf[:0]
	}
	buf = append(buf, `"},"messageId":`...)
	buf = jsonesc.AppendString(buf, c.msg)
	buf = append(buf, '}')
	_, err := w.Write(buf)
	return err
}

// textChunkParams is the params of the session/update of session id that
// outbox.TextChunk(thought, msg, text) makes, as json.Marshal encodes them.
func textChunkParams(id acp.SessionID, thought bool, msg, text string) []byte {
	kind := `agent_message_chunk`
	if thought {
		kind = `agent_thought_chunk`
	}
	params := make([]byte, 0, len(text)+len(text)/8+len(id)+len(msg)+128)
	params = append(params, `{"sessionId":`...)
	params = jsonesc.AppendString(params, string(id))
	params = append(params, `,"update":{"sessionUpdate":"`...)
	params = append(params, kind...)
	params = append(params, `","content":{"type":"text","text":`...)
	params = jsonesc.AppendString(params, text)
	params = append(params, `},"messageId":`...)
	params = jsonesc.AppendString(params, msg)
	return append(params, `}}`...)
}

// record appends one record to the log. A failure is remembered until the
// user is told (persistFailure): the session goes on in memory, and the
// running or next turn ends with the error.
func (s *sess) record(kind string, v any) {
	if kind == kindUpdate {
		s.chunks.Flush() // keeps updates in order
	}
	s.appendRecord(kind, v)
}

func (s *sess) appendRecord(kind string, v any) {
	if _, err := s.log.Append(kind, v); err != nil {
		s.a.log.Error("session log append failed", "session", s.id, "err", err)
		s.notSavedErr(err)
	}
}

// notSavedErr remembers err, unless an earlier failure is waiting to be
// reported.
func (s *sess) notSavedErr(err error) {
	s.mu.Lock()
	if s.notSaved == nil {
		s.notSaved = err
	}
	s.mu.Unlock()
}

// persistFailure returns the failure to write the log that the user was
// not told of yet, if any; take forgets it (the caller tells the user).
func (s *sess) persistFailure(take bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.notSaved
	if take {
		s.notSaved = nil
	}
	return err
}

// sync is a turn boundary: the buffered text is logged, the queued updates
// written (bounded by the connection's life), and the log made durable.
func (s *sess) sync() {
	s.chunks.Flush()
	s.out.Flush(s.a.baseContext())
	if err := s.log.Sync(); err != nil {
		// Sync also reports failed appends record already remembered;
		// the first failure is the one kept.
		s.a.log.Error("session log sync failed", "session", s.id, "err", err)
		s.notSavedErr(err)
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

// abandonedWait bounds how long closing a session waits for abandoned
// tool calls.
const abandonedWait = 10 * time.Second

// close cancels the running turn, waits for it, and closes the log (which
// syncs and unlocks it). Idempotent.
func (s *sess) close() {
	done, first := s.slot.Close()
	if !first {
		return
	}
	if done != nil {
		<-done
	}
	s.detached.Wait()
	s.gathering.Wait()
	// Calls a cancelled turn abandoned may still use the session: wait
	// for them, bounded (one stuck in the kernel may never return).
	stuck := make(chan struct{})
	go func() { s.abandoned.Wait(); close(stuck) }()
	select {
	case <-stuck:
	case <-time.After(abandonedWait):
		s.a.log.Warn("closing the session with tool calls still stuck", "session", s.id)
	}
	s.mu.Lock()
	w := s.extWatch
	s.extWatch, s.extClosed = nil, true
	s.mu.Unlock()
	if w != nil {
		_ = w.Close()
	}
	jctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	s.jobs.Close(jctx)
	cancel()
	s.mcp.Close()
	if err := s.broker.Close(); err != nil {
		s.a.log.Warn("closing file broker", "session", s.id, "err", err)
	}
	s.closeCheckpoints()
	s.out.Flush(s.a.baseContext())
	s.out.Close()
	s.chunks.Close()
	if s.log == nil {
		return // its log could not be created (NewSession)
	}
	if err := s.log.Close(); err != nil {
		s.a.log.Warn("closing session log", "session", s.id, "err", err)
	}
}
