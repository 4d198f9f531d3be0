package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"acpd/acp"
	"acpd/agent/internal/gitrun"
	"acpd/checkpoint"
	"acpd/files"
	"acpd/permissions"
	"acpd/tools"
)

// kindTurn marks the start of a model turn in the session log (data:
// turnRecord); the record's sequence number is the turn's id in the
// session's checkpoints (package checkpoint).
const kindTurn = "turn"

// turnRecord is the data of a "turn" record.
type turnRecord struct {
	Title string `json:"title,omitempty"`
}

// turnInfo is one live turn of the session: its id and what it asked.
type turnInfo struct {
	ID    int64
	Title string
}

// ckpt is a session's checkpoint state.
type ckpt struct {
	mu    sync.Mutex
	store *checkpoint.Store // opened on first use
	err   error             // why it could not be opened
	turn  int64             // the running turn's id; 0 outside model turns
	// notKept says which changes of the running turn cannot be undone.
	notKept []string
	// snap is the roots' latest snapshot (see commandTool), so that a
	// command's scan reads only the files changed since.
	snap *checkpoint.Snapshot
}

// checkpoints returns the session's checkpoint store, opening it.
func (s *sess) checkpoints() (*checkpoint.Store, error) {
	s.ck.mu.Lock()
	defer s.ck.mu.Unlock()
	if s.ck.store != nil || s.ck.err != nil {
		return s.ck.store, s.ck.err
	}
	dir, err := s.a.opts.Store.DataDir(string(s.id))
	if err == nil {
		s.ck.store, err = checkpoint.Open(filepath.Join(dir, "checkpoints"))
	}
	s.ck.err = err
	return s.ck.store, err
}

// closeCheckpoints closes the store (at the session's close).
func (s *sess) closeCheckpoints() {
	s.ck.mu.Lock()
	defer s.ck.mu.Unlock()
	if s.ck.store != nil {
		if err := s.ck.store.Close(); err != nil {
			s.a.log.Warn("closing checkpoints", "session", s.id, "err", err)
		}
	}
}

// beginTurn logs the start of a model turn and makes the broker's changes
// from now on the turn's checkpoint.
func (s *sess) beginTurn(title string) {
	s.chunks.Flush()
	rec, err := s.log.Append(kindTurn, turnRecord{Title: title})
	if err != nil {
		s.a.log.Error("session log append failed", "session", s.id, "err", err)
		s.notSavedErr(err)
		return
	}
	s.mu.Lock()
	s.turns = append(s.turns, turnInfo{ID: rec.Seq, Title: title})
	s.mu.Unlock()
	s.ck.mu.Lock()
	s.ck.turn, s.ck.notKept = rec.Seq, nil
	s.ck.mu.Unlock()
}

// endTurn ends the turn's checkpoint and tells the user which of its
// changes cannot be undone.
func (s *sess) endTurn(ctx context.Context) {
	s.ck.mu.Lock()
	notes := s.ck.notKept
	s.ck.turn, s.ck.notKept = 0, nil
	s.ck.mu.Unlock()
	if len(notes) > 0 {
		s.notify(ctx, acp.SessionUpdate{AgentMessageChunk: textChunk("\n\nNot kept for /undo: "+strings.Join(notes, "; ")+".", newID("m_"))})
	}
}

// ckptHook records the broker's changes in the running turn's checkpoint.
type ckptHook struct{ s *sess }

func (h ckptHook) current() int64 {
	h.s.ck.mu.Lock()
	defer h.s.ck.mu.Unlock()
	return h.s.ck.turn
}

func (h ckptHook) BeforeChange(ctx context.Context, c files.Change) error {
	turn := h.current()
	if turn == 0 {
		return nil
	}
	st, err := h.s.checkpoints()
	if err != nil {
		return fmt.Errorf("no checkpoint could be kept for /undo: %w", err)
	}
	err = st.Before(turn, c.Path, contentOf(c))
	var nk *checkpoint.NotKeptError
	if errors.As(err, &nk) {
		h.s.ck.mu.Lock()
		h.s.ck.notKept = append(h.s.ck.notKept, fmt.Sprintf("%s (%s)", nk.Path, nk.Reason))
		h.s.ck.mu.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("no checkpoint could be kept for /undo: %w", err)
	}
	return nil
}

func (h ckptHook) AfterChange(c files.Change) {
	turn := h.current()
	if turn == 0 {
		return
	}
	if st, err := h.s.checkpoints(); err == nil {
		if err := st.After(turn, c.Path, contentOf(c)); err != nil {
			h.s.a.log.Warn("checkpoint: recording a change", "session", h.s.id, "err", err)
		}
	}
}

func contentOf(c files.Change) checkpoint.Content {
	return checkpoint.Content{Exists: c.Exists, Data: c.Content, Unread: c.TooLarge, Size: c.Size}
}

// liveTurns returns the session's turns (a copy).
func (s *sess) liveTurns() []turnInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]turnInfo(nil), s.turns...)
}

// restoreItem is one file a restore would put back.
type restoreItem struct {
	path    string
	cur     checkpoint.Content
	to      checkpoint.State
	data    []byte // the content to restore
	changed bool   // the user changed the file since the turn
}

// planRestore works out how to bring the files that turns changed back to
// their state before the earliest of them: the files to restore, those the
// user changed since (conflicts), and those that cannot be restored.
func (s *sess) planRestore(ctx context.Context, st *checkpoint.Store, turns []int64) (clean, conflicts []restoreItem, lost []string, err error) {
	// The earliest turn's before state wins; the latest turn's after
	// state is what the file should hold now.
	type target struct {
		to    checkpoint.State
		after *checkpoint.State
	}
	targets := map[string]*target{}
	var order []string
	for _, id := range turns {
		for _, f := range st.Files(id) {
			t := targets[f.Path]
			if t == nil {
				t = &target{to: f.Before}
				targets[f.Path] = t
				order = append(order, f.Path)
			}
			t.after = f.After
		}
	}
	for _, p := range order {
		t := targets[p]
		if !t.to.Kept() {
			lost = append(lost, fmt.Sprintf("%s (%s)", p, t.to.Lost))
			continue
		}
		c, err := s.broker.Current(ctx, p)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("reading %s: %w", p, err)
		}
		cur := contentOf(c)
		now := checkpoint.StateOf(cur)
		if now.Exists == t.to.Exists && now.Hash == t.to.Hash {
			continue // already as it was
		}
		data, err := st.Blob(t.to)
		if err != nil {
			lost = append(lost, fmt.Sprintf("%s (%v)", p, err))
			continue
		}
		it := restoreItem{path: p, cur: cur, to: t.to, data: data}
		if t.after == nil || t.after.Exists != now.Exists || t.after.Hash != now.Hash {
			it.changed = true
			conflicts = append(conflicts, it)
		} else {
			clean = append(clean, it)
		}
	}
	return clean, conflicts, lost, nil
}

// diffs shows items as the permission request's content: the current
// content as old, the restored one as new.
func diffs(items []restoreItem) []acp.ToolCallContent {
	var out []acp.ToolCallContent
	for _, it := range items {
		d := &acp.Diff{Path: it.path, NewText: string(it.data)}
		if it.cur.Exists && !it.cur.Unread {
			old := string(it.cur.Data)
			d.OldText = &old
		}
		out = append(out, acp.ToolCallContent{Diff: d})
		if !it.to.Exists {
			out = append(out, acp.ToolCallContent{Content: &acp.Content{Content: acp.ContentBlock{Text: &acp.TextContent{Text: it.path + " did not exist before: it will be deleted."}}}})
		}
	}
	return out
}

// askRestore shows a tool call titled title with items' diffs and asks the
// user to restore them; it reports whether the user agreed.
func (s *sess) askRestore(ctx context.Context, title string, items []restoreItem) bool {
	out := s.a.baseContext()
	id := acp.ToolCallID(newID("ck_"))
	var locs []acp.ToolCallLocation
	for _, it := range items {
		locs = append(locs, acp.ToolCallLocation{Path: it.path})
	}
	s.notify(out, acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: id, Title: title, Kind: acp.ToolKindEdit, Status: acp.ToolCallStatusPending, Locations: locs}})
	kind := acp.ToolKindEdit
	ok := s.askUser(ctx, acp.ToolCallUpdate{ToolCallID: id, Title: &title, Kind: &kind, Content: diffs(items), Locations: locs}, "Restore", "Keep the files as they are")
	status := acp.ToolCallStatusCompleted
	if !ok {
		status = acp.ToolCallStatusFailed
	}
	s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: id, Status: &status}})
	return ok
}

// askUser asks the user to allow what upd shows, with an allow-once and a
// reject-once option; anything but the allow option is a no.
func (s *sess) askUser(ctx context.Context, upd acp.ToolCallUpdate, yes, no string) bool {
	peer, ok := s.a.peer()
	if !ok {
		return false
	}
	s.out.Flush(ctx)
	resp, err := peer.RequestPermission(ctx, &acp.RequestPermissionRequest{SessionID: s.id, ToolCall: upd, Options: []acp.PermissionOption{
		{OptionID: "allow", Name: yes, Kind: acp.PermissionOptionKindAllowOnce},
		{OptionID: "reject", Name: no, Kind: acp.PermissionOptionKindRejectOnce},
	}})
	if err != nil {
		if ctx.Err() == nil {
			s.a.log.Warn("permission request failed", "session", s.id, "err", err)
		}
		return false
	}
	return resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionID == "allow"
}

// restoreFiles asks for and restores the files turns changed, as planned
// by planRestore: the unchanged ones with one request, those the user
// changed since with another. It returns what to tell the user and
// whether anything the user approved was restored (false when nothing
// was to be done or the user declined).
func (s *sess) restoreFiles(ctx context.Context, st *checkpoint.Store, turns []int64, what string) (report []string, done bool, err error) {
	clean, conflicts, lost, err := s.planRestore(ctx, st, turns)
	if err != nil {
		return nil, false, err
	}
	restore := func(items []restoreItem) []string {
		var n []string
		for _, it := range items {
			if err := s.broker.Restore(ctx, it.path, it.data, it.to.Exists); err != nil {
				report = append(report, fmt.Sprintf("%s could not be restored: %v", it.path, err))
				continue
			}
			s.sawFile(it.path)
			n = append(n, it.path)
		}
		return n
	}
	var restored []string
	if len(clean) > 0 {
		if !s.askRestore(ctx, fmt.Sprintf("%s: restore %s", what, fileCount(len(clean))), clean) {
			return append(report, "Nothing was restored."), false, nil
		}
		restored = append(restored, restore(clean)...)
		done = true
	}
	if len(conflicts) > 0 {
		title := fmt.Sprintf("%s: %s changed since; overwrite your changes?", what, fileCount(len(conflicts)))
		if s.askRestore(ctx, title, conflicts) {
			restored = append(restored, restore(conflicts)...)
			done = true
		} else {
			for _, it := range conflicts {
				report = append(report, it.path+" changed since and was kept as it is")
			}
		}
	}
	if len(restored) > 0 {
		report = append([]string{"Restored " + strings.Join(restored, ", ")}, report...)
	}
	for _, l := range lost {
		report = append(report, "cannot restore "+l)
	}
	if len(clean)+len(conflicts) == 0 && len(lost) == 0 {
		report = append(report, "The files are already as they were.")
		done = true
	}
	return report, done, nil
}

func fileCount(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}

// undo restores the files of the latest turn that changed files and was
// not undone yet.
func (s *sess) undo(ctx context.Context) string {
	st, err := s.checkpoints()
	if err != nil {
		return "No checkpoints: " + err.Error()
	}
	turns := s.liveTurns()
	for i := len(turns) - 1; i >= 0; i-- {
		t := turns[i]
		if len(st.Files(t.ID)) == 0 || st.Undone(t.ID) {
			continue
		}
		report, done, err := s.restoreFiles(ctx, st, []int64{t.ID}, fmt.Sprintf("Undo turn %d", i+1))
		if err != nil {
			return "Undo failed: " + err.Error()
		}
		if done {
			if err := st.MarkUndone(t.ID); err != nil {
				report = append(report, "the undo could not be recorded: "+err.Error())
			}
		}
		return fmt.Sprintf("Undo of turn %d (%s): %s.", i+1, t.Title, strings.Join(report, "; "))
	}
	return "Nothing to undo: no turn of this session changed files (or they were all undone)."
}

// cmdScanKey carries a command call's *cmdScan in its context, from the
// wrapped tool (commandTool) to StartTerminal.
type cmdScanKey struct{}

// cmdScan is the roots' snapshot taken right before a command started.
type cmdScan struct {
	mu   sync.Mutex
	pre  *checkpoint.Snapshot
	skip []string // the directories left out (ignoredDirs)
}

// commandTool wraps a command tool so that the files its command changes
// become the running turn's checkpoint: the roots are scanned when the
// command starts (StartTerminal) and again when the call returns. A
// background command's later changes are not seen.
func (s *sess) commandTool(t *tools.Tool) *tools.Tool {
	c := *t
	c.Run = func(ctx context.Context, env tools.Env, call *tools.Call) tools.Result {
		turn := s.currentTurn()
		if turn == 0 {
			return t.Run(ctx, env, call)
		}
		h := &cmdScan{}
		res := t.Run(context.WithValue(ctx, cmdScanKey{}, h), env, call)
		if note := s.afterCommand(turn, h); note != "" {
			res.Text += "\n\n" + note
		}
		return res
	}
	return &c
}

func (s *sess) currentTurn() int64 {
	s.ck.mu.Lock()
	defer s.ck.mu.Unlock()
	return s.ck.turn
}

func (s *sess) scanOptions(prev *checkpoint.Snapshot, skip []string) checkpoint.ScanOptions {
	return checkpoint.ScanOptions{Roots: s.roots.List(), SkipNames: permissions.ProtectedNames(), Skip: append(slices.Clone(s.a.opts.Protected), skip...), Prev: prev}
}

// ignoredDirs are the directories git ignores in the session's roots
// (build output, dependencies such as node_modules): a command's snapshot
// leaves them out. A root that is not in a git repository has none.
func (s *sess) ignoredDirs(ctx context.Context) []string {
	var out []string
	for _, root := range s.roots.List() {
		b, err := gitrun.Runner{Dir: root, Env: s.childEnv()}.Run(ctx, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory")
		if err != nil {
			continue
		}
		for _, p := range strings.Split(string(b), "\x00") {
			if strings.HasSuffix(p, "/") {
				out = append(out, filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(p, "/"))))
			}
		}
	}
	return out
}

// beforeCommand takes the snapshot a command's changes are compared with,
// once per call (ctx carries the call's cmdScan).
func (s *sess) beforeCommand(ctx context.Context) {
	h, ok := ctx.Value(cmdScanKey{}).(*cmdScan)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.pre != nil {
		return
	}
	st, err := s.checkpoints()
	if err != nil {
		return
	}
	s.ck.mu.Lock()
	prev := s.ck.snap
	s.ck.mu.Unlock()
	skip := s.ignoredDirs(ctx)
	snap, err := st.Scan(ctx, s.scanOptions(prev, skip))
	if err != nil {
		s.a.log.Warn("checkpoint: scanning the roots", "session", s.id, "err", err)
		return
	}
	h.pre, h.skip = snap, skip
}

// afterCommand records what the command changed in the checkpoint of
// turn, the one that ran it (an abandoned call may return after it), and
// returns a note for the model when /undo could miss some of it.
func (s *sess) afterCommand(turn int64, h *cmdScan) string {
	h.mu.Lock()
	pre, skip := h.pre, h.skip
	h.mu.Unlock()
	if pre == nil {
		return ""
	}
	st, err := s.checkpoints()
	if err != nil {
		return ""
	}
	// The scan after the command is not cancelled with the call: what the
	// command changed must be recorded.
	ctx := context.WithoutCancel(s.a.baseContext())
	// Directories git ignores since the command (npm install's
	// node_modules) are left out too, on both sides.
	skip = append(skip, s.ignoredDirs(ctx)...)
	post, err := st.Scan(ctx, s.scanOptions(pre, skip))
	if err != nil {
		s.a.log.Warn("checkpoint: scanning the roots", "session", s.id, "err", err)
		return "Checkpoint: the files this command changed could not be compared, so /undo cannot restore them."
	}
	changes := slices.DeleteFunc(checkpoint.Diff(pre, post), func(c checkpoint.Change) bool { return under(c.Path, skip) })
	if err := st.Record(turn, changes); err != nil {
		s.a.log.Warn("checkpoint: recording a command's changes", "session", s.id, "err", err)
		return "Checkpoint: the files this command changed could not be recorded, so /undo cannot restore them."
	}
	s.ck.mu.Lock()
	s.ck.snap = post
	for _, c := range changes {
		if !c.Before.Kept() {
			s.ck.notKept = append(s.ck.notKept, fmt.Sprintf("%s (%s)", c.Path, c.Before.Lost))
		}
	}
	s.ck.mu.Unlock()
	if pre.Capped {
		return fmt.Sprintf("Checkpoint: only the first %d files under the session's roots were compared, so /undo may miss this command's changes to others and the files it created.", checkpoint.MaxScan)
	}
	return ""
}

// builtinTools are the agent's built-in tools as the session runs them:
// the commands wrapped by commandTool. The map is made once, when first
// asked for.
func (s *sess) builtinTools() map[string]*tools.Tool {
	s.builtinOnce.Do(func() {
		m := make(map[string]*tools.Tool, len(s.a.builtin))
		for n, t := range s.a.builtin {
			if t.Kind == acp.ToolKindExecute {
				t = s.commandTool(t)
			}
			m[n] = t
		}
		s.builtin = m
	})
	return s.builtin
}

// rewind lists the session's turns (arg ""), or brings the files and the
// conversation back to where they were at the end of turn arg (0: before
// the first turn): the files the later turns changed are restored (with
// the user's consent, as /undo does), then the later turns leave the
// conversation (a rewind record in the log, so a load shows the same).
func (s *sess) rewind(ctx context.Context, arg string) string {
	turns := s.liveTurns()
	st, err := s.checkpoints()
	if err != nil {
		return "No checkpoints: " + err.Error()
	}
	if arg == "" {
		if len(turns) == 0 {
			return "No turns to rewind to yet."
		}
		var b strings.Builder
		b.WriteString("Turns of this session (`/rewind N` keeps turns 1 to N, restoring the files and the conversation as they were at its end; `/rewind 0` goes back to the start):\n")
		for i, t := range turns {
			files := ""
			if n := len(st.Files(t.ID)); n > 0 {
				files = " — " + fileCount(n) + " changed"
				if st.Undone(t.ID) {
					files += ", undone"
				}
			}
			fmt.Fprintf(&b, "\n%d. %s%s", i+1, t.Title, files)
		}
		return b.String()
	}
	var n int
	if _, err := fmt.Sscanf(arg, "%d", &n); err != nil || fmt.Sprint(n) != arg || n < 0 || n > len(turns) {
		return fmt.Sprintf("Usage: /rewind N, with N a turn's number from 0 to %d (`/rewind` lists them).", len(turns))
	}
	if n == len(turns) {
		return fmt.Sprintf("Turn %d is the latest turn: nothing to rewind.", n)
	}
	var ids []int64
	for _, t := range turns[n:] {
		if len(st.Files(t.ID)) > 0 && !st.Undone(t.ID) {
			ids = append(ids, t.ID)
		}
	}
	report, done, err := s.restoreFiles(ctx, st, ids, fmt.Sprintf("Rewind to turn %d", n))
	if err != nil {
		return "Rewind failed: " + err.Error()
	}
	if len(ids) > 0 && !done {
		return "Rewind cancelled: " + strings.Join(report, "; ")
	}
	for _, id := range ids {
		if err := st.MarkUndone(id); err != nil {
			report = append(report, "the undo could not be recorded: "+err.Error())
		}
	}
	s.chunks.Flush()
	if _, err := s.log.Rewind(turns[n].ID - 1); err != nil {
		return "The files were restored, but the conversation could not be rewound: " + err.Error()
	}
	// The rewind dropped this command's own prompt too: log it again, so
	// a load shows what the answer replies to.
	s.record(kindUpdate, acp.SessionUpdate{UserMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: "/rewind " + arg}}, MessageID: msgID(newID("u_"))}})
	if err := s.rebuild(); err != nil {
		return "The files were restored and the conversation rewound, but it could not be read back: " + err.Error()
	}
	msg := fmt.Sprintf("Rewound to the end of turn %d: turns %d to %d left the conversation", n, n+1, len(turns))
	if n == 0 {
		msg = "Rewound to the start: every turn left the conversation"
	}
	if len(report) > 0 {
		msg += "; " + strings.Join(report, "; ")
	}
	return msg + "."
}

// under reports whether path is one of dirs or inside one.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
