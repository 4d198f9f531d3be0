package files

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// MaxFileSize is the largest file [Broker.ReadFile] and [Broker.WriteFile]
// load into memory (WriteFile loads the previous content for the stale
// check and the diff). [Broker.ReadLines] has no size limit.
const MaxFileSize = 64 << 20

var (
	// ErrSymlinkEscape is returned for a path that is lexically under a
	// session root but whose real location is outside every root (an
	// in-root symlink points out). Such a path is never followed out of
	// its root; once access to the outside location was approved, use the
	// real path ([Resolved.Path]).
	ErrSymlinkEscape = errors.New("path lies under a session root but a symlink leads outside the roots; use the real path")
	// ErrTooLarge is returned when a file exceeds [MaxFileSize].
	ErrTooLarge = fmt.Errorf("file is larger than %d MiB; read it in windows of lines", MaxFileSize>>20)
	// ErrNotRegular is returned for directories, devices, FIFOs and sockets.
	ErrNotRegular = errors.New("not a regular file")
)

// StaleError is returned by [Broker.WriteFile] when the agent's view of an
// existing file is missing or out of date. Nothing was written.
type StaleError struct {
	Path   string // real path of the file
	Reason string // why the agent's view is stale
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("%s: %s; read the file again before writing it", e.Path, e.Reason)
}

// Editor is the editor's file channel, implemented by the agent on top of
// ACP fs/read_text_file and fs/write_text_file. Paths are absolute real
// paths. line is 1-based; nil line/limit mean "from the start" / "to the
// end". Implementations must be safe for concurrent use and must return
// promptly once ctx is done. A read of a missing file may fail with any
// error: the broker then asks the disk whether the file exists.
//
// An error for a file the editor does not serve (ACP's "resource not
// found") matches [ErrNotInEditor]: for a file outside the roots the
// broker then uses the disk, under the same rules as without an editor.
type Editor interface {
	ReadTextFile(ctx context.Context, path string, line, limit *int) (string, error)
	WriteTextFile(ctx context.Context, path, content string) error
}

// ErrNotInEditor is the editor's answer for a file it does not serve (Zed
// answers so for paths outside its worktrees).
var ErrNotInEditor = errors.New("the editor does not serve this file")

// edReadFile reads the whole file through the editor; a file outside the
// roots that the editor does not serve is read from disk (the tool call
// that reads it was authorised as an outside read).
func (b *Broker) edReadFile(ctx context.Context, res Resolved) (string, error) {
	content, err := b.ed.ReadTextFile(ctx, res.Path, nil, nil)
	if err != nil && !res.Inside() && ctx.Err() == nil && errors.Is(err, ErrNotInEditor) {
		data, derr := b.readDisk(ctx, res)
		if derr != nil {
			return "", derr
		}
		return string(data), nil
	}
	return content, err
}

// edWriteFile writes the file through the editor; a file outside the roots
// that the editor does not serve is written on disk.
//
// The editor opens the path itself, so the broker checks its parent
// directories (as writeDisk opens them: no symbolic link, no protected
// directory unless expected) before the request and again after it: a
// change in between means the editor may have written elsewhere, which is
// reported as an error wrapping ErrPathChanged and logged.
func (b *Broker) edWriteFile(ctx context.Context, res Resolved, content string, expectProtected bool) error {
	before, err := b.parentChain(res, expectProtected)
	if err != nil {
		return err
	}
	err = b.ed.WriteTextFile(ctx, res.Path, content)
	if err != nil && !res.Inside() && ctx.Err() == nil && errors.Is(err, ErrNotInEditor) {
		return b.writeDisk(res, []byte(content), expectProtected)
	}
	after, cerr := b.parentChain(res, expectProtected)
	if cerr == nil && !sameChain(before, after) {
		cerr = fmt.Errorf("%w: %s", ErrPathChanged, filepath.Dir(res.Path))
	}
	if cerr != nil {
		b.log.Warn("a directory of a file the editor wrote changed during the write; the editor may have written elsewhere", "path", res.Path, "err", cerr)
		return &fs.PathError{Op: "write", Path: res.Path, Err: fmt.Errorf("the editor wrote the file, but %w", cerr)}
	}
	return err
}

// BrokerOptions configures [NewBroker].
type BrokerOptions struct {
	// Roots confines the session's paths (required).
	Roots *Roots
	// Editor is the editor's file channel; nil means disk only.
	Editor Editor
	// CanEditorRead and CanEditorWrite mirror the client's fs.readTextFile
	// and fs.writeTextFile capabilities; they are ignored when Editor is
	// nil. Mixing channels (editor writes, disk reads) works only if the
	// editor saves what it is sent to disk.
	CanEditorRead, CanEditorWrite bool
	// Logger receives warnings (watcher failures); nil means slog.Default().
	Logger *slog.Logger
	// Protected are absolute directories (acpd's configuration and state)
	// and ProtectedNames directory names (".git") that a write must not
	// reach unless the path the caller passed names them: the caller's
	// permission decision was made on that path. See [ErrPathChanged].
	Protected      []string
	ProtectedNames []string
}

// Broker reads and writes files for one session: through the editor when it
// offers fs/* (so the agent sees unsaved buffers and the editor sees its
// edits), on disk otherwise. It enforces confinement at I/O time (see the
// package documentation), protects against stale writes and watches the
// directories of the files the agent touched.
//
// The permission decision is the caller's: Broker methods access any path
// they are given, except that they never follow a path lexically under a
// root out of the roots ([ErrSymlinkEscape]).
//
// A Broker is safe for concurrent use; operations on the same real path are
// serialized. It owns one watcher goroutine, stopped by Close. Its memory
// grows by a small record per distinct file touched, for the session's life.
type Broker struct {
	roots           *Roots
	ed              Editor
	edRead, edWrite bool
	log             *slog.Logger
	guard           guard

	mu      sync.Mutex
	entries map[string]*entry   // by real path; entries are never removed
	changed map[string]struct{} // reported by the watcher, drained by ChangedSince
	// watchFailed holds directories the watcher refused (logged once);
	// bounded by the number of directories touched.
	watchFailed map[string]struct{}
	closed      bool

	hook     Hook                // see SetHook
	pending  map[string]struct{} // tracked files with events, checked by watchLoop
	watchOff bool                // the shared watcher could not be created

	// watchMu orders subscriptions to the shared watcher (watchHub) with
	// Close; watching is set once the watch goroutine runs.
	watchMu  sync.Mutex
	watching bool
	kick     chan struct{} // wakes watchLoop (capacity 1)

	ctx       context.Context // cancelled by Close; bounds watcher I/O
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// entry is the broker's state for one real path.
type entry struct {
	// lock (capacity 1) serializes I/O on the path so that a write and the
	// recording of its hash are atomic with respect to other operations and
	// to the watcher's checks. Acquired with a context.
	lock chan struct{}
	// Guarded by Broker.mu:
	hash     [sha256.Size]byte // content the agent last read or wrote
	known    bool              // hash is valid
	external bool              // the watcher saw the file change since
}

func (e *entry) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case e.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *entry) tryAcquire() bool {
	select {
	case e.lock <- struct{}{}:
		return true
	default:
		return false
	}
}

func (e *entry) release() { <-e.lock }

// NewBroker returns a broker for opts. It panics if opts.Roots is nil.
// Brokers share one file watcher per process, created on first use (see
// watchDir). The caller must Close the broker.
func NewBroker(opts BrokerOptions) *Broker {
	if opts.Roots == nil {
		panic("files.NewBroker: nil Roots")
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	b := &Broker{
		roots:       opts.Roots,
		ed:          opts.Editor,
		edRead:      opts.Editor != nil && opts.CanEditorRead,
		edWrite:     opts.Editor != nil && opts.CanEditorWrite,
		log:         logger,
		entries:     make(map[string]*entry),
		changed:     make(map[string]struct{}),
		watchFailed: make(map[string]struct{}),
		pending:     make(map[string]struct{}),
		kick:        make(chan struct{}, 1),
		guard:       newGuard(opts.ProtectedNames, opts.Protected, opts.Roots),
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b
}

// Change is a file's content before or after the broker changes it.
type Change struct {
	// Path is the file's real path.
	Path string
	// Exists is false for a file about to be created, or just removed.
	Exists  bool
	Content []byte
	// TooLarge: the file exists but is larger than MaxFileSize, so
	// Content is nil; Size is its size.
	TooLarge bool
	Size     int64
}

// Hook is told of every change the broker makes to a file (writes, edits,
// removals, restores), with the file's lock held: BeforeChange with the
// content about to be replaced, before anything is written (an error
// aborts the change and is returned to the caller), AfterChange once the
// change succeeded. Neither may call back into the Broker.
type Hook interface {
	BeforeChange(ctx context.Context, c Change) error
	AfterChange(c Change)
}

// SetHook makes h the broker's hook (nil: none).
func (b *Broker) SetHook(h Hook) {
	b.mu.Lock()
	b.hook = h
	b.mu.Unlock()
}

func (b *Broker) currentHook() Hook {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hook
}

// beforeChange tells the hook what is about to change.
func (b *Broker) beforeChange(ctx context.Context, h Hook, c Change) error {
	if h == nil {
		return nil
	}
	if err := h.BeforeChange(ctx, c); err != nil {
		return &fs.PathError{Op: "write", Path: c.Path, Err: err}
	}
	return nil
}

// Roots returns the roots the broker confines paths to.
func (b *Broker) Roots() *Roots { return b.roots }

// OpenTree opens, for reading and walking, the tree that holds res: an
// [os.Root] at res's root when res is inside one, so that nothing reached
// through it (symbolic links included) leaves that root; else at res's
// parent directory. rel names res in the root's file system (root.FS()),
// "." for the root itself. The caller closes root.
func (b *Broker) OpenTree(res Resolved) (root *os.Root, rel string, err error) {
	dir, rel := res.Root, res.Rel
	if dir == "" {
		dir, rel = filepath.Dir(res.Path), filepath.Base(res.Path)
		if dir == res.Path {
			rel = "."
		}
	}
	root, err = os.OpenRoot(dir)
	return root, filepath.ToSlash(rel), err
}

// Close stops the watcher and waits for its goroutine. Reads and writes keep
// working afterwards, unwatched. Close is idempotent.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		b.cancel()
		b.watchMu.Lock()
		b.closeErr = watchHub.remove(b)
		b.watchMu.Unlock()
		b.wg.Wait()
	})
	return b.closeErr
}

// ReadFile returns the whole content of the text file at path (at most
// [MaxFileSize] bytes on disk), through the editor when it can read (the
// editor's buffer, saved or not) and from disk otherwise, and records its
// hash as the agent's view of the file.
func (b *Broker) ReadFile(ctx context.Context, path string) (string, error) {
	res, err := b.resolve(path)
	if err != nil {
		return "", err
	}
	e := b.entry(res.Path)
	if err := e.acquire(ctx); err != nil {
		return "", err
	}
	defer e.release()
	var content string
	if b.edRead {
		if content, err = b.edReadFile(ctx, res); err != nil {
			return "", err
		}
	} else {
		data, err := b.readDisk(ctx, res)
		if err != nil {
			return "", err
		}
		content = string(data)
	}
	b.record(res.Path, e, sha256.Sum256([]byte(content)))
	return content, nil
}

// ReadLines returns limit lines (DefaultLineLimit when limit <= 0) starting
// at the 1-based line offset (values below 1 mean 1). An offset beyond the
// end yields no lines and no error. Lines longer than MaxLineLength are cut,
// so the result holds at most about limit*MaxLineLength bytes.
//
// On disk the file is streamed: memory stays bounded by the window whatever
// the file size. The stream still runs to the end of the file, to count its
// lines and to compute its SHA-256, which is recorded as the agent's view so
// that a later WriteFile's stale check works after a partial read.
//
// Through the editor the whole buffer is requested (fs/read_text_file
// without line/limit) and windowed here: one request, TotalLines known, and
// the recorded hash covers exactly the content the window was cut from. Two
// requests (window, then whole file for the hash) could observe two
// versions and record a hash of content the agent never saw.
func (b *Broker) ReadLines(ctx context.Context, path string, offset, limit int) (Lines, error) {
	offset = max(offset, 1)
	if limit <= 0 {
		limit = DefaultLineLimit
	}
	res, err := b.resolve(path)
	if err != nil {
		return Lines{}, err
	}
	e := b.entry(res.Path)
	if err := e.acquire(ctx); err != nil {
		return Lines{}, err
	}
	defer e.release()
	var (
		lines Lines
		sum   [sha256.Size]byte
	)
	if b.edRead {
		content, err := b.edReadFile(ctx, res)
		if err != nil {
			return Lines{}, err
		}
		if lines, err = scanLines(strings.NewReader(content), offset, limit); err != nil {
			return Lines{}, err
		}
		sum = sha256.Sum256([]byte(content))
	} else {
		f, _, err := b.openRead(res)
		if err != nil {
			return Lines{}, err
		}
		defer f.Close()
		h := sha256.New()
		if lines, err = scanLines(io.TeeReader(ctxReader{ctx, f}, h), offset, limit); err != nil {
			return Lines{}, addPath(err, res.Path)
		}
		h.Sum(sum[:0])
	}
	b.record(res.Path, e, sum)
	return lines, nil
}

// WriteFile replaces the content of the file at path, through the editor
// when it can write and atomically on disk otherwise (see WriteFileAtomic;
// missing parent directories are created, new files get mode 0644 minus the
// umask). It returns the previous content and whether the file existed.
//
// Stale-write protection: if the file exists, its current content is read
// through the read channel (the editor if it can read, else disk) and must
// hash to what the agent last read or wrote, and the watcher must not have
// seen it change meanwhile; otherwise nothing is written and the error is a
// [*StaleError] asking the model to read the file again. An existing file
// the agent never read is stale too. After a successful write the new
// content's hash is recorded, so consecutive writes need no re-read.
func (b *Broker) WriteFile(ctx context.Context, path, content string) (prev string, existed bool, err error) {
	res, err := b.resolve(path)
	if err != nil {
		return "", false, err
	}
	if res.Rel == "." {
		return "", false, &fs.PathError{Op: "write", Path: res.Path, Err: syscall.EISDIR}
	}
	if err := b.guard.redirected(path, res); err != nil {
		return "", false, err
	}
	expect := b.guard.expectProtected(path)
	e := b.entry(res.Path)
	if err := e.acquire(ctx); err != nil {
		return "", false, err
	}
	defer e.release()

	prev, existed, err = b.current(ctx, res)
	if err != nil {
		return "", false, err
	}
	if existed {
		if err := b.checkStale(res.Path, e, sha256.Sum256([]byte(prev))); err != nil {
			return "", true, err
		}
	}
	if err := ctx.Err(); err != nil {
		return "", existed, err
	}
	h := b.currentHook()
	if err := b.beforeChange(ctx, h, Change{Path: res.Path, Exists: existed, Content: []byte(prev)}); err != nil {
		return "", existed, err
	}
	if b.edWrite {
		err = b.edWriteFile(ctx, res, content, expect)
	} else {
		err = b.writeDisk(res, []byte(content), expect)
	}
	if err != nil {
		return "", existed, err
	}
	b.record(res.Path, e, sha256.Sum256([]byte(content)))
	if h != nil {
		h.AfterChange(Change{Path: res.Path, Exists: true, Content: []byte(content)})
	}
	return prev, existed, nil
}

// EditFile applies edit to the current content of the existing file path
// and writes the result, under the same stale-write protection as
// [Broker.WriteFile]: the file must be unchanged since the agent last read or
// wrote it. edit runs with the file's lock held and must not call back into
// the Broker; an error from edit aborts the write and is returned as is.
func (b *Broker) EditFile(ctx context.Context, path string, edit func(old string) (string, error)) (prev, next string, err error) {
	res, err := b.resolve(path)
	if err != nil {
		return "", "", err
	}
	if err := b.guard.redirected(path, res); err != nil {
		return "", "", err
	}
	expect := b.guard.expectProtected(path)
	e := b.entry(res.Path)
	if err := e.acquire(ctx); err != nil {
		return "", "", err
	}
	defer e.release()
	prev, existed, err := b.current(ctx, res)
	if err != nil {
		return "", "", err
	}
	if !existed {
		return "", "", &fs.PathError{Op: "edit", Path: res.Path, Err: fs.ErrNotExist}
	}
	if err := b.checkStale(res.Path, e, sha256.Sum256([]byte(prev))); err != nil {
		return "", "", err
	}
	next, err = edit(prev)
	if err != nil {
		return prev, "", err
	}
	if err := ctx.Err(); err != nil {
		return prev, "", err
	}
	h := b.currentHook()
	if err := b.beforeChange(ctx, h, Change{Path: res.Path, Exists: true, Content: []byte(prev)}); err != nil {
		return prev, "", err
	}
	if b.edWrite {
		err = b.edWriteFile(ctx, res, next, expect)
	} else {
		err = b.writeDisk(res, []byte(next), expect)
	}
	if err != nil {
		return prev, "", err
	}
	b.record(res.Path, e, sha256.Sum256([]byte(next)))
	if h != nil {
		h.AfterChange(Change{Path: res.Path, Exists: true, Content: []byte(next)})
	}
	return prev, next, nil
}

// Forget drops the agent's recorded view of path (and any pending change
// notice for it): the next WriteFile of the existing file is stale until
// the agent reads it again.
func (b *Broker) Forget(path string) {
	key := path
	if res, err := b.roots.Resolve(path); err == nil {
		key = res.Path
	} else if filepath.IsAbs(path) {
		key = filepath.Clean(path)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.entries[key]; e != nil {
		e.known, e.external = false, false
	}
	delete(b.changed, key)
}

// ChangedSince returns, sorted, the real paths of files the agent had read
// or written that the watcher saw change outside the agent since the
// previous call, and resets the set. A path is reported once per change
// until the agent reads it again; files re-read since the change are not
// reported. The set is bounded by the number of tracked files.
func (b *Broker) ChangedSince() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.changed) == 0 {
		return nil
	}
	out := make([]string, 0, len(b.changed))
	for p := range b.changed {
		out = append(out, p)
	}
	clear(b.changed)
	slices.Sort(out)
	return out
}

// resolve resolves path and refuses to follow a path lexically under a
// root out of the roots.
func (b *Broker) resolve(p string) (Resolved, error) {
	res, err := b.roots.Resolve(p)
	if err != nil {
		return Resolved{}, err
	}
	if !res.Inside() && b.roots.lexicallyUnder(p) {
		return Resolved{}, &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("%w (%s)", ErrSymlinkEscape, res.Path)}
	}
	return res, nil
}

func (b *Broker) entry(key string) *entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[key]
	if e == nil {
		e = &entry{lock: make(chan struct{}, 1)}
		b.entries[key] = e
	}
	return e
}

// record stores sum as the agent's view of key and watches its directory.
// The caller holds e's lock.
func (b *Broker) record(key string, e *entry, sum [sha256.Size]byte) {
	b.mu.Lock()
	e.hash, e.known, e.external = sum, true, false
	delete(b.changed, key)
	b.mu.Unlock()
	b.watchDir(filepath.Dir(key))
}

// checkStale compares the hash of the current content with the agent's
// view. The caller holds e's lock.
func (b *Broker) checkStale(key string, e *entry, cur [sha256.Size]byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case e.known && e.hash == cur:
		return nil
	case e.known:
		return &StaleError{Path: key, Reason: "the file has changed since it was last read"}
	case e.external:
		return &StaleError{Path: key, Reason: "the file was modified outside the agent since it was last read"}
	default:
		return &StaleError{Path: key, Reason: "the file exists but has not been read in this session"}
	}
}

// current reads the file's current content through the read channel.
// existed is false (and err nil) when the file does not exist.
func (b *Broker) current(ctx context.Context, res Resolved) (content string, existed bool, err error) {
	if b.edRead {
		content, err := b.edReadFile(ctx, res)
		if err == nil {
			return content, true, nil
		}
		if ctx.Err() != nil {
			return "", false, err
		}
		// Editors report a missing file as a plain JSON-RPC error; ask the
		// disk. Anything but "does not exist" keeps the editor's error.
		if _, serr := b.lstat(res); errors.Is(serr, fs.ErrNotExist) {
			return "", false, nil
		}
		return "", false, err
	}
	data, err := b.readDisk(ctx, res)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(data), true, nil
}

// openRead opens the regular file res for reading: through os.Root when it
// is inside a root, directly otherwise.
func (b *Broker) openRead(res Resolved) (*os.File, os.FileInfo, error) {
	var (
		f   *os.File
		err error
	)
	if res.Inside() {
		var root *os.Root
		if root, err = os.OpenRoot(res.Root); err != nil {
			return nil, nil, err
		}
		f, err = root.OpenFile(filepath.FromSlash(res.Rel), os.O_RDONLY|openNonblock, 0)
		root.Close()
		if err != nil {
			return nil, nil, addPath(err, res.Path)
		}
	} else if f, err = openReadOnly(res.Path); err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: res.Path, Err: ErrNotRegular}
	}
	return f, fi, nil
}

// readDisk reads the whole regular file res, at most MaxFileSize bytes.
func (b *Broker) readDisk(ctx context.Context, res Resolved) ([]byte, error) {
	f, fi, err := b.openRead(res)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > MaxFileSize {
		return nil, &fs.PathError{Op: "read", Path: res.Path, Err: ErrTooLarge}
	}
	data, err := io.ReadAll(io.LimitReader(ctxReader{ctx, f}, MaxFileSize+1))
	if err != nil {
		return nil, addPath(err, res.Path)
	}
	if len(data) > MaxFileSize {
		return nil, &fs.PathError{Op: "read", Path: res.Path, Err: ErrTooLarge}
	}
	return data, nil
}

// lstat stats res without following a final symlink, through os.Root when
// inside a root.
func (b *Broker) lstat(res Resolved) (os.FileInfo, error) {
	if !res.Inside() {
		return os.Lstat(res.Path)
	}
	root, err := os.OpenRoot(res.Root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.Lstat(filepath.FromSlash(res.Rel))
}

// writeDisk writes data atomically to res, creating missing parent
// directories. The parent directory is opened one component at a time
// without following symbolic links (guard.openParent), from res's root
// when it is inside one, else from the file system's root, and every step
// after it (temp file, rename) happens relative to that directory: the
// write lands in the directory res named, or nowhere. Unless
// expectProtected, a parent that is (or lies in) a protected directory is
// refused with ErrPathChanged.
func (b *Broker) writeDisk(res Resolved, data []byte, expectProtected bool) error {
	d, name, err := b.openWriteDir(res, true, expectProtected)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := writeInDir(d, name, data, 0o644); err != nil {
		return addPath(err, res.Path)
	}
	return nil
}

// openWriteDir opens res's parent directory for a write or removal (see
// writeDisk) and returns it with the file's name in it.
func (b *Broker) openWriteDir(res Resolved, create, expectProtected bool) (*os.Root, string, error) {
	t, ok := targetOf(res)
	if !ok {
		dir := filepath.Dir(res.Path)
		if create {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, "", err
			}
		}
		d, err := os.OpenRoot(dir)
		return d, filepath.Base(res.Path), err
	}
	d, err := b.guard.openParent(t, create, expectProtected, b.guard.protectedNow())
	if err != nil {
		return nil, "", addPath(err, res.Path)
	}
	return d, t.name, nil
}

// parentChain returns the identities of res's existing parent directories,
// opened as writeDisk opens them (nothing is created); a missing directory
// ends the chain.
func (b *Broker) parentChain(res Resolved, expectProtected bool) ([]os.FileInfo, error) {
	t, ok := targetOf(res)
	if !ok {
		return nil, nil
	}
	var chain []os.FileInfo
	dirs := strings.Split(t.dir, "/")
	if t.dir == "." {
		dirs = nil
	}
	prot := b.guard.protectedNow()
	for i := 0; i <= len(dirs); i++ {
		sub := t
		sub.dir = strings.Join(dirs[:i], "/")
		if i == 0 {
			sub.dir = "."
		}
		d, err := b.guard.openParent(sub, false, expectProtected, prot)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return nil, addPath(err, res.Path)
		}
		fi, err := d.Stat(".")
		d.Close()
		if err != nil {
			return nil, err
		}
		chain = append(chain, fi)
	}
	return chain, nil
}

// sameChain reports whether the directories of before are still those of
// after (after may go deeper: the editor created directories).
func sameChain(before, after []os.FileInfo) bool {
	if len(after) < len(before) {
		return false
	}
	for i := range before {
		if !os.SameFile(before[i], after[i]) {
			return false
		}
	}
	return true
}

// Remove removes the file at path (not a directory's contents) from disk,
// opening its parent directory as writes do (no symbolic link in it, no
// protected directory the path does not name), and forgets the agent's
// view of it.
func (b *Broker) Remove(ctx context.Context, path string) error {
	res, err := b.resolve(path)
	if err != nil {
		return err
	}
	if res.Rel == "." {
		return &fs.PathError{Op: "remove", Path: res.Path, Err: syscall.EISDIR}
	}
	if err := b.guard.redirected(path, res); err != nil {
		return err
	}
	e := b.entry(res.Path)
	if err := e.acquire(ctx); err != nil {
		return err
	}
	defer e.release()
	d, name, err := b.openWriteDir(res, false, b.guard.expectProtected(path))
	if err != nil {
		return err
	}
	defer d.Close()
	h := b.currentHook()
	if h != nil {
		c, err := b.diskChange(ctx, res)
		if err != nil {
			return err
		}
		if err := b.beforeChange(ctx, h, c); err != nil {
			return err
		}
	}
	if err := d.Remove(name); err != nil {
		return addPath(err, res.Path)
	}
	b.mu.Lock()
	e.known, e.external = false, false
	delete(b.changed, res.Path)
	b.mu.Unlock()
	if h != nil {
		h.AfterChange(Change{Path: res.Path})
	}
	return nil
}

// diskChange reads res from disk as a Change (a missing file does not
// exist; one larger than MaxFileSize is TooLarge).
func (b *Broker) diskChange(ctx context.Context, res Resolved) (Change, error) {
	data, err := b.readDisk(ctx, res)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Change{Path: res.Path}, nil
	case errors.Is(err, ErrTooLarge):
		fi, serr := b.lstat(res)
		if serr != nil {
			return Change{}, serr
		}
		return Change{Path: res.Path, Exists: true, TooLarge: true, Size: fi.Size()}, nil
	case err != nil:
		return Change{}, err
	}
	return Change{Path: res.Path, Exists: true, Content: data}, nil
}

// Current returns the file's current content through the read channel
// (the editor's buffer when it can read), without recording it as the
// agent's view.
func (b *Broker) Current(ctx context.Context, path string) (Change, error) {
	res, err := b.resolve(path)
	if err != nil {
		return Change{}, err
	}
	if b.edRead {
		content, existed, err := b.current(ctx, res)
		if err != nil {
			return Change{}, err
		}
		return Change{Path: res.Path, Exists: existed, Content: []byte(content)}, nil
	}
	return b.diskChange(ctx, res)
}

// Restore makes the file at path hold content (exists false: removes it),
// without the stale-write check: it is the user's decision to put back an
// earlier version (see package checkpoint). The hook is told as for any
// change, and the new content becomes the agent's view.
func (b *Broker) Restore(ctx context.Context, path string, content []byte, exists bool) error {
	res, err := b.resolve(path)
	if err != nil {
		return err
	}
	if res.Rel == "." {
		return &fs.PathError{Op: "write", Path: res.Path, Err: syscall.EISDIR}
	}
	if err := b.guard.redirected(path, res); err != nil {
		return err
	}
	expect := b.guard.expectProtected(path)
	e := b.entry(res.Path)
	if err := e.acquire(ctx); err != nil {
		return err
	}
	defer e.release()
	h := b.currentHook()
	if h != nil {
		c, err := b.diskChange(ctx, res)
		if err != nil {
			return err
		}
		if err := b.beforeChange(ctx, h, c); err != nil {
			return err
		}
	}
	if !exists {
		d, name, err := b.openWriteDir(res, false, expect)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		defer d.Close()
		if err := d.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return addPath(err, res.Path)
		}
		b.mu.Lock()
		e.known, e.external = false, false
		delete(b.changed, res.Path)
		b.mu.Unlock()
	} else {
		if b.edWrite {
			err = b.edWriteFile(ctx, res, string(content), expect)
		} else {
			err = b.writeDisk(res, content, expect)
		}
		if err != nil {
			return err
		}
		b.record(res.Path, e, sha256.Sum256(content))
	}
	if h != nil {
		h.AfterChange(Change{Path: res.Path, Exists: exists, Content: content})
	}
	return nil
}
