package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"acpd/internal/atomicfile"
)

const indexVersion = 1

// indexFile is the content of index.json.
type indexFile struct {
	V        int             `json:"v"`
	Sessions map[string]Meta `json:"sessions"`
}

// errIndexDamaged marks an index.json that must be rebuilt from the logs.
var errIndexDamaged = errors.New("damaged")

// readIndexFile reads and validates index.json. It returns fs.ErrNotExist
// when the file is missing and wraps errIndexDamaged when it must be rebuilt.
// A newer version is a plain error: it must not be overwritten.
func (s *Store) readIndexFile() (*indexFile, error) {
	b, err := atomicfile.ReadFile(s.indexPath())
	if err != nil {
		return nil, err
	}
	var probe struct {
		V *int `json:"v"`
	}
	if err := json.Unmarshal(b, &probe); err != nil || probe.V == nil {
		return nil, fmt.Errorf("%w: not a version %d index", errIndexDamaged, indexVersion)
	}
	if *probe.V != indexVersion {
		return nil, fmt.Errorf("session: %s has unsupported version %d (this acpd reads version %d)", s.indexPath(), *probe.V, indexVersion)
	}
	var idx indexFile
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("%w: %v", errIndexDamaged, err)
	}
	if idx.Sessions == nil {
		idx.Sessions = make(map[string]Meta)
	}
	for id, m := range idx.Sessions {
		if validateID(id) != nil || m.ID != id {
			return nil, fmt.Errorf("%w: bad entry %q", errIndexDamaged, id)
		}
	}
	return &idx, nil
}

// readIndex returns the current index: the snapshot (index.json) with the
// journal (index.jsonl) applied, read under the index lock so that a
// concurrent compaction is never seen half done. The result is the Store's
// cache (see currentLocked): read-only.
func (s *Store) readIndex() (*indexFile, error) {
	var idx *indexFile
	err := s.withIndexLock(func() error {
		var err error
		idx, err = s.currentLocked()
		return err
	})
	return idx, err
}

// indexCache is the index as this Store last read it: the snapshot, known
// by its file info, with the journal applied up to joff (the end of its
// last complete line). The snapshot is only ever replaced (a new file) and
// the journal only appended to, except when a compaction empties it after
// replacing the snapshot: so while the snapshot is the same file, the
// journal's new bytes are all that changed.
type indexCache struct {
	snap, journal os.FileInfo
	joff          int64
	idx           *indexFile
	sorted        []Meta // idx's entries in List order; nil until needed
}

// currentLocked returns the current index, from the cache when the
// snapshot is the one cached (applying what the journal gained), else read
// whole (loadLocked; a missing or damaged snapshot is rebuilt from the
// logs). A reader that has paid for the whole index compacts the journal
// when it has grown past a fraction of the snapshot. The caller holds the
// index lock and must not modify the result.
func (s *Store) currentLocked() (*indexFile, error) {
	c := &s.cache
	if c.idx != nil && s.refreshLocked() {
		return c.idx, nil
	}
	*c = indexCache{}
	idx, jsize, err := s.loadLocked()
	if err != nil {
		return nil, err
	}
	if jsize > compactMin && jsize > s.snapshotSize()/4 {
		if err := s.writeIndex(idx); err != nil {
			return nil, err
		}
		jsize = 0
	}
	snap, err := os.Stat(s.indexPath())
	if err != nil {
		return idx, nil // not cached
	}
	j, _ := os.Stat(s.journalPath())
	// Where os.SameFile learns a file's identity lazily (Windows), learn
	// it now, before the path can name another file.
	os.SameFile(snap, snap)
	if j != nil {
		os.SameFile(j, j)
	}
	*c = indexCache{snap: snap, journal: j, joff: jsize, idx: idx}
	return idx, nil
}

// refreshLocked brings the cache up to date with the journal's new lines;
// false means it is stale and must be read again.
func (s *Store) refreshLocked() bool {
	c := &s.cache
	snap, err := os.Stat(s.indexPath())
	if err != nil || !sameVersion(c.snap, snap) {
		return false
	}
	j, err := os.Stat(s.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return c.joff == 0
	}
	if err != nil || (c.journal != nil && !os.SameFile(c.journal, j)) || j.Size() < c.joff {
		return false
	}
	if j.Size() > c.joff {
		f, err := os.Open(s.journalPath())
		if err != nil {
			return false
		}
		b := make([]byte, j.Size()-c.joff)
		_, err = f.ReadAt(b, c.joff)
		f.Close()
		if err != nil {
			return false
		}
		b = b[:bytes.LastIndexByte(b, '\n')+1] // a torn tail waits for its next line
		if applyJournal(c.idx, b, s.logger) {
			c.sorted = nil
		}
		c.joff += int64(len(b))
	}
	if c.journal == nil {
		os.SameFile(j, j) // as in currentLocked
	}
	c.journal = j
	return true
}

// sameVersion reports whether a and b describe the same file unchanged.
func sameVersion(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// withIndexLock runs fn under the index lock: this Store's mutex plus an
// exclusive flock on index.lock (waited for at most lockIndexTimeout, or
// until the store's context ends).
func (s *Store) withIndexLock(fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	lf, err := lockWait(s.ctx, s.indexLockPath())
	if err != nil {
		return err
	}
	defer lf.Close()
	return fn()
}

// loadLocked reads the snapshot and applies the journal; it returns the
// journal's size up to the end of its last complete line. A missing or damaged snapshot is rebuilt from the logs and
// written (the journal, which only makes sense on top of its snapshot, is
// discarded). The caller holds the index lock.
func (s *Store) loadLocked() (*indexFile, int64, error) {
	idx, err := s.readIndexFile()
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errIndexDamaged) {
			return nil, 0, err
		}
		if errors.Is(err, errIndexDamaged) {
			bad := s.indexPath() + ".corrupt"
			s.logger.Warn("session index damaged; rebuilding from logs", "path", s.indexPath(), "err", err, "keptAs", bad)
			if err := os.Rename(s.indexPath(), bad); err != nil {
				return nil, 0, fmt.Errorf("session: set aside damaged index: %w", err)
			}
		}
		if idx, err = s.rebuild(); err != nil {
			return nil, 0, err
		}
		return idx, 0, s.writeIndex(idx)
	}
	b, err := os.ReadFile(s.journalPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("session: read index journal: %w", err)
	}
	applyJournal(idx, b, s.logger)
	return idx, int64(bytes.LastIndexByte(b, '\n') + 1), nil
}

// writeIndex atomically replaces index.json (see internal/atomicfile) with
// idx and then empties the journal, which idx includes. A crash between the
// two leaves a journal whose replay onto the new snapshot changes nothing
// (every operation is idempotent given the ones after it). The caller holds
// the index lock.
func (s *Store) writeIndex(idx *indexFile) error {
	idx.V = indexVersion
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(idx); err != nil {
		return fmt.Errorf("session: encode index: %w", err)
	}
	if err := atomicfile.WriteFile(s.indexPath(), buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("session: write index: %w", err)
	}
	if err := os.Truncate(s.journalPath(), 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session: reset index journal: %w", err)
	}
	return nil
}

func (s *Store) snapshotSize() int64 {
	fi, err := os.Stat(s.indexPath())
	if err != nil {
		return 0
	}
	return fi.Size()
}

// compactMin is the journal size below which nobody compacts.
const compactMin = 64 << 10

// journalOp is one line of index.jsonl.
type journalOp struct {
	// Op is "put" (M replaces the entry), "sync" (M.Records and a later
	// M.UpdatedAt update the entry, or M becomes it when there is none) or
	// "del" (the entry of ID is removed).
	Op string `json:"op"`
	ID string `json:"id,omitempty"`
	M  *Meta  `json:"m,omitempty"`
}

// applyJournal applies the journal image b to idx and reports whether it
// applied anything. Lines that do not parse (torn by a crash mid-append) or
// name invalid ids are skipped.
func applyJournal(idx *indexFile, b []byte, logger interface{ Warn(string, ...any) }) (changed bool) {
	for len(b) > 0 {
		line := b
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			b = nil // torn tail: an append in progress or cut by a crash
			continue
		}
		line, b = b[:nl], b[nl+1:]
		if len(line) == 0 {
			continue
		}
		var op journalOp
		if err := json.Unmarshal(line, &op); err != nil {
			logger.Warn("session index journal: skipping a line torn by a crash", "err", err)
			continue
		}
		switch op.Op {
		case "put", "sync":
			if op.M == nil || validateID(op.M.ID) != nil {
				continue
			}
			m := *op.M
			old, ok := idx.Sessions[m.ID]
			if op.Op == "sync" && ok {
				old.Records = m.Records
				if m.UpdatedAt.After(old.UpdatedAt) {
					old.UpdatedAt = m.UpdatedAt
				}
				m = old
			}
			idx.Sessions[m.ID] = m
			changed = true
		case "del":
			delete(idx.Sessions, op.ID)
			changed = true
		}
	}
	return changed
}

// appendJournal appends ops to the journal under the index lock: one write(2)
// on an O_APPEND descriptor, then, when durable, fsync. It reads nothing but the
// first bytes of the snapshot (to refuse a newer index, and to rebuild a
// missing or damaged one first), so its cost does not grow with the number
// of sessions. A journal grown far past its snapshot is compacted here.
func (s *Store) appendJournal(durable bool, ops ...journalOp) error {
	var line []byte
	for _, op := range ops {
		b, err := json.Marshal(op)
		if err != nil {
			return fmt.Errorf("session: encode index entry: %w", err)
		}
		line = append(append(line, b...), '\n')
	}
	return s.withIndexLock(func() error {
		if !s.snapshotLooksCurrent() {
			// Classify (and rebuild) the slow way, then rewrite the
			// snapshot in this package's layout so that the probe
			// passes from now on.
			idx, _, err := s.loadLocked()
			if err != nil {
				return err
			}
			if err := s.writeIndex(idx); err != nil {
				return err
			}
		}
		f, err := os.OpenFile(s.journalPath(), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("session: open index journal: %w", err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return fmt.Errorf("session: index journal: %w", err)
		}
		out := line
		if fi.Size() > 0 {
			// A line torn by a crash gets its own line so that ours parses.
			var last [1]byte
			if _, err := f.ReadAt(last[:], fi.Size()-1); err == nil && last[0] != '\n' {
				out = append([]byte{'\n'}, line...)
			}
		}
		if _, err := f.Write(out); err != nil {
			return fmt.Errorf("session: append index journal: %w", err)
		}
		if durable {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("session: fsync index journal: %w", err)
			}
		}
		if fi.Size() == 0 && durable {
			if err := syncDir(s.dir); err != nil {
				return err
			}
		}
		if size := fi.Size() + int64(len(out)); size > 4*compactMin && size > 2*s.snapshotSize() {
			idx, _, err := s.loadLocked()
			if err != nil {
				return err
			}
			return s.writeIndex(idx)
		}
		return nil
	})
}

// snapshotLooksCurrent reports whether index.json starts the way this
// package writes version 1 snapshots (a cheap probe, not a validation).
func (s *Store) snapshotLooksCurrent() bool {
	f, err := atomicfile.Open(s.indexPath())
	if err != nil {
		return false
	}
	defer f.Close()
	var b [len(snapshotPrefix)]byte
	n, _ := io.ReadFull(f, b[:])
	return string(b[:n]) == snapshotPrefix
}

const snapshotPrefix = `{"v":1,"sessions":{`

// syncDir makes a creation or removal in dir durable.
func syncDir(dir string) error {
	if err := atomicfile.SyncDir(dir); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return nil
}

// rebuild reconstructs the index from the logs: id, cwd, additional
// directories and creation time from each header, UpdatedAt from the file's
// modification time, Records from the number of complete lines. Titles and
// Extra are lost. Logs whose header is unreadable are skipped with a warning.
func (s *Store) rebuild() (*indexFile, error) {
	idx := &indexFile{V: indexVersion, Sessions: make(map[string]Meta)}
	ents, err := os.ReadDir(s.sessionsDir())
	if err != nil {
		return nil, fmt.Errorf("session: rebuild index: %w", err)
	}
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), logSuffix)
		if !ok || !e.Type().IsRegular() || validateID(id) != nil {
			continue
		}
		m, err := s.scanLog(id)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) { // deleted meanwhile
				s.logger.Warn("session log skipped while rebuilding index", "path", s.logPath(id), "err", err)
			}
			continue
		}
		idx.Sessions[id] = m
	}
	if len(idx.Sessions) > 0 {
		s.logger.Info("session index rebuilt from logs", "path", s.indexPath(), "sessions", len(idx.Sessions))
	}
	return idx, nil
}

// scanLog recovers the Meta of one session from its log.
func (s *Store) scanLog(id string) (Meta, error) {
	f, err := os.Open(s.logPath(id))
	if err != nil {
		return Meta{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Meta{}, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	line, err := readLine(br, maxLineBytes)
	if err != nil {
		return Meta{}, fmt.Errorf("header: %w", err)
	}
	var h header
	if err := parseHeader(line, &h); err != nil {
		return Meta{}, err
	}
	if h.ID != id {
		return Meta{}, fmt.Errorf("header names session %q", h.ID)
	}
	n, err := countLines(br)
	if err != nil {
		return Meta{}, err
	}
	return Meta{
		ID:                    id,
		Cwd:                   h.Cwd,
		AdditionalDirectories: h.AdditionalDirectories,
		CreatedAt:             h.CreatedAt.UTC(),
		UpdatedAt:             fi.ModTime().UTC(),
		Records:               n,
	}, nil
}

// readLine reads one newline-terminated line of at most limit bytes.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > limit+1 {
			return nil, errors.New("line too long")
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return nil, errors.New("incomplete line")
		default:
			return nil, err
		}
	}
}

func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	n := 0
	for {
		k, err := r.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// metaLess orders List results: most recently updated first, then by id.
func metaLess(a, b Meta) int {
	if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// ensureDir creates dir with mode 0700 if it does not exist. Existing
// directories keep their mode.
func ensureDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			fi, serr := os.Stat(dir)
			if serr == nil && fi.IsDir() {
				return nil
			}
		}
		return err
	}
	// Mkdir is subject to the umask; make sure of exactly 0700.
	return os.Chmod(dir, 0o700)
}

// now is the store's clock, UTC without monotonic reading.
func now() time.Time { return time.Now().UTC().Round(0) }
