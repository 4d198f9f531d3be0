package files

import (
	"errors"
	"slices"
	"sync"
	"time"
)

// dirWatchDebounce is how long a DirWatch collects events before it
// reports a change: an editor's save (several events) or a checkout of
// many files is one change.
const dirWatchDebounce = 100 * time.Millisecond

// DirWatch reports changes to the entries of a set of directories (files
// created, written, renamed or removed directly in them) through the
// process's one file watcher, which it shares with every Broker: it takes
// no inotify instance of its own, and no goroutine while nothing changes.
// After a burst of events onChange runs once, on a goroutine of the
// debounce timer's (ended by Close, which waits for it), never
// concurrently with itself. An overflow of the watcher's queue is reported
// as a change. Its methods are safe for concurrent use.
type DirWatch struct {
	onChange func()

	mu      sync.Mutex // orders Set and Close with the hub
	dirs    []string   // every directory watched
	started bool       // the first Set is done
	done    bool

	// tmu guards the debounce below; it is a leaf (held for no other
	// lock), since the hub pokes with its own lock held.
	tmu     sync.Mutex
	armed   bool // a timer is set and has not fired yet
	running bool // onChange runs
	again   bool // a change came while it ran: set the timer once it returns
	closed  bool // Close began: no timer is set any more
	timer   *time.Timer
	pending sync.WaitGroup // a set timer, until its fire returns
}

// WatchDirs starts watching dirs (see [DirWatch.Set]) and calls onChange
// after each burst of changes. It fails only when the process's watcher
// cannot be created (the inotify instance limit); the caller then works
// without (reading the files when it needs them).
func WatchDirs(dirs []string, onChange func()) (*DirWatch, error) {
	w := &DirWatch{onChange: onChange}
	if err := w.Set(dirs); err != nil {
		return nil, err
	}
	return w, nil
}

// Set adds dirs to the watched directories (a directory once watched
// stays watched until Close; one that is gone reports nothing). A
// directory that does not exist (or cannot be watched) is skipped: watch
// its parent to see it appear, then Set again. Adding is idempotent, so
// Set after a change also re-arms a directory that was deleted and
// recreated. When Set adds a directory to a running watch, a change is
// reported once more after the debounce: what was written in the new
// directory before it was watched is seen. It returns an error only when
// the process's watcher cannot be created.
func (w *DirWatch) Set(dirs []string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return nil
	}
	added := false
	for _, d := range dirs {
		if err := watchHub.add(w, d); errors.Is(err, errNoWatcher) {
			return err
		}
		if !slices.Contains(w.dirs, d) {
			w.dirs = append(w.dirs, d)
			added = true
		}
	}
	if added && w.started {
		w.poke()
	}
	w.started = true
	return nil
}

// Close stops watching and waits for a running onChange; one that was
// due and had not started does not run. Close must not be called from
// onChange.
func (w *DirWatch) Close() error {
	w.mu.Lock()
	already := w.done
	w.done = true
	w.mu.Unlock()
	if already {
		return nil
	}
	err := watchHub.remove(w)
	w.tmu.Lock()
	w.closed = true
	if w.armed && w.timer.Stop() {
		// It will not fire: it no longer holds Close up.
		w.armed = false
		w.pending.Done()
	}
	w.tmu.Unlock()
	w.pending.Wait()
	return err
}

// deliver is called by the hub for an event in a watched directory.
func (w *DirWatch) deliver(string) { w.poke() }

// watchError is called by the hub; an overflow may have hidden changes.
func (w *DirWatch) watchError(error) { w.poke() }

// poke arms the debounce: the first event of a burst sets the timer, so a
// directory that changes continuously is reported once per debounce; an
// event while onChange runs sets it once onChange returns. It does not
// block. The caller holds no tmu.
func (w *DirWatch) poke() {
	w.tmu.Lock()
	defer w.tmu.Unlock()
	switch {
	case w.closed, w.armed:
	case w.running:
		w.again = true
	default:
		w.armLocked()
	}
}

func (w *DirWatch) armLocked() {
	w.armed = true
	w.pending.Add(1)
	w.timer = time.AfterFunc(dirWatchDebounce, w.fire)
}

// fire runs onChange for the burst that set the timer.
func (w *DirWatch) fire() {
	defer w.pending.Done()
	w.tmu.Lock()
	w.armed = false
	if w.closed {
		w.tmu.Unlock()
		return
	}
	w.running = true
	w.tmu.Unlock()
	w.onChange()
	w.tmu.Lock()
	w.running = false
	if w.again && !w.closed {
		w.again = false
		w.armLocked()
	}
	w.tmu.Unlock()
}
