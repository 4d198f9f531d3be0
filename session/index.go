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
	b, err := os.ReadFile(s.indexPath())
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

// readIndex returns the index without taking the index lock (index.json is
// only ever replaced atomically). When it is missing or damaged, it is rebuilt
// under the lock.
func (s *Store) readIndex() (*indexFile, error) {
	idx, err := s.readIndexFile()
	if err == nil {
		return idx, nil
	}
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errIndexDamaged) {
		return nil, err
	}
	err = s.updateIndex(func(i *indexFile) (bool, error) {
		idx = i
		return false, nil
	})
	return idx, err
}

// updateIndex runs fn on the current index under the index lock (this
// process's mutex plus an exclusive flock on index.lock) and, when fn reports
// a change or the index had to be rebuilt, replaces index.json atomically.
// fn must not call back into the Store.
func (s *Store) updateIndex(fn func(*indexFile) (changed bool, err error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	lf, err := lockWait(s.indexLockPath())
	if err != nil {
		return err
	}
	defer lf.Close()

	rebuilt := false
	idx, err := s.readIndexFile()
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errIndexDamaged) {
			return err
		}
		if errors.Is(err, errIndexDamaged) {
			bad := s.indexPath() + ".corrupt"
			s.logger.Warn("session index damaged; rebuilding from logs", "path", s.indexPath(), "err", err, "keptAs", bad)
			if err := os.Rename(s.indexPath(), bad); err != nil {
				return fmt.Errorf("session: set aside damaged index: %w", err)
			}
		}
		idx, err = s.rebuild()
		if err != nil {
			return err
		}
		rebuilt = true
	}
	changed, err := fn(idx)
	if err != nil {
		return err
	}
	if !changed && !rebuilt {
		return nil
	}
	return s.writeIndex(idx)
}

// writeIndex atomically replaces index.json (see internal/atomicfile). The
// caller holds the index lock.
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
	return nil
}

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
