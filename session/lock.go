package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"acpd/internal/filelock"
)

// LockedError reports that a session is open (locked) elsewhere: in another
// process, or through another Log in this process.
type LockedError struct {
	// ID is the session id.
	ID string
	// PID is the process id of the holder, 0 when unknown (the holder has
	// not written its details yet or they are unreadable).
	PID int
	// Holder describes the holder for humans, e.g.
	// "acpd pid 1234 (since 2025-01-02T03:04:05Z)".
	Holder string
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("session %s is open in %s", e.ID, e.Holder)
}

// holderInfo is what a lock holder writes into its lock file.
type holderInfo struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host,omitempty"`
	Argv0 string    `json:"argv0,omitempty"`
	Since time.Time `json:"since"`
}

func (h holderInfo) String() string {
	name := filepath.Base(h.Argv0)
	if h.Argv0 == "" {
		name = "process"
	}
	s := fmt.Sprintf("%s pid %d", name, h.PID)
	if host, _ := os.Hostname(); h.Host != "" && h.Host != host {
		s += " on " + h.Host
	}
	if !h.Since.IsZero() {
		s += " (since " + h.Since.Format(time.RFC3339) + ")"
	}
	return s
}

func selfHolder() holderInfo {
	host, _ := os.Hostname()
	argv0 := ""
	if len(os.Args) > 0 {
		argv0 = os.Args[0]
	}
	return holderInfo{PID: os.Getpid(), Host: host, Argv0: argv0, Since: time.Now().UTC().Truncate(time.Second)}
}

// lockedBy builds the LockedError for id from the contents of a lock file.
func lockedBy(id string, f *os.File) *LockedError {
	e := &LockedError{ID: id, Holder: "another process"}
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 4096))
	if err != nil {
		return e
	}
	var h holderInfo
	if json.Unmarshal(b, &h) != nil || h.PID <= 0 {
		return e
	}
	e.PID = h.PID
	e.Holder = h.String()
	return e
}

// inProcess tracks sessions open in this process, keyed by lock file path,
// because a second Open in the same process must be refused with a helpful
// error however the directory is named.
var inProcess struct {
	mu   sync.Mutex
	held map[string]holderInfo
}

// claim registers path as held by this process, or returns a LockedError.
func claim(id, path string) (holderInfo, error) {
	inProcess.mu.Lock()
	defer inProcess.mu.Unlock()
	if h, ok := inProcess.held[path]; ok {
		return h, &LockedError{ID: id, PID: h.PID, Holder: h.String()}
	}
	if inProcess.held == nil {
		inProcess.held = make(map[string]holderInfo)
	}
	h := selfHolder()
	inProcess.held[path] = h
	return h, nil
}

// heldHere returns the in-process holder of path, if any.
func heldHere(path string) (holderInfo, bool) {
	inProcess.mu.Lock()
	defer inProcess.mu.Unlock()
	h, ok := inProcess.held[path]
	return h, ok
}

func unclaim(path string) {
	inProcess.mu.Lock()
	delete(inProcess.held, path)
	inProcess.mu.Unlock()
}

// lockFile opens (creating if needed) the lock file at path, the lock of
// session id, and takes an exclusive lock on it without blocking (flock,
// LockFileEx on Windows; see internal/filelock). On success
// the returned file holds the lock until it is closed (or the process dies).
// When the file is held elsewhere, it returns a *LockedError naming the holder
// recorded in the file.
//
// Lock files may be unlinked by their holder (Delete), so after locking it
// checks that path still names the locked inode and retries otherwise.
func lockFile(path, id string) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		ok, err := filelock.TryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("session: lock %s: %w", path, err)
		}
		if !ok {
			err := lockedBy(id, f)
			f.Close()
			return nil, err
		}
		fi, err1 := f.Stat()
		pi, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(fi, pi) {
			return f, nil
		}
		f.Close()
		if attempt >= 100 {
			return nil, fmt.Errorf("session: lock file %s keeps disappearing", path)
		}
	}
}

// writeHolder records h in the held lock file f.
func writeHolder(f *os.File, h holderInfo) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteAt(append(b, '\n'), 0)
	return err
}

// lockIndexTimeout bounds how long an index operation waits for the index
// lock. Holders keep it for one read-modify-write, so hitting this means a
// holder is stuck (e.g. stopped); failing beats hanging forever.
const lockIndexTimeout = 30 * time.Second

// lockWait takes an exclusive lock on the file at path, waiting for at
// most lockIndexTimeout, or until ctx ends.
func lockWait(ctx context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := filelock.Poll(ctx, lockIndexTimeout, func() (bool, error) { return filelock.TryLock(f) }); err != nil {
		f.Close()
		if errors.Is(err, filelock.ErrTimeout) {
			return nil, fmt.Errorf("session: %s still locked after %v", path, lockIndexTimeout)
		}
		return nil, fmt.Errorf("session: lock %s: %w", path, err)
	}
	return f, nil
}

// liveWait bounds how long holdLive waits for a log's liveness lock.
const liveWait = time.Second

// holdLive takes the exclusive liveness lock on f, the open log of session
// id whose session lock the caller holds (warning when it cannot). The
// lock lasts until f is closed, which Log does before releasing the session
// lock. Only probes (Store.Holder) compete for it, each holding a shared lock
// for two system calls, so it waits for at most liveWait (or until the
// store's context ends). Not getting it leaves the session open but
// reported as not open by probes: the session lock alone decides who may
// open a session.
func (s *Store) holdLive(f *os.File, id string) {
	if err := filelock.Poll(s.ctx, liveWait, func() (bool, error) { return filelock.TryLock(f) }); err != nil {
		s.logger.Warn("session: liveness lock not taken; listings may show the session as not open", "id", id, "err", err)
	}
}

// probeHolder reports who holds the session whose lock file is lockPath and
// log is logPath, or nil when nobody does as far as it can tell. It never
// touches the session lock (see Store.Holder).
func probeHolder(id, lockPath, logPath string) *LockedError {
	// A holder writes its record before taking the liveness lock and clears
	// it after dropping that lock (or removes the file in Delete), so an
	// empty or missing record means not held, without opening anything.
	if fi, err := os.Stat(lockPath); err != nil || fi.Size() == 0 {
		return nil
	}
	f, err := os.Open(logPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	free, err := filelock.TryLockShared(f)
	if err != nil {
		return nil
	}
	if free {
		_ = filelock.Unlock(f) // at once: a holder-to-be waits for it
		return nil
	}
	lf, err := os.Open(lockPath)
	if err != nil {
		return &LockedError{ID: id, Holder: "another process"}
	}
	defer lf.Close()
	e := lockedBy(id, lf)
	if e.PID == 0 {
		// The holder writes its record before the liveness lock and
		// clears it only after dropping that lock: a record empty now
		// means the holder closed the session since the lock was seen.
		if fi, err := lf.Stat(); err == nil && fi.Size() == 0 {
			return nil
		}
	}
	return e
}
