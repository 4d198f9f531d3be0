package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"acpd/files"
)

// extensionDirs are the existing directories whose changes change the
// session's custom commands, skills or sub-agents: each source directory,
// its subdirectories (namespaced commands, one directory per skill) and
// its parent (to see a source directory appear). Each parent is listed
// once, which tells which of its sources exist; only those are listed.
func (s *sess) extensionDirs() []string {
	src := s.sources()
	sources := make([]string, 0, len(src.cmds)+len(src.skills)+len(src.agents))
	for _, c := range src.cmds {
		sources = append(sources, c.Dir)
	}
	sources = append(append(sources, src.skills...), src.agents...)
	// A session has a dozen sources or so: slices, not maps (this runs at
	// every session/new).
	var out []string
	listed := make([]string, 0, len(sources)) // parents and sources looked at
	for i, src := range sources {
		parent := filepath.Dir(src)
		if slices.Contains(listed, parent) {
			continue
		}
		listed = append(listed, parent)
		entries, err := os.ReadDir(parent)
		if err != nil {
			continue
		}
		out = append(out, parent)
		for _, sib := range sources[i:] {
			if filepath.Dir(sib) != parent || slices.Contains(listed, sib) {
				continue
			}
			listed = append(listed, sib)
			if !isDirEntry(parent, entries, filepath.Base(sib)) {
				continue
			}
			out = append(out, sib)
			subs, _ := os.ReadDir(sib)
			for _, e := range subs {
				if e.IsDir() {
					out = append(out, filepath.Join(sib, e.Name()))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// isDirEntry reports whether entries (of dir, sorted by name) hold name
// as a directory, or as a link to one.
func isDirEntry(dir string, entries []os.DirEntry, name string) bool {
	i, ok := slices.BinarySearchFunc(entries, name, func(e os.DirEntry, n string) int { return strings.Compare(e.Name(), n) })
	if !ok {
		return false
	}
	if e := entries[i]; e.IsDir() || e.Type()&os.ModeSymlink == 0 {
		return e.IsDir()
	}
	fi, err := os.Stat(filepath.Join(dir, name))
	return err == nil && fi.IsDir()
}

// watchExtensions starts the session's watch of its extension
// directories (through the process's one watcher), once the session is
// open: a changed command, skill or sub-agent file updates the editor's
// command list at once, not at the next prompt. Without any such
// directory, or without a watcher, the files are read at every prompt
// only. The watch is closed with the session.
func (s *sess) watchExtensions() {
	dirs := s.extensionDirs()
	if len(dirs) == 0 {
		return
	}
	w, err := files.WatchDirs(dirs, func() {
		s.refreshCommands(s.a.baseContext())
		s.mu.Lock()
		w := s.extWatch
		s.mu.Unlock()
		if w == nil {
			return
		}
		if err := w.Set(s.extensionDirs()); err != nil {
			s.a.log.Debug("extension watch", "session", s.id, "err", err)
		}
	})
	if err != nil {
		s.a.log.Debug("extension files are read at each prompt only", "session", s.id, "err", err)
		return
	}
	s.mu.Lock()
	closed := s.extClosed
	if !closed {
		s.extWatch = w
	}
	s.mu.Unlock()
	if closed {
		// The session closed while the watch started.
		_ = w.Close()
	}
}
