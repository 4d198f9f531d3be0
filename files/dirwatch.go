package files

import (
	"context"
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
// no inotify instance of its own. After a burst of events onChange runs
// once, on the DirWatch's goroutine (owned by the DirWatch, ended by
// Close), never concurrently with itself. An overflow of the watcher's
// queue is reported as a change. Its methods are safe for concurrent use.
type DirWatch struct {
	onChange func()
	kick     chan struct{}
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup

	mu      sync.Mutex // orders Set and Close with the hub
	dirs    []string   // every directory watched
	started bool       // the first Set is done
	done    bool
}

// WatchDirs starts watching dirs (see [DirWatch.Set]) and calls onChange
// after each burst of changes. It fails only when the process's watcher
// cannot be created (the inotify instance limit); the caller then works
// without (reading the files when it needs them).
func WatchDirs(dirs []string, onChange func()) (*DirWatch, error) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &DirWatch{onChange: onChange, kick: make(chan struct{}, 1), ctx: ctx, cancel: cancel}
	if err := w.Set(dirs); err != nil {
		cancel()
		return nil, err
	}
	w.wg.Go(w.loop)
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

// Close stops watching and waits for the goroutine (and a running
// onChange).
func (w *DirWatch) Close() error {
	w.mu.Lock()
	already := w.done
	w.done = true
	w.mu.Unlock()
	if already {
		return nil
	}
	err := watchHub.remove(w)
	w.cancel()
	w.wg.Wait()
	return err
}

// deliver is called by the hub for an event in a watched directory.
func (w *DirWatch) deliver(string) { w.poke() }

// watchError is called by the hub; an overflow may have hidden changes.
func (w *DirWatch) watchError(error) { w.poke() }

func (w *DirWatch) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *DirWatch) loop() {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	armed := false
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.kick:
			// The first event of a burst arms the timer: a directory that
			// changes continuously is reported once per debounce.
			if !armed {
				timer.Reset(dirWatchDebounce)
				armed = true
			}
		case <-timer.C:
			armed = false
			w.onChange()
		}
	}
}
