package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/checkpoint"
	"acpd/session"
)

// forkTurnMeta is the _meta key of a session/fork request that names the
// turn to fork at (its number, as /rewind lists them); without it the
// whole session is forked.
const forkTurnMeta = "acpd/turn"

// withFork serves ACP's unstable session/fork (advertised by
// handshake.Reply) in front of h, whose dispatcher knows the stable
// methods only.
func withFork(h jsonrpc.Handler, a *Agent) jsonrpc.Handler {
	return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != acp.AgentMethodSessionFork {
			return h(ctx, method, params)
		}
		var p acp.ForkSessionRequest
		if len(params) == 0 || string(params) == "null" {
			params = json.RawMessage("{}")
		}
		if err := acp.Unmarshal(params, &p); err != nil {
			return nil, jsonrpc.ErrInvalidParams(err)
		}
		return a.forkSession(ctx, &p)
	}
}

func (a *Agent) forkSession(ctx context.Context, p *acp.ForkSessionRequest) (*acp.ForkSessionResponse, error) {
	if err := checkDirs(p.Cwd, p.AdditionalDirectories); err != nil {
		return nil, err
	}
	turn := -1
	if v, ok := p.Meta[forkTurnMeta]; ok {
		f, isNum := v.(float64)
		if !isNum || f < 0 || f != float64(int(f)) {
			return nil, invalidParams("_meta.%s must be a turn's number", forkTurnMeta)
		}
		turn = int(f)
	}
	id, err := a.fork(p.SessionID, turn, p.Cwd, p.AdditionalDirectories)
	if err != nil {
		return nil, err
	}
	s, _, err := a.openStored(id, p.Cwd, p.AdditionalDirectories, p.McpServers)
	if err != nil {
		return nil, err
	}
	jsonrpc.AfterReply(ctx, func() { s.sendCommands(a.baseContext()) })
	return &acp.ForkSessionResponse{SessionID: s.id, Modes: s.modeState(), ConfigOptions: s.configOptions()}, nil
}

// fork creates a new session from session src as it was at the end of
// turn (its number; -1: the whole session), in cwd and dirs: the live
// records up to there are copied, and, when the fork has the source's
// directories, the checkpoints of the turns copied, so the fork can /undo
// and /rewind them. The files are left as they are. The new session is closed when fork returns.
func (a *Agent) fork(src acp.SessionID, turn int, cwd string, dirs []string) (acp.SessionID, error) {
	if s := a.lookup(src); s != nil {
		s.chunks.Flush()
	}
	recs, err := a.opts.Store.Records(string(src))
	if err != nil {
		if errors.Is(err, session.ErrNotFound) {
			return "", &jsonrpc.Error{Code: int(acp.ErrorCodeResourceNotFound), Message: fmt.Sprintf("session %q not found", src)}
		}
		if errors.Is(err, session.ErrInvalidID) {
			return "", invalidParams("%v", err)
		}
		return "", err
	}
	live := session.Live(recs)
	var turnAt []int // indices of the turn records in live
	for i, r := range live {
		if r.Kind == kindTurn {
			turnAt = append(turnAt, i)
		}
	}
	if turn > len(turnAt) {
		return "", invalidParams("session %s has %d turns, not %d", src, len(turnAt), turn)
	}
	if turn >= 0 && turn < len(turnAt) {
		live = live[:turnAt[turn]]
	}
	meta, err := a.opts.Store.Get(string(src))
	if err != nil {
		return "", err
	}
	title := meta.Title
	if title != "" {
		title += " (fork)"
	}
	l, err := a.opts.Store.Create(session.Meta{Cwd: cwd, AdditionalDirectories: dirs, Title: title})
	if err != nil {
		return "", fmt.Errorf("creating the fork: %w", err)
	}
	id := l.ID()
	fail := func(err error) (acp.SessionID, error) {
		l.Close()
		if derr := a.opts.Store.Delete(id); derr != nil {
			a.log.Warn("removing a fork that failed", "session", id, "err", derr)
		}
		return "", err
	}
	ids := map[int64]int64{}
	for _, r := range live {
		nr, err := l.Append(r.Kind, r.Data)
		if err != nil {
			return fail(fmt.Errorf("copying the session: %w", err))
		}
		if r.Kind == kindTurn {
			ids[r.Seq] = nr.Seq
		}
	}
	if title != "" {
		if _, err := l.Append(kindMeta, settings{Title: title}); err != nil {
			return fail(fmt.Errorf("copying the session: %w", err))
		}
	}
	// The checkpoints name the source's files: a fork elsewhere (another
	// worktree) gets the conversation only, so that its /undo never
	// writes in the source's directories.
	if meta.Cwd == cwd && slices.Equal(meta.AdditionalDirectories, dirs) {
		if err := a.copyCheckpoints(src, id, ids); err != nil {
			return fail(err)
		}
	}
	if err := l.Close(); err != nil {
		return fail(err)
	}
	return acp.SessionID(id), nil
}

// copyCheckpoints copies the checkpoints of session src's turns ids (old
// turn id → new) to session dst.
func (a *Agent) copyCheckpoints(src acp.SessionID, dst string, ids map[int64]int64) error {
	srcDir, err := a.opts.Store.DataDir(string(src))
	if err != nil {
		return err
	}
	dstDir, err := a.opts.Store.DataDir(dst)
	if err != nil {
		return err
	}
	from, err := checkpoint.Load(filepath.Join(srcDir, "checkpoints"))
	if err != nil {
		return err
	}
	to, err := from.CopyTo(filepath.Join(dstDir, "checkpoints"), ids)
	from.Close()
	if err != nil {
		return err
	}
	return to.Close()
}

// forkCommand is /fork [N]: a new session from this one (at the end of
// turn N), for editors without session/fork.
func (s *sess) forkCommand(arg string) string {
	turn := -1
	if arg != "" {
		if _, err := fmt.Sscanf(arg, "%d", &turn); err != nil || fmt.Sprint(turn) != arg || turn < 0 {
			return "Usage: /fork [N], with N a turn's number (`/rewind` lists them); without N the whole session."
		}
	}
	id, err := s.a.fork(s.id, turn, s.cwd, s.dirs)
	if err != nil {
		return "Fork failed: " + err.Error()
	}
	at := "as it is now"
	if turn >= 0 {
		at = fmt.Sprintf("at the end of turn %d", turn)
	}
	return fmt.Sprintf("Forked this session %s into session %s: open it from the editor's session history to go on there; this one is unchanged.", at, id)
}
