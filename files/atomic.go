package files

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"acpd/internal/atomicfile"
)

const (
	// tempMarker separates a temp file's target name from its owner tag:
	// temp files are named ".<name>.acpd-tmp-<pid>-<random>".
	tempMarker = ".acpd-tmp-"
	// maxTempBase bounds the part of the target name copied into the temp
	// name, so that the temp name stays within NAME_MAX.
	maxTempBase = 120
	// staleTempAge is how old a temp file must be before it is swept when
	// its creator cannot be identified or checked (foreign name format,
	// platform without a liveness check, process alive but possibly a
	// recycled pid).
	staleTempAge = 10 * time.Minute
)

// inflight holds the names of temp files this process is writing right now;
// the sweep never touches them.
var inflight = struct {
	sync.Mutex
	names map[string]struct{}
}{names: make(map[string]struct{})}

// WriteFileAtomic replaces the content of path with data so that a crash at
// any moment leaves either the old or the new content, never a mix:
//
//  1. stale temp files in the directory are swept (see below);
//  2. data goes to a new temp file ".<name>.acpd-tmp-<pid>-<random>" in the
//     same directory, which is fsynced;
//  3. the temp file gets the existing file's mode (permission bits and
//     setuid/setgid/sticky) and, best effort, its owner; a new file gets
//     perm minus the umask;
//  4. the temp file is renamed over path (on Windows retried briefly while
//     another process holds the target open) and the directory is fsynced
//     (see internal/atomicfile, which this builds on).
//
// If path is a symlink, its target is written (the link stays a link). An
// existing file this process may not open for writing is refused with a
// permission error, as an in-place write would be.
// Parent directories are not created. Hard links to the old file keep the
// old content: the rename gives path a new inode.
//
// All operations after the directory is opened are performed relative to
// that directory (an [os.Root]), so the temp file and the rename stay in the
// directory that was opened even if a path component is swapped meanwhile.
//
// Sweep rule: a file in the directory whose name starts with "." and
// contains ".acpd-tmp-" is removed unless this process is writing it right
// now, or its name carries the pid of another live process (on platforms
// without a liveness check, or for names without a pid: unless it is younger
// than ten minutes). A writer killed mid-write therefore leaves at most one
// temp file, which the next write in the same directory removes. Sweep
// errors are ignored.
//
// WriteFileAtomic is safe for concurrent use; concurrent writers of the same
// path race, and the last rename wins.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	if strings.IndexByte(path, 0) >= 0 {
		return &fs.PathError{Op: "write", Path: path, Err: ErrNULInPath}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if abs, err = filepath.EvalSymlinks(abs); err != nil {
			return err
		}
	}
	dir, name := filepath.Split(abs)
	if name == "" {
		return &fs.PathError{Op: "write", Path: path, Err: errors.New("no file name")}
	}
	d, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := writeInDir(d, name, data, perm); err != nil {
		return addPath(err, abs)
	}
	return nil
}

// holdInflight records name as in flight, so that sweeps leave it alone,
// until the returned func is called.
func holdInflight(name string) (release func()) {
	inflight.Lock()
	inflight.names[name] = struct{}{}
	inflight.Unlock()
	return func() {
		inflight.Lock()
		delete(inflight.names, name)
		inflight.Unlock()
	}
}

// addPath makes errors from os.Root operations (which name only the
// component) mention the full path.
func addPath(err error, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: path, Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &fs.PathError{Op: le.Op, Path: path, Err: le.Err}
	}
	return fmt.Errorf("%s: %w", path, err)
}

// writeInDir performs the atomic write of the single-component name inside
// the directory d. See WriteFileAtomic.
func writeInDir(d *os.Root, name string, data []byte, perm os.FileMode) (err error) {
	sweepTemps(d)

	var old os.FileInfo
	if fi, err := d.Lstat(name); err == nil {
		switch {
		case fi.Mode().IsRegular():
			old = fi
			// Respect write permission like an in-place write would: the
			// rename only needs a writable directory, which would let a
			// read-only file be replaced.
			if err := checkWritable(d, name, fi); err != nil {
				return err
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			// A symlink appeared after the caller resolved the path: the
			// rename replaces the link itself, inside this directory.
		default:
			return &fs.PathError{Op: "write", Path: name, Err: errors.New("not a regular file")}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}

	tmp := tempName(name)
	defer holdInflight(tmp)()

	createPerm := perm
	if old != nil {
		createPerm = 0o600 // widened to the old mode once the content is in
	}
	f, err := d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, createPerm)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				f.Close()
			}
			d.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if old != nil {
		matchOwner(f, old) // before Chmod: chown clears setuid/setgid
		if err = f.Chmod(old.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
			return err
		}
	}
	closed = true
	if err = f.Close(); err != nil {
		return err
	}
	if err = atomicfile.RetryRename(func() error { return d.Rename(tmp, name) }); err != nil {
		return err
	}
	return atomicfile.SyncRoot(d)
}

// tempName returns a fresh temp file name for the target name.
func tempName(name string) string {
	base := name
	if len(base) > maxTempBase {
		cut := maxTempBase
		for cut > 0 && !utf8.RuneStart(base[cut]) {
			cut--
		}
		base = base[:cut]
	}
	var rnd [8]byte
	rand.Read(rnd[:]) // never fails (crypto/rand, Go ≥ 1.24)
	return "." + base + tempMarker + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(rnd[:])
}

// sweepTemps removes the stale temp files in d (see WriteFileAtomic).
func sweepTemps(d *os.Root) {
	dir, err := d.Open(".")
	if err != nil {
		return
	}
	var stale []string
	for {
		ents, err := dir.ReadDir(256)
		for _, e := range ents {
			if isStaleTemp(e) {
				stale = append(stale, e.Name())
			}
		}
		if err != nil || len(ents) == 0 {
			break
		}
	}
	dir.Close()
	for _, n := range stale {
		d.Remove(n) // unlinkat: removes the entry itself, never a link target
	}
}

// isStaleTemp applies the sweep rule to one directory entry.
func isStaleTemp(e fs.DirEntry) bool {
	n := e.Name()
	i := strings.LastIndex(n, tempMarker)
	if !strings.HasPrefix(n, ".") || i < 1 || !e.Type().IsRegular() {
		return false
	}
	inflight.Lock()
	_, busy := inflight.names[n]
	inflight.Unlock()
	if busy {
		return false
	}
	if pidStr, _, ok := strings.Cut(n[i+len(tempMarker):], "-"); ok {
		if pid, err := strconv.Atoi(pidStr); err == nil && pid > 0 {
			if pid == os.Getpid() {
				return true // ours, and not in flight: a failed cleanup
			}
			if alive, known := processAlive(pid); known && !alive {
				return true
			}
		}
	}
	info, err := e.Info()
	return err == nil && time.Since(info.ModTime()) > staleTempAge
}
