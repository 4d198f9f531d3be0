package checkpoint

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// MaxScan caps the files a [Store.Scan] looks at.
const MaxScan = 20000

// MaxScanBytes bounds the store's blobs while a [Store.Scan] keeps
// contents: half of [MaxSession], so that snapshots never leave the
// turns' own changes without room.
const MaxScanBytes = MaxSession / 2

// Snapshot is the state of the regular files under some roots, as a
// [Store.Scan] saw them (their contents kept within the store's limits).
type Snapshot struct {
	files map[string]scanned
	// Capped: the scan stopped at MaxScan files; files past them are
	// not in the snapshot.
	Capped bool
}

type scanned struct {
	size  int64
	mtime time.Time
	mode  fs.FileMode
	st    State
}

// Len is the number of files in the snapshot.
func (s *Snapshot) Len() int { return len(s.files) }

// ScanOptions configures [Store.Scan].
type ScanOptions struct {
	// Roots are the absolute directories scanned.
	Roots []string
	// SkipNames are directory names not entered (".git").
	SkipNames []string
	// Skip are absolute directories not entered.
	Skip []string
	// Prev, when not nil, is an earlier snapshot: a file whose size,
	// modification time and mode are the same is taken as unchanged and
	// not read again.
	Prev *Snapshot
	// Limit caps the files scanned (0: MaxScan).
	Limit int
}

// Scan walks the roots (symbolic links are not followed) and keeps the
// content of every regular file it finds, deduplicated, within the
// store's limits (a file past them is in the snapshot with State.Lost
// set). Files that cannot be read are left out.
func (s *Store) Scan(ctx context.Context, o ScanOptions) (*Snapshot, error) {
	limit := o.Limit
	if limit <= 0 {
		limit = MaxScan
	}
	snap := &Snapshot{files: map[string]scanned{}}
	errStop := errors.New("stop")
	for _, root := range o.Roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == root {
					return err
				}
				return nil // unreadable: left out
			}
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if d.IsDir() {
				if p != root && (slices.Contains(o.SkipNames, d.Name()) || slices.Contains(o.Skip, p)) {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if _, dup := snap.files[p]; dup {
				return nil // nested roots
			}
			if len(snap.files) >= limit {
				snap.Capped = true
				return errStop
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			f := scanned{size: fi.Size(), mtime: fi.ModTime(), mode: fi.Mode()}
			if o.Prev != nil {
				if old, ok := o.Prev.files[p]; ok && old.size == f.size && old.mtime.Equal(f.mtime) && old.mode == f.mode {
					f.st = old.st
					snap.files[p] = f
					return nil
				}
			}
			st, err := s.keepFile(p, fi.Size())
			if err != nil {
				if errors.Is(err, errUnreadable) {
					return nil
				}
				return err
			}
			f.st = st
			snap.files[p] = f
			return nil
		})
		if errors.Is(err, errStop) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return snap, nil
}

var errUnreadable = errors.New("unreadable")

// keepFile keeps the content of the file at p.
func (s *Store) keepFile(p string, size int64) (State, error) {
	if size > MaxFile {
		return State{Exists: true, Size: size, Lost: tooLarge(size)}, nil
	}
	f, err := os.Open(p)
	if err != nil {
		return State{}, errUnreadable
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return State{}, errUnreadable
	}
	if len(data) > MaxFile {
		return State{Exists: true, Size: int64(len(data)), Lost: tooLarge(int64(len(data)))}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keepWithin(Content{Exists: true, Data: data}, MaxScanBytes, false)
}

// Change is one file that differs between two snapshots.
type Change struct {
	Path          string
	Before, After State
}

// Diff returns the files that differ between before and after, sorted by
// path: changed, removed, and (unless before was capped, where a file
// past the cap would look new) created.
func Diff(before, after *Snapshot) []Change {
	var out []Change
	for p, b := range before.files {
		a, ok := after.files[p]
		switch {
		case !ok:
			if !after.Capped {
				out = append(out, Change{Path: p, Before: b.st, After: State{}})
			}
		case a.st.Hash != b.st.Hash || a.st.Size != b.st.Size || a.st.Lost != b.st.Lost:
			out = append(out, Change{Path: p, Before: b.st, After: a.st})
		}
	}
	if !before.Capped {
		for p, a := range after.files {
			if _, ok := before.files[p]; !ok {
				out = append(out, Change{Path: p, Before: State{}, After: a.st})
			}
		}
	}
	slices.SortFunc(out, func(x, y Change) int { return strings.Compare(x.Path, y.Path) })
	return out
}

// Record records changes as turn's: each file's state before (unless the
// turn already changed it) and after. The records are durable when it
// returns.
func (s *Store) Record(turnID int64, changes []Change) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var hashes []string
	for _, c := range changes {
		hashes = append(hashes, c.Before.Hash)
	}
	if err := s.syncBlobsLocked(hashes); err != nil {
		return errors.Join(errors.New("checkpoint: keeping the previous content"), err)
	}
	for _, c := range changes {
		if t := s.turns[turnID]; t == nil || t.byPath[c.Path] == nil {
			b := c.Before
			if err := s.appendLocked(record{Op: "before", Turn: turnID, Path: c.Path, State: &b}, false); err != nil {
				return err
			}
		}
		a := c.After
		a.Lost = ""
		if err := s.appendLocked(record{Op: "after", Turn: turnID, Path: c.Path, State: &a}, false); err != nil {
			return err
		}
	}
	if len(changes) == 0 {
		return nil
	}
	if err := s.j.Sync(); err != nil {
		return errors.Join(errors.New("checkpoint: journal"), err)
	}
	return nil
}
