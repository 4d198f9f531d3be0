package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"acpd/internal/atomicfile"
)

const (
	logSuffix  = ".jsonl"
	lockSuffix = ".lock"
)

// ErrNotFound reports that no session has the given id.
var ErrNotFound = errors.New("session not found")

// ErrCorrupt is matched (errors.Is) by errors reporting damage inside a log
// that cannot be explained by a crash during an append: a bad header, an
// unparseable line followed by more data, or a gap in sequence numbers. The
// error message names the file and line.
var ErrCorrupt = errors.New("session log damaged")

// corruptError is the concrete ErrCorrupt error.
type corruptError struct {
	path string
	line int
	msg  string
}

func (e *corruptError) Error() string {
	return fmt.Sprintf("session log %s:%d: %s", e.path, e.line, e.msg)
}

func (e *corruptError) Is(target error) bool { return target == ErrCorrupt }

func corrupt(path string, err error) error {
	var el *errLine
	if errors.As(err, &el) {
		return &corruptError{path: path, line: el.line, msg: el.msg}
	}
	return fmt.Errorf("session log %s: %w", path, err)
}

// Meta is a session's index entry.
type Meta struct {
	// ID is the session id.
	ID string `json:"id"`
	// Cwd is the session's working directory as given at creation.
	Cwd string `json:"cwd"`
	// AdditionalDirectories are further workspace roots given at creation.
	AdditionalDirectories []string `json:"additionalDirectories,omitempty"`
	// Title is a human title, maintained by the caller through UpdateMeta.
	Title string `json:"title,omitempty"`
	// CreatedAt is the creation time (set by Create when zero).
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is the time of the last recorded activity.
	UpdatedAt time.Time `json:"updatedAt"`
	// Records is the number of records in the log as of the last index
	// update (Sync, UpdateMeta, Close). Owned by the store.
	Records int `json:"records"`
	// Extra is opaque caller data; it must be valid JSON when not empty and
	// is stored compacted.
	Extra json.RawMessage `json:"extra,omitempty"`
}

// Record is one entry of a session log.
type Record struct {
	// Seq is the record's sequence number: 1 for the first record, then
	// consecutive.
	Seq int64
	// Time is when the record was appended (UTC).
	Time time.Time
	// Kind is the caller-chosen record kind, 1..64 bytes of [A-Za-z0-9._/-].
	Kind string
	// Data is the compact JSON payload. Records returned by a load share one
	// backing buffer: treat Data as read-only.
	Data json.RawMessage
}

// Filter selects sessions in List.
type Filter struct {
	// Cwd, when not empty, keeps only sessions whose Cwd equals it exactly.
	Cwd string
}

// Store is a directory of session logs plus their index. A Store holds no
// resources beyond its configuration: it needs no Close, and any number of
// Stores in any number of processes may use the same directory at once. Its
// methods are safe for concurrent use.
type Store struct {
	dir    string          // absolute
	ctx    context.Context // ends the store's lock waits
	key    string          // dir with symlinks resolved: identifies locks in-process
	logger *slog.Logger
	mu     sync.Mutex // serialises this Store's index updates in-process
	cache  indexCache // guarded by mu
}

// Open opens the store rooted at dir, creating dir and dir/sessions with
// mode 0700 if needed. The caller names the directory (acpd's
// configuration does: state.dir, by default its state directory). ctx
// bounds every wait of the store and its Logs for a lock another process
// holds: once ctx ends, an operation waiting for the index lock fails with
// its cause; it is not otherwise used. Warnings (index rebuilt, torn tail
// dropped) go to slog.Default().
func Open(ctx context.Context, dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("session: no store directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("session: create store: %w", err)
	}
	s := &Store{dir: abs, ctx: ctx, logger: slog.Default()}
	for _, d := range []string{abs, s.sessionsDir()} {
		if err := ensureDir(d); err != nil {
			return nil, fmt.Errorf("session: create store: %w", err)
		}
	}
	if s.key, err = filepath.EvalSymlinks(abs); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	// Make sure the index exists (rebuilding it if needed), so that the
	// first index update of a fresh store is not mistaken for a recovery.
	// Only its existence is checked: Open never reads the index.
	if _, err := os.Lstat(s.indexPath()); errors.Is(err, fs.ErrNotExist) {
		if _, err := s.readIndex(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Dir returns the store's root directory (absolute).
func (s *Store) Dir() string { return s.dir }

func (s *Store) sessionsDir() string      { return filepath.Join(s.dir, "sessions") }
func (s *Store) indexPath() string        { return filepath.Join(s.dir, "index.json") }
func (s *Store) indexLockPath() string    { return filepath.Join(s.dir, "index.lock") }
func (s *Store) journalPath() string      { return filepath.Join(s.dir, "index.jsonl") }
func (s *Store) logPath(id string) string { return filepath.Join(s.sessionsDir(), id+logSuffix) }

// DataDir returns the directory where the caller may keep session id's
// own files (acpd's checkpoints): <dir>/data/<id>, not created here, and
// removed with the session by Delete.
func (s *Store) DataDir(id string) (string, error) {
	if err := validateID(id); err != nil {
		return "", err
	}
	return filepath.Join(s.dir, "data", id), nil
}

func (s *Store) lockPath(id string) string {
	return filepath.Join(s.sessionsDir(), id+lockSuffix)
}

// lockKey identifies a session's lock within this process.
func (s *Store) lockKey(id string) string {
	return filepath.Join(s.key, "sessions", id+lockSuffix)
}

// sessionLock is a held session lock.
type sessionLock struct {
	s  *Store
	id string
	f  *os.File
}

// lock takes the session lock of id: in-process first, then the flock.
func (s *Store) lock(id string) (*sessionLock, error) {
	key := s.lockKey(id)
	h, err := claim(id, key)
	if err != nil {
		return nil, err
	}
	f, err := lockFile(s.lockPath(id), id)
	if err != nil {
		unclaim(key)
		return nil, err
	}
	if err := writeHolder(f, h); err != nil {
		f.Close()
		unclaim(key)
		return nil, fmt.Errorf("session: write lock file: %w", err)
	}
	return &sessionLock{s: s, id: id, f: f}, nil
}

// release drops the lock; with remove, the lock file is unlinked first (while
// still held, see lockFile). Where an open file cannot be unlinked
// (Windows), it is unlinked right after closing instead, and left in place
// if another process has opened it meanwhile: an empty lock file is
// harmless.
func (l *sessionLock) release(remove bool) error {
	var err error
	if remove && unlinkOpen {
		if rerr := os.Remove(l.s.lockPath(l.id)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = rerr
		}
	} else {
		// Clear the holder so nobody reports us after we are gone.
		_ = l.f.Truncate(0)
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if remove && !unlinkOpen {
		if rerr := os.Remove(l.s.lockPath(l.id)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && !inUse(rerr) && err == nil {
			err = rerr
		}
	}
	unclaim(l.s.lockKey(l.id))
	return err
}

// Create creates a session from m and returns its Log, open and locked. When
// m.ID is empty a random id ("s_" + 16 hex digits) is chosen; otherwise m.ID
// must be a valid id (1..128 bytes of [A-Za-z0-9._-], not starting with '.')
// not used by another session, else the error wraps fs.ErrExist. CreatedAt
// defaults to now, UpdatedAt to CreatedAt; Records is ignored. The log header
// is durable and the index entry written before Create returns.
//
// The records first, if any, are written with the header, in the same
// atomic write (seq 1, 2, …, the time of creation): they are as durable as
// the header when Create returns, and the index entry counts them, with no
// Append and Sync after it (two fewer fsyncs and journal writes). Their
// kinds and data are checked as Append checks them; a jsonWriter is
// marshalled whole.
func (s *Store) Create(m Meta, first ...Entry) (*Log, error) {
	gen := m.ID == ""
	for attempt := 0; ; attempt++ {
		if gen {
			m.ID = newID()
		}
		l, err := s.create(m, first)
		if gen && attempt < 3 && errors.Is(err, fs.ErrExist) {
			continue
		}
		return l, err
	}
}

// Entry is a record to write at creation (Store.Create): its kind and data,
// as Log.Append takes them.
type Entry struct {
	Kind string
	Data any
}

func (s *Store) create(m Meta, first []Entry) (*Log, error) {
	if err := validateID(m.ID); err != nil {
		return nil, err
	}
	if len(m.Extra) > 0 && !json.Valid(m.Extra) {
		return nil, errors.New("session: Meta.Extra is not valid JSON")
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now()
	}
	m.CreatedAt = m.CreatedAt.UTC().Round(0)
	if m.UpdatedAt.Before(m.CreatedAt) {
		m.UpdatedAt = m.CreatedAt
	}
	m.UpdatedAt = m.UpdatedAt.UTC().Round(0)
	m.Records = 0
	hdr := header{V: logVersion, Kind: "header", ID: m.ID, Cwd: m.Cwd, AdditionalDirectories: slices.Clone(m.AdditionalDirectories), CreatedAt: m.CreatedAt}
	line, err := encodeHeader(hdr)
	if err != nil {
		return nil, fmt.Errorf("session: encode header: %w", err)
	}
	var recs []Record
	for i, e := range first {
		if err := validateKind(e.Kind); err != nil {
			return nil, err
		}
		data := e.Data
		if w, ok := data.(jsonWriter); ok {
			var buf bytes.Buffer
			if err := w.WriteJSON(&buf); err != nil {
				return nil, fmt.Errorf("session %s: %s record: %w", m.ID, e.Kind, err)
			}
			data = json.RawMessage(buf.Bytes())
		}
		payload, err := marshalData(data)
		if err != nil {
			return nil, fmt.Errorf("session %s: %s record: %w", m.ID, e.Kind, err)
		}
		if len(payload) > maxLineBytes-256 {
			return nil, fmt.Errorf("session %s: %s record of %d bytes exceeds the %d byte limit", m.ID, e.Kind, len(payload), maxLineBytes-256)
		}
		r := Record{Seq: int64(i + 1), Time: m.UpdatedAt, Kind: e.Kind, Data: payload}
		line = appendRecord(line, r.Seq, r.Time, r.Kind, r.Data)
		recs = append(recs, r)
	}
	m.Records = len(recs)

	sl, err := s.lock(m.ID)
	if err != nil {
		return nil, err
	}
	path := s.logPath(m.ID)
	if _, err := os.Lstat(path); err == nil {
		sl.release(false)
		return nil, fmt.Errorf("session: create %s: %w", m.ID, fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		sl.release(false)
		return nil, fmt.Errorf("session: %w", err)
	}
	// Write the header atomically so that a log never exists without a
	// complete header. The session lock keeps other creators away.
	fail := func(err error) (*Log, error) {
		os.Remove(path)
		sl.release(true)
		return nil, err
	}
	if err := atomicfile.WriteFile(path, line, 0o600); err != nil {
		return fail(fmt.Errorf("session: create log: %w", err))
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fail(fmt.Errorf("session: open log: %w", err))
	}
	s.holdLive(f, m.ID)
	if err := s.appendJournal(true, journalOp{Op: "put", M: &m}); err != nil {
		f.Close()
		return fail(err)
	}
	l := newLog(s, sl, f, hdr, recs, int64(len(line)))
	l.meta = &m
	return l, nil
}

// Open opens an existing session for appending: it takes the session lock
// (*LockedError when the session is open elsewhere, including through another
// Log of this process), loads all records, and returns them with the Log.
// A torn last line left by a crash is dropped and the file truncated to the
// last complete record (durably) before Open returns; damage elsewhere fails
// with an error matching ErrCorrupt that names file and line. An index entry
// missing for an existing log is re-added; a record count that disagrees with
// the log is corrected by the Log's next Sync, UpdateMeta or Close.
// Returns an error wrapping ErrNotFound when the log does not exist.
func (s *Store) Open(id string) (*Log, []Record, error) {
	if err := validateID(id); err != nil {
		return nil, nil, err
	}
	path := s.logPath(id)
	if _, err := os.Lstat(path); err != nil {
		return nil, nil, s.statErr(id, err)
	}
	sl, err := s.lock(id)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		sl.release(errors.Is(err, fs.ErrNotExist)) // deleted meanwhile
		return nil, nil, s.statErr(id, err)
	}
	fail := func(err error) (*Log, []Record, error) {
		f.Close()
		sl.release(false)
		return nil, nil, err
	}
	s.holdLive(f, id)
	data, err := readAll(f)
	if err != nil {
		return fail(fmt.Errorf("session: read %s: %w", path, err))
	}
	p, err := parseLog(data, id)
	if err != nil {
		return fail(corrupt(path, err))
	}
	if p.good < int64(len(data)) {
		s.logger.Warn("session log: dropping torn tail left by a crash", "path", path, "bytes", int64(len(data))-p.good)
		if err := f.Truncate(p.good); err != nil {
			return fail(fmt.Errorf("session: repair %s: %w", path, err))
		}
		if err := f.Sync(); err != nil {
			return fail(fmt.Errorf("session: repair %s: %w", path, err))
		}
	}
	l := newLog(s, sl, f, p.header, p.records, p.good)
	if err := l.reconcile(); err != nil {
		l.mu.Lock()
		l.closed = true
		l.mu.Unlock()
		return fail(err)
	}
	return l, p.records, nil
}

func (s *Store) statErr(id string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	return fmt.Errorf("session: %w", err)
}

// readAll reads f from its current offset to EOF.
func readAll(f *os.File) ([]byte, error) {
	size := 512
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() < 1<<40 {
		size += int(fi.Size())
	}
	b := make([]byte, 0, size)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// Records loads the records of session id without locking it, for read-only
// use while the session may be open elsewhere. A torn last line (possibly an
// append in progress) is ignored, not repaired. Damage fails with an error
// matching ErrCorrupt; a missing log with ErrNotFound.
func (s *Store) Records(id string) ([]Record, error) {
	if err := validateID(id); err != nil {
		return nil, err
	}
	path := s.logPath(id)
	f, err := os.Open(path)
	if err != nil {
		return nil, s.statErr(id, err)
	}
	defer f.Close()
	data, err := readAll(f)
	if err != nil {
		return nil, fmt.Errorf("session: read %s: %w", path, err)
	}
	p, err := parseLog(data, id)
	if err != nil {
		return nil, corrupt(path, err)
	}
	return p.records, nil
}

// Get returns the index entry of session id without locking it, or an error
// wrapping ErrNotFound.
func (s *Store) Get(id string) (Meta, error) {
	if err := validateID(id); err != nil {
		return Meta{}, err
	}
	idx, err := s.readIndex()
	if err != nil {
		return Meta{}, err
	}
	m, ok := idx.Sessions[id]
	if !ok {
		return Meta{}, fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	return m, nil
}

// Holder reports who has session id open: a *LockedError naming the
// holder when the session is open in another process or through another Log
// of this process, nil when it is not open or that cannot be told (invalid
// id, missing or unreadable files). It is a probe for listings: it never
// takes the session lock, so it cannot make a concurrent Open, Create or
// Delete fail. It may delay an Open or Create (by two system calls,
// typically) and, when it races with one, report either answer.
func (s *Store) Holder(id string) *LockedError {
	if validateID(id) != nil {
		return nil
	}
	key := s.lockKey(id)
	if h, ok := heldHere(key); ok {
		return &LockedError{ID: id, PID: h.PID, Holder: h.String()}
	}
	e := probeHolder(id, s.lockPath(id), s.logPath(id))
	if e != nil && e.PID == os.Getpid() {
		// This process opened (or closed) the session while the probe
		// looked at the files: the in-process table says which.
		if h, ok := heldHere(key); ok {
			return &LockedError{ID: id, PID: h.PID, Holder: h.String()}
		}
		return nil
	}
	return e
}

// List returns the index entries selected by f, most recently updated first,
// ties broken by id.
//
// The index read is kept, sorted, until the index changes: a List costs the
// journal lines appended since the last one plus copying the result, and
// reads the whole index only when another compaction replaced the snapshot.
// The slices of the returned Metas (and of Get's) are shared with that
// cache: treat them as read-only.
func (s *Store) List(f Filter) ([]Meta, error) {
	var out []Meta
	err := s.withIndexLock(func() error {
		idx, err := s.currentLocked()
		if err != nil {
			return err
		}
		all := s.cache.sorted
		if all == nil || s.cache.idx != idx {
			all = make([]Meta, 0, len(idx.Sessions))
			for _, m := range idx.Sessions {
				all = append(all, m)
			}
			slices.SortFunc(all, metaLess)
			if s.cache.idx == idx {
				s.cache.sorted = all
			}
		}
		if f.Cwd == "" {
			out = slices.Clone(all)
			return nil
		}
		for _, m := range all {
			if m.Cwd == f.Cwd {
				out = append(out, m)
			}
		}
		return nil
	})
	if out == nil && err == nil {
		out = []Meta{}
	}
	return out, err
}

// Delete removes session id: its log, its data directory (DataDir), lock
// file and index entry. It fails
// with *LockedError while the session is open anywhere (this process
// included) and with an error wrapping ErrNotFound when neither a log nor an
// index entry exists.
func (s *Store) Delete(id string) error {
	if err := validateID(id); err != nil {
		return err
	}
	path := s.logPath(id)
	// Fail before touching anything if the index cannot be updated (e.g.
	// written by a newer acpd). The whole index is read only when that
	// cheap probe fails or when the log is missing.
	if !s.snapshotLooksCurrent() {
		if _, err := s.readIndex(); err != nil {
			return err
		}
	}
	entryExisted := true
	if _, err := os.Lstat(path); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("session: %w", err)
		}
		idx, err := s.readIndex()
		if err != nil {
			return err
		}
		if _, entryExisted = idx.Sessions[id]; !entryExisted {
			return fmt.Errorf("session %s: %w", id, ErrNotFound)
		}
	}
	sl, err := s.lock(id)
	if err != nil {
		return err
	}
	logExisted := true
	if err := os.Remove(path); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			sl.release(false)
			return fmt.Errorf("session: delete %s: %w", id, err)
		}
		logExisted = false
	}
	removeTemps(path)
	if err := os.RemoveAll(filepath.Join(s.dir, "data", id)); err != nil {
		sl.release(false)
		return fmt.Errorf("session: delete %s's data: %w", id, err)
	}
	if err := syncDir(s.sessionsDir()); err != nil {
		sl.release(false)
		return err
	}
	err = s.appendJournal(true, journalOp{Op: "del", ID: id})
	if rerr := sl.release(true); err == nil && rerr != nil {
		err = fmt.Errorf("session: remove lock file: %w", rerr)
	}
	if err != nil {
		return err
	}
	if !logExisted && !entryExisted {
		return fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	return nil
}

// removeTemps removes the temp files a crashed atomic write of path left
// behind (".<base>.<random>.tmp", see internal/atomicfile). Valid session
// ids hold no glob metacharacters.
func removeTemps(path string) {
	dir, base := filepath.Split(path)
	leftovers, _ := filepath.Glob(filepath.Join(dir, "."+base+".*.tmp"))
	for _, p := range leftovers {
		os.Remove(p)
	}
}
