package permissions

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"acpd/internal/atomicfile"
	"acpd/internal/filelock"
)

const (
	storeVersion = 1
	// lockTimeout bounds how long a Store write waits for another process
	// holding the store's lock; the write then fails with an error.
	lockTimeout = 10 * time.Second
	// maxStoreSize bounds the store file read into memory.
	maxStoreSize = 16 << 20
)

// ErrNotFound is returned by Store.Remove for an unknown id.
var ErrNotFound = errors.New("no remembered permission with this id")

// Remembered is one remembered choice.
type Remembered struct {
	// Project is the project key (see ProjectKey) the choice applies to.
	Project string `json:"project"`
	// Rule is the remembered rule: Action is "allow" or "deny".
	Rule Rule `json:"rule"`
	// CreatedAt is when the choice was last made, in UTC.
	CreatedAt time.Time `json:"created_at"`
	// ID is a short id derived from Project, Rule.Tool and Rule.Match: it is
	// stable across runs and identifies the entry for Store.Remove.
	ID string `json:"id"`
}

// storeFile is the JSON layout of permissions.json.
type storeFile struct {
	Version int          `json:"version"`
	Entries []Remembered `json:"entries"`
}

// Store is the file of remembered choices (permissions.json in acpd's state
// directory). It is safe for concurrent use, also by several processes:
// writes take an exclusive lock on a sibling ".lock" file, re-read the file,
// apply the change and atomically replace the file (mode 0600), so no
// process loses another's entries. Reads see a whole file because it is
// only ever replaced whole; they need no lock, except on Windows, where they
// hold the lock shared so that an open reader never makes a write fail
// (see internal/atomicfile). A write, and on Windows a read, waits at most
// 10 seconds for the lock.
// A Store holds no open files between calls and needs no closing.
type Store struct {
	path string
	mu   sync.Mutex // serialises this process's writers
}

// OpenStore opens the store at path, creating its directory (0700) if
// needed; the file itself is created by the first write. It fails if an
// existing file cannot be read or is not a store file.
func OpenStore(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("permissions store path is empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("permissions store path %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("permissions store directory: %w", err)
	}
	s := &Store{path: abs}
	if _, err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// load reads every entry.
func (s *Store) load() ([]Remembered, error) {
	data, err := s.readRaw()
	if err != nil {
		return nil, err
	}
	return s.decode(data)
}

// readRaw reads the store file's bytes, outside [Store.update]; a missing
// file reads as empty. On Windows it holds the store's lock shared while
// the file is open (atomicfile.ReaderLock), so that no write finds it open
// and fails.
func (s *Store) readRaw() ([]byte, error) {
	unlock, err := atomicfile.ReaderLock(s.path+".lock", lockTimeout)
	if err != nil {
		return nil, fmt.Errorf("read permissions store: %w", err)
	}
	defer unlock()
	return s.readFile()
}

// readFile reads the store file's bytes; a missing file reads as empty.
func (s *Store) readFile() ([]byte, error) {
	f, err := atomicfile.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read permissions store: %w", err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() <= maxStoreSize {
		buf.Grow(int(fi.Size()) + 1)
	}
	if _, err := buf.ReadFrom(io.LimitReader(f, maxStoreSize+1)); err != nil {
		return nil, fmt.Errorf("read permissions store: %w", err)
	}
	data := buf.Bytes()
	if len(data) > maxStoreSize {
		return nil, fmt.Errorf("permissions store %s is larger than %d bytes", s.path, maxStoreSize)
	}
	return data, nil
}

func (s *Store) decode(data []byte) ([]Remembered, error) {
	entries, err := decodeStore(data)
	if err != nil {
		return nil, fmt.Errorf("permissions store %s: %w (fix or delete the file)", s.path, err)
	}
	return entries, nil
}

// decodeStore parses the store file. Ids are recomputed from the entries'
// contents, so an edited file cannot make ids collide or drift.
func decodeStore(data []byte) ([]Remembered, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var f storeFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if f.Version != storeVersion {
		return nil, fmt.Errorf("unsupported version %d (want %d)", f.Version, storeVersion)
	}
	for i := range f.Entries {
		f.Entries[i].ID = entryID(f.Entries[i].Project, f.Entries[i].Rule)
	}
	return f.Entries, nil
}

// entryID derives the stable short id of a project's rule for a tool and
// match; the action is not part of it, so a new answer replaces the old one.
func entryID(project string, r Rule) string {
	h := sha256.Sum256([]byte(project + "\x00" + r.Tool + "\x00" + r.Match))
	return hex.EncodeToString(h[:6])
}

// List returns every remembered choice, ordered by project, then creation
// time, then id.
func (s *Store) List() ([]Remembered, error) {
	entries, err := s.load()
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(entries, func(a, b Remembered) int {
		return cmp.Or(cmp.Compare(a.Project, b.Project), a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return entries, nil
}

// Remove deletes the remembered choice with the given id (as shown by List).
// It returns an error wrapping ErrNotFound when there is none.
func (s *Store) Remove(id string) error {
	return s.update(func(entries []Remembered) ([]Remembered, error) {
		n := len(entries)
		entries = slices.DeleteFunc(entries, func(e Remembered) bool { return e.ID == id })
		if len(entries) == n {
			return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		return entries, nil
	})
}

// add remembers rules for a project, replacing earlier answers for the same
// tool and match.
func (s *Store) add(project string, rules []Rule) error {
	now := time.Now().UTC().Truncate(time.Second)
	return s.update(func(entries []Remembered) ([]Remembered, error) {
		for _, r := range rules {
			e := Remembered{Project: project, Rule: r, CreatedAt: now, ID: entryID(project, r)}
			if i := slices.IndexFunc(entries, func(x Remembered) bool { return x.ID == e.ID }); i >= 0 {
				entries[i] = e
				// Drop any duplicates an edited file may hold.
				entries = append(entries[:i+1], slices.DeleteFunc(entries[i+1:], func(x Remembered) bool { return x.ID == e.ID })...)
			} else {
				entries = append(entries, e)
			}
		}
		return entries, nil
	})
}

// update applies fn to the current entries under the cross-process lock and
// saves the result atomically.
func (s *Store) update(fn func([]Remembered) ([]Remembered, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := filelock.Lock(s.path+".lock", lockTimeout)
	if err != nil {
		return fmt.Errorf("lock permissions store: %w", err)
	}
	defer unlock()
	data, err := s.readFile() // under the exclusive lock: no ReaderLock
	if err != nil {
		return err
	}
	entries, err := s.decode(data)
	if err != nil {
		return err
	}
	entries, err = fn(entries)
	if err != nil {
		return err
	}
	if entries == nil {
		entries = []Remembered{}
	}
	data, err = json.MarshalIndent(storeFile{Version: storeVersion, Entries: entries}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode permissions store: %w", err)
	}
	if err := atomicfile.WriteFile(s.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write permissions store: %w", err)
	}
	return nil
}
