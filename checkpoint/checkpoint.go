// Package checkpoint keeps the previous content of the files a session's
// turns change, so that the changes can be undone. It knows no agent, no
// ACP and no session log: a Store is a directory its caller names (acpd's
// is the session's data directory in the session store) holding
//
//	blobs/<sha256>   file contents, content-addressed (written once, atomically)
//	journal.jsonl    one record per line, appended
//
// A turn is identified by a number its caller chooses (acpd uses the
// session log's sequence number of the turn's first record). The first
// change of a file in a turn is recorded by [Store.Before] before the file
// is changed: the content's blob is written and fsynced, then the journal
// record appended and fsynced, so a process killed at any moment leaves a
// journal naming the previous content of every file its turn touched. The
// state after the turn is recorded by [Store.After] (not synced: a missing
// one only means the undo cannot tell whether the user changed the file
// since, and asks).
//
// Journal records (version 1):
//
//	{"op":"before","turn":7,"path":"/abs/f","state":{"exists":true,"hash":"…","size":12}}
//	{"op":"after","turn":7,"path":"/abs/f","state":{"exists":false}}
//	{"op":"undone","turn":7}     the turn's files were restored
//	{"op":"redone","turn":7}     an undo was itself undone (not used by acpd yet)
//
// A torn last line (a crash during an append) is ignored and cut off by the
// next Open. Limits: a file larger than [MaxFile] is not kept, and nor is
// new content once the blobs reach [MaxSession] (the snapshots of
// [Store.Scan] keep content only while they hold less than half of it;
// the contents they kept that no record names are removed by Open and
// Close); the record then says why
// ([State.Lost]) and [Store.Before] returns a [*NotKeptError], so the
// caller can tell the user that the change cannot be undone.
package checkpoint

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"acpd/internal/atomicfile"
)

// Limits of what a Store keeps.
const (
	// MaxFile is the largest file content kept.
	MaxFile = 8 << 20
	// MaxSession bounds the bytes of a store's blobs.
	MaxSession = 256 << 20
)

// State is a file's state at one point: whether it exists and, when its
// content was kept, the content's SHA-256 (hex).
type State struct {
	Exists bool   `json:"exists"`
	Hash   string `json:"hash,omitempty"`
	Size   int64  `json:"size,omitempty"`
	// Lost says why the content was not kept ("" when it was, or when
	// the file did not exist).
	Lost string `json:"lost,omitempty"`
}

// Kept reports whether the state can be restored.
func (s State) Kept() bool { return !s.Exists || s.Lost == "" }

// Content is a file's content as the caller read it.
type Content struct {
	Exists bool
	Data   []byte
	// Unread: the file exists but the caller did not read it (too
	// large); Size is then its size.
	Unread bool
	Size   int64
}

// StateOf is the state of c, without keeping anything.
func StateOf(c Content) State {
	if !c.Exists {
		return State{}
	}
	if c.Unread {
		return State{Exists: true, Size: c.Size, Lost: tooLarge(c.Size)}
	}
	return State{Exists: true, Hash: Hash(c.Data), Size: int64(len(c.Data))}
}

// Hash is the hex SHA-256 of data, as States name contents.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func tooLarge(size int64) string {
	return fmt.Sprintf("the file (%s) is larger than the %d MiB a checkpoint keeps", sizeText(size), MaxFile>>20)
}

func sizeText(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// NotKeptError is returned by [Store.Before] when a file's previous content
// could not be kept (see [State.Lost]). The record was written: the file is
// known to have changed, but it cannot be restored.
type NotKeptError struct {
	Path   string
	Reason string
}

func (e *NotKeptError) Error() string {
	return fmt.Sprintf("%s cannot be undone: %s", e.Path, e.Reason)
}

// File is one file a turn changed.
type File struct {
	Path   string
	Before State
	// After is the file's state once the turn changed it; nil when it was
	// not recorded (the process stopped during the change).
	After *State
}

type record struct {
	Op    string `json:"op"`
	Turn  int64  `json:"turn"`
	Path  string `json:"path,omitempty"`
	State *State `json:"state,omitempty"`
}

type turn struct {
	files  []*File
	byPath map[string]*File
	undone bool
}

// Store is one session's checkpoints. It is safe for concurrent use.
type Store struct {
	dir string

	mu     sync.Mutex
	j      *os.File
	used   int64 // bytes of blobs
	turns  map[int64]*turn
	closed bool
	// blobs are the hashes known to be stored.
	blobs map[string]bool
	// unsynced are blobs written without fsync (by a Scan), synced when a
	// record first names them.
	unsynced map[string]bool
}

const journalName = "journal.jsonl"

// Open opens (creating it when missing) the store in dir.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	s := &Store{dir: dir, turns: map[int64]*turn{}, blobs: map[string]bool{}, unsynced: map[string]bool{}}
	entries, err := os.ReadDir(filepath.Join(dir, "blobs"))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	for _, e := range entries {
		if len(e.Name()) != sha256.Size*2 {
			os.Remove(filepath.Join(dir, "blobs", e.Name())) // a temp file a crash left
			continue
		}
		if fi, err := e.Info(); err == nil {
			s.used += fi.Size()
			s.blobs[e.Name()] = true
		}
	}
	path := filepath.Join(dir, journalName)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	good := s.load(data)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if good < len(data) {
		// A torn last record: cut it off before appending.
		if err := f.Truncate(int64(good)); err != nil {
			f.Close()
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
	}
	if _, err := f.Seek(0, 2); err != nil {
		f.Close()
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	s.j = f
	s.gcLocked()
	return s, nil
}

// gcLocked removes the blobs no record names (contents kept by a command's
// snapshot of files the command did not change).
func (s *Store) gcLocked() {
	ref := map[string]bool{}
	for _, t := range s.turns {
		for _, f := range t.files {
			ref[f.Before.Hash] = true
		}
	}
	for h := range s.blobs {
		if ref[h] {
			continue
		}
		p := s.blobPath(h)
		if fi, err := os.Stat(p); err == nil && os.Remove(p) == nil {
			s.used -= fi.Size()
			delete(s.blobs, h)
			delete(s.unsynced, h)
		}
	}
}

// Load reads the store in dir without opening it for writing (another
// process may be appending to it): the result only reads, and a missing
// store is an empty one. Close it all the same.
func Load(dir string) (*Store, error) {
	s := &Store{dir: dir, turns: map[int64]*turn{}, blobs: map[string]bool{}, unsynced: map[string]bool{}, closed: true}
	data, err := os.ReadFile(filepath.Join(dir, journalName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	s.load(data)
	return s, nil
}

// load applies the journal's complete records and returns the length of
// its valid prefix.
func (s *Store) load(data []byte) int {
	good := 0
	for off := 0; off < len(data); {
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			break
		}
		line := data[off : off+nl]
		var r record
		if err := json.Unmarshal(line, &r); err != nil {
			// Only the last line can be torn; a bad line in the middle
			// is skipped.
			off += nl + 1
			continue
		}
		s.apply(r)
		off += nl + 1
		good = off
	}
	return good
}

func (s *Store) apply(r record) {
	t := s.turns[r.Turn]
	if t == nil {
		t = &turn{byPath: map[string]*File{}}
		s.turns[r.Turn] = t
	}
	switch r.Op {
	case "before":
		if r.State == nil || t.byPath[r.Path] != nil {
			return
		}
		f := &File{Path: r.Path, Before: *r.State}
		t.files = append(t.files, f)
		t.byPath[r.Path] = f
	case "after":
		if f := t.byPath[r.Path]; f != nil && r.State != nil {
			st := *r.State
			f.After = &st
		}
	case "undone":
		t.undone = true
	case "redone":
		t.undone = false
	}
}

func (s *Store) appendLocked(r record, durable bool) error {
	if s.closed {
		return errors.New("checkpoint: store closed")
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := s.j.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("checkpoint: journal: %w", err)
	}
	if durable {
		if err := s.j.Sync(); err != nil {
			return fmt.Errorf("checkpoint: journal: %w", err)
		}
	}
	s.apply(r)
	return nil
}

// Has reports whether turn already recorded path's previous content.
func (s *Store) Has(turnID int64, path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.turns[turnID]
	return t != nil && t.byPath[path] != nil
}

// Before records c, the content of path before turn first changes it (a
// later call for the same turn and path does nothing). It returns once the
// record is durable. A *NotKeptError says the record was written without the
// content; any other error means nothing was recorded.
func (s *Store) Before(turnID int64, path string, c Content) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.turns[turnID]; t != nil && t.byPath[path] != nil {
		return nil
	}
	st, err := s.keepLocked(c)
	if err != nil {
		return err
	}
	if err := s.syncBlobsLocked([]string{st.Hash}); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := s.appendLocked(record{Op: "before", Turn: turnID, Path: path, State: &st}, true); err != nil {
		return err
	}
	if st.Exists && st.Lost != "" {
		return &NotKeptError{Path: path, Reason: st.Lost}
	}
	return nil
}

// BeforeState records an already kept state (see [Store.Keep]) as path's
// state before turn changed it.
func (s *Store) BeforeState(turnID int64, path string, st State) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.turns[turnID]; t != nil && t.byPath[path] != nil {
		return nil
	}
	if err := s.syncBlobsLocked([]string{st.Hash}); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return s.appendLocked(record{Op: "before", Turn: turnID, Path: path, State: &st}, true)
}

// Keep stores c's content (when the limits allow) and returns its state,
// recording nothing in the journal.
func (s *Store) Keep(c Content) (State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keepLocked(c)
}

func (s *Store) keepLocked(c Content) (State, error) {
	return s.keepWithin(c, MaxSession, true)
}

// keepWithin keeps c unless the blobs would pass limit bytes; durable: its
// blob is fsynced (else syncBlob must be called before a record names it).
func (s *Store) keepWithin(c Content, limit int64, durable bool) (State, error) {
	st := StateOf(c)
	if !st.Exists || st.Lost != "" {
		return st, nil
	}
	if st.Size > MaxFile {
		st.Hash, st.Lost = "", tooLarge(st.Size)
		return st, nil
	}
	if s.blobs[st.Hash] {
		return st, nil
	}
	if s.used+st.Size > limit {
		st.Hash, st.Lost = "", fmt.Sprintf("this session's checkpoints already hold %d MiB, their limit", limit>>20)
		if limit < MaxSession {
			st.Lost = fmt.Sprintf("the snapshots taken before commands already hold %d MiB, their limit", limit>>20)
		}
		return st, nil
	}
	write := atomicfile.WriteFile
	if !durable {
		write = s.writeQuick
	}
	if err := write(s.blobPath(st.Hash), c.Data, 0o600); err != nil {
		return State{}, fmt.Errorf("checkpoint: keeping the previous content: %w", err)
	}
	if !durable {
		s.unsynced[st.Hash] = true
	}
	s.blobs[st.Hash] = true
	s.used += st.Size
	return st, nil
}

// After records path's state once turn changed it (c is the new content;
// only its hash is recorded). The last call for a turn and path wins.
func (s *Store) After(turnID int64, path string, c Content) error {
	st := StateOf(c)
	st.Lost = ""
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.turns[turnID]; t == nil || t.byPath[path] == nil {
		return nil
	}
	return s.appendLocked(record{Op: "after", Turn: turnID, Path: path, State: &st}, false)
}

// Files returns the files turn changed, in the order of their first change.
func (s *Store) Files(turnID int64) []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.turns[turnID]
	if t == nil {
		return nil
	}
	out := make([]File, 0, len(t.files))
	for _, f := range t.files {
		c := *f
		if f.After != nil {
			a := *f.After
			c.After = &a
		}
		out = append(out, c)
	}
	return out
}

// Turns returns the turns with changed files, ascending.
func (s *Store) Turns() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int64
	for id, t := range s.turns {
		if len(t.files) > 0 {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// Undone reports whether turn's files were restored.
func (s *Store) Undone(turnID int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.turns[turnID]
	return t != nil && t.undone
}

// MarkUndone records that turn's files were restored.
func (s *Store) MarkUndone(turnID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendLocked(record{Op: "undone", Turn: turnID}, true)
}

// Blob returns the content a State names.
func (s *Store) Blob(st State) ([]byte, error) {
	if !st.Exists {
		return nil, nil
	}
	if st.Lost != "" || len(st.Hash) != sha256.Size*2 {
		return nil, fmt.Errorf("checkpoint: the content was not kept: %s", st.Lost)
	}
	data, err := os.ReadFile(s.blobPath(st.Hash))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if Hash(data) != st.Hash {
		return nil, fmt.Errorf("checkpoint: blob %s is damaged", st.Hash)
	}
	return data, nil
}

func (s *Store) blobPath(hash string) string { return filepath.Join(s.dir, "blobs", hash) }

// writeQuick writes a blob without fsync: a temp file renamed into place,
// so a crash leaves the whole blob or none (a power loss may lose it:
// syncBlobs makes it durable before a record names it).
func (s *Store) writeQuick(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), perm)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// syncBlobsLocked makes the unsynced blobs among hashes durable.
func (s *Store) syncBlobsLocked(hashes []string) error {
	synced := false
	for _, h := range hashes {
		if !s.unsynced[h] {
			continue
		}
		f, err := os.Open(s.blobPath(h))
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
		delete(s.unsynced, h)
		synced = true
	}
	if synced {
		return atomicfile.SyncDir(filepath.Join(s.dir, "blobs"))
	}
	return nil
}

// CopyTo copies the records of the given turns into the store in dir (a
// new one: a fork), renaming each turn to ids[turn], and links (or copies)
// their blobs. The copy's records are durable when it returns.
func (s *Store) CopyTo(dir string, ids map[int64]int64) (*Store, error) {
	dst, err := Open(dir)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	type item struct {
		id int64
		t  *turn
	}
	var todo []item
	for old, id := range ids {
		if t := s.turns[old]; t != nil {
			todo = append(todo, item{id, t})
		}
	}
	slices.SortFunc(todo, func(a, b item) int { return cmp.Compare(a.id, b.id) })
	var recs []record
	for _, it := range todo {
		for _, f := range it.t.files {
			b := f.Before
			recs = append(recs, record{Op: "before", Turn: it.id, Path: f.Path, State: &b})
			if f.After != nil {
				a := *f.After
				recs = append(recs, record{Op: "after", Turn: it.id, Path: f.Path, State: &a})
			}
		}
		if it.t.undone {
			recs = append(recs, record{Op: "undone", Turn: it.id})
		}
	}
	s.mu.Unlock()
	dst.mu.Lock()
	defer dst.mu.Unlock()
	for _, r := range recs {
		if r.Op == "before" && r.State.Exists && r.State.Lost == "" && !dst.blobs[r.State.Hash] {
			if err := linkOrCopy(s.blobPath(r.State.Hash), dst.blobPath(r.State.Hash)); err != nil {
				dst.closeLocked()
				return nil, fmt.Errorf("checkpoint: copying a blob: %w", err)
			}
			dst.blobs[r.State.Hash] = true
			dst.used += r.State.Size
		}
		if err := dst.appendLocked(r, false); err != nil {
			dst.closeLocked()
			return nil, err
		}
	}
	if err := dst.j.Sync(); err != nil {
		dst.closeLocked()
		return nil, fmt.Errorf("checkpoint: journal: %w", err)
	}
	return dst, nil
}

func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil || errors.Is(err, fs.ErrExist) {
		return nil
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(dst, data, 0o600)
}

// Close removes the blobs no record names and closes the journal.
// Idempotent.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeLocked()
}

func (s *Store) closeLocked() error {
	if s.closed || s.j == nil {
		s.closed = true
		return nil
	}
	s.closed = true
	s.gcLocked()
	return s.j.Close()
}
