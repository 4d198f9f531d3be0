package files

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

const (
	// watchBuffer is the capacity of the watcher's event channel. When it is
	// full fsnotify stops draining the kernel queue; if that overflows, the
	// broker rechecks every tracked file (ErrEventOverflow).
	watchBuffer = 256
	// watchDebounce is how long events are collected before the files they
	// name are checked: a burst of events for a file (a save is often
	// create+write+chmod+rename) costs one hash check, and a file that
	// changes continuously is hashed at most once per watchDebounce.
	watchDebounce = 50 * time.Millisecond
)

// hub is the process's one file watcher, shared by every Broker: inotify
// instances are a per-user limit (128 by default) shared with the editor's
// own watchers, so a process must not take one per session. It is created
// when the first Broker watches a directory and closed when the last
// subscribed Broker closes. Its goroutine (owned by the hub, ended by
// closing the watcher) routes each event to the Brokers watching the
// event's directory. Lock order: Broker.watchMu, hub.opMu, hub.mu,
// Broker.mu.
//
// The watcher's Add, Remove and Close run under opMu, never under mu: on
// Windows fsnotify's Add waits for its reader goroutine, which may be
// blocked handing an error to loop, which needs mu.
type hub struct {
	opMu sync.Mutex // serialises the watcher's Add, Remove and Close
	mu   sync.Mutex
	w    *fsnotify.Watcher
	done chan struct{}                      // closed when w's goroutine has returned
	subs map[subscriber]struct{}            // brokers (and DirWatches) with a subscription
	dirs map[string]map[subscriber]struct{} // watched directory → its subscribers
}

// subscriber is what the hub delivers to: a Broker or a DirWatch. Both
// methods are called with hub.mu held and must not block.
type subscriber interface {
	deliver(name string)
	watchError(err error)
}

var watchHub hub

// errNoWatcher marks the failure to create the process's watcher (the
// inotify instance limit), as opposed to one directory's.
var errNoWatcher = errors.New("no file watcher")

// add subscribes b to dir, creating the watcher if needed, and (re-)adds the
// directory's watch.
func (h *hub) add(b subscriber, dir string) error {
	h.opMu.Lock()
	defer h.opMu.Unlock()
	h.mu.Lock()
	if h.w == nil {
		w, err := fsnotify.NewBufferedWatcher(watchBuffer)
		if err != nil {
			h.mu.Unlock()
			return fmt.Errorf("%w: %w", errNoWatcher, err)
		}
		h.w, h.done = w, make(chan struct{})
		h.subs = make(map[subscriber]struct{})
		h.dirs = make(map[string]map[subscriber]struct{})
		go h.loop(w, h.done)
	}
	h.subs[b] = struct{}{}
	bs := h.dirs[dir]
	if bs == nil {
		bs = make(map[subscriber]struct{})
		h.dirs[dir] = bs
	}
	bs[b] = struct{}{}
	w := h.w
	h.mu.Unlock()
	return w.Add(dir)
}

// remove drops every subscription of b, and the watcher itself with the
// last one (waiting for its goroutine).
func (h *hub) remove(b subscriber) error {
	h.opMu.Lock()
	defer h.opMu.Unlock()
	h.mu.Lock()
	if _, ok := h.subs[b]; !ok {
		h.mu.Unlock()
		return nil
	}
	delete(h.subs, b)
	var gone []string
	for dir, bs := range h.dirs {
		if _, ok := bs[b]; !ok {
			continue
		}
		delete(bs, b)
		if len(bs) == 0 {
			delete(h.dirs, dir)
			gone = append(gone, dir)
		}
	}
	w, done := h.w, h.done
	last := len(h.subs) == 0
	if last {
		h.w, h.done, h.subs, h.dirs = nil, nil, nil, nil
	}
	h.mu.Unlock()
	if !last {
		for _, dir := range gone {
			_ = w.Remove(dir) // fails when the directory is gone
		}
		return nil
	}
	err := w.Close()
	<-done
	return err
}

// loop routes w's events to the brokers watching their directories. A
// delivery never blocks: it marks the file pending in the broker and kicks
// the broker's goroutine, which does the (debounced) checks.
func (h *hub) loop(w *fsnotify.Watcher, done chan struct{}) {
	defer close(done)
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			h.mu.Lock()
			if h.w == w {
				for b := range h.dirs[filepath.Dir(ev.Name)] {
					b.deliver(ev.Name)
				}
			}
			h.mu.Unlock()
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			h.mu.Lock()
			if h.w == w {
				for b := range h.subs {
					b.watchError(err)
				}
			}
			h.mu.Unlock()
		}
	}
}

// watchDir makes sure dir is watched. Directories are watched rather than
// files because editors save by renaming a temp file over the original.
// Adding is idempotent and repeated on every use, so a directory that was
// deleted and recreated (its watch died with the old inode) is watched
// again as soon as the agent touches a file in it. A failure (such as the
// inotify watch limit) is logged once per directory; when the shared
// watcher itself cannot be created (the inotify instance limit), a warning
// is logged once per broker, which then works without watching: stale
// writes are still caught by content hash, but ChangedSince reports nothing.
func (b *Broker) watchDir(dir string) {
	b.watchMu.Lock()
	defer b.watchMu.Unlock()
	b.mu.Lock()
	off := b.closed || b.watchOff
	b.mu.Unlock()
	if off {
		return
	}
	err := watchHub.add(b, dir)
	var pathErr *os.PathError
	if err != nil && !errors.As(err, &pathErr) && !errors.Is(err, fsnotify.ErrClosed) {
		// The watcher could not be created.
		b.mu.Lock()
		b.watchOff = true
		b.mu.Unlock()
		b.log.Warn("fs: file watching unavailable; external changes are detected by content hash only", "err", err)
		return
	}
	if !b.watching {
		b.watching = true
		b.wg.Go(b.watchLoop)
	}
	if err == nil || errors.Is(err, fsnotify.ErrClosed) {
		return
	}
	b.mu.Lock()
	_, logged := b.watchFailed[dir]
	b.watchFailed[dir] = struct{}{}
	b.mu.Unlock()
	if !logged {
		b.log.Warn("fs: cannot watch directory; external changes there are detected by content hash only", "dir", dir, "err", err)
	}
}

// deliver marks name pending if the agent has a view of it and wakes the
// watch goroutine. Called by the hub.
func (b *Broker) deliver(name string) {
	b.mu.Lock()
	e := b.entries[name]
	mark := e != nil && e.known && !b.closed
	if mark {
		b.pending[name] = struct{}{}
	}
	b.mu.Unlock()
	if mark {
		b.kickLoop()
	}
}

// watchError handles a watcher error. Called by the hub.
func (b *Broker) watchError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		b.log.Warn("fs: watcher queue overflowed; rechecking all tracked files")
		b.mu.Lock()
		b.addAllTrackedLocked(b.pending)
		b.mu.Unlock()
		b.kickLoop()
		return
	}
	b.log.Warn("fs: watcher error", "err", err)
}

func (b *Broker) kickLoop() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// watchLoop is the broker's watch goroutine (owned by the Broker, started
// with its first watched directory, ended by Close). Events for tracked
// files mark them pending; watchDebounce after the first pending event each
// pending file is hashed and, if it no longer matches the agent's view,
// invalidated and reported by ChangedSince. The pending set is bounded by
// the number of tracked files.
func (b *Broker) watchLoop() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	armed := false
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-b.kick:
			if !armed {
				timer.Reset(watchDebounce)
				armed = true
			}
		case <-timer.C:
			armed = false
			b.mu.Lock()
			keys := make([]string, 0, len(b.pending))
			for key := range b.pending {
				keys = append(keys, key)
			}
			clear(b.pending)
			b.mu.Unlock()
			retry := false
			for _, key := range keys {
				if b.checkTracked(b.ctx, key) {
					retry = true
					b.mu.Lock()
					b.pending[key] = struct{}{}
					b.mu.Unlock()
				}
			}
			if retry {
				timer.Reset(watchDebounce)
				armed = true
			}
		}
	}
}

func (b *Broker) addAllTracked(pending map[string]struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.addAllTrackedLocked(pending)
}

func (b *Broker) addAllTrackedLocked(pending map[string]struct{}) {
	for key, e := range b.entries {
		if e.known {
			pending[key] = struct{}{}
		}
	}
}

// checkTracked compares the file on disk with the agent's view and
// invalidates the view if they differ. It reports whether the check must be
// retried because an operation on the file is in progress (its lock is
// held; the operation records its own result, and the retry then sees it).
func (b *Broker) checkTracked(ctx context.Context, key string) (retry bool) {
	b.mu.Lock()
	e := b.entries[key]
	b.mu.Unlock()
	if e == nil {
		return false
	}
	if !e.tryAcquire() {
		return true
	}
	defer e.release()
	b.mu.Lock()
	known, want := e.known, e.hash
	b.mu.Unlock()
	if !known {
		return false
	}
	have, err := hashFile(ctx, key)
	if ctx.Err() != nil {
		return false
	}
	if err == nil && have == want {
		return false // unchanged, or the change was our own write
	}
	// Changed, removed or unreadable: the agent's view is stale.
	b.mu.Lock()
	if e.known && e.hash == want {
		e.known, e.external = false, true
		b.changed[key] = struct{}{}
	}
	b.mu.Unlock()
	return false
}

// hashFile streams the regular file at path through SHA-256.
func hashFile(ctx context.Context, path string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := openReadOnly(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return sum, err
	}
	if !fi.Mode().IsRegular() {
		return sum, ErrNotRegular
	}
	h := sha256.New()
	if _, err := io.Copy(h, ctxReader{ctx, f}); err != nil {
		return sum, err
	}
	h.Sum(sum[:0])
	return sum, nil
}
