package fs

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
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

// watchDir makes sure dir is watched. Directories are watched rather than
// files because editors save by renaming a temp file over the original.
// Adding is idempotent and repeated on every use, so a directory that was
// deleted and recreated (its watch died with the old inode) is watched
// again as soon as the agent touches a file in it. A failure (such as the
// inotify watch limit) is logged once per directory.
func (b *Broker) watchDir(dir string) {
	b.mu.Lock()
	closed := b.w == nil || b.closed
	b.mu.Unlock()
	if closed {
		return
	}
	err := b.w.Add(dir)
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

// watchLoop is the watcher goroutine (owned by the Broker, ended by Close).
// Events for tracked files mark them pending; watchDebounce after the first
// pending event each pending file is hashed and, if it no longer matches the
// agent's view, invalidated and reported by ChangedSince. The pending set is
// bounded by the number of tracked files.
func (b *Broker) watchLoop() {
	pending := make(map[string]struct{})
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	armed := false
	arm := func() {
		if !armed && len(pending) > 0 {
			timer.Reset(watchDebounce)
			armed = true
		}
	}
	for {
		select {
		case <-b.ctx.Done():
			return
		case ev, ok := <-b.w.Events:
			if !ok {
				return
			}
			b.onEvent(ev, pending)
			arm()
		case err, ok := <-b.w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				b.log.Warn("fs: watcher queue overflowed; rechecking all tracked files")
				b.addAllTracked(pending)
				arm()
			} else {
				b.log.Warn("fs: watcher error", "err", err)
			}
		case <-timer.C:
			armed = false
			for key := range pending {
				if !b.checkTracked(b.ctx, key) {
					delete(pending, key)
				}
			}
			arm()
		}
	}
}

// onEvent marks the event's file pending if the agent has a view of it.
func (b *Broker) onEvent(ev fsnotify.Event, pending map[string]struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.entries[ev.Name]; e != nil && e.known {
		pending[ev.Name] = struct{}{}
	}
}

func (b *Broker) addAllTracked(pending map[string]struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
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
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
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
