package agent

import (
	"os"
	"path/filepath"
	"slices"

	"acpd/files"
)

// extensionDirs are the existing directories whose changes change the
// session's custom commands, skills or sub-agents: each source directory,
// its subdirectories (namespaced commands, one directory per skill) and
// its parent (to see a source directory appear).
func (s *sess) extensionDirs() []string {
	src := s.sources()
	sources := make([]string, 0, len(src.cmds)+len(src.skills)+len(src.agents))
	for _, c := range src.cmds {
		sources = append(sources, c.Dir)
	}
	sources = append(append(sources, src.skills...), src.agents...)
	seen := make(map[string]bool, 2*len(sources)) // in out, or not a directory
	listed := make(map[string]bool, len(sources))
	var out []string
	for _, src := range sources {
		if d := filepath.Dir(src); !seen[d] {
			seen[d] = true
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				out = append(out, d)
			}
		}
		if listed[src] {
			continue
		}
		listed[src] = true
		// Listing the source tells that it is a directory (an error: it
		// is not one, or is missing) and names its subdirectories.
		entries, err := os.ReadDir(src)
		if err != nil {
			continue
		}
		if !seen[src] {
			seen[src] = true
			out = append(out, src)
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			if d := filepath.Join(src, e.Name()); !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	slices.Sort(out)
	return out
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
