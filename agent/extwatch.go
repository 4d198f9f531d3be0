package agent

import (
	"os"
	"path/filepath"
	"slices"

	"acpd/agent/internal/skills"
	"acpd/agent/internal/subagents"
	"acpd/agent/internal/usercmd"
	"acpd/config"
	"acpd/files"
)

// extensionDirs are the existing directories whose changes change the
// session's custom commands, skills or sub-agents: each source directory,
// its subdirectories (namespaced commands, one directory per skill) and
// its parent (to see a source directory appear).
func (s *sess) extensionDirs() []string {
	getenv := s.a.getenv
	home := getenv("HOME")
	if home == "" {
		home = getenv("USERPROFILE")
	}
	root, cfgDir := config.ProjectRoot(s.cwd), config.UserDir(getenv)
	var sources []string
	for _, src := range usercmd.Sources(root, cfgDir, home, getenv) {
		sources = append(sources, src.Dir)
	}
	sources = append(sources, skills.Sources(root, cfgDir, home, codexHome(getenv, home))...)
	sources = append(sources, subagents.Sources(root, cfgDir, home)...)
	seen := map[string]bool{}
	var out []string
	add := func(d string) {
		if d == "" || seen[d] {
			return
		}
		seen[d] = true
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out = append(out, d)
		}
	}
	for _, src := range sources {
		add(filepath.Dir(src))
		add(src)
		entries, _ := os.ReadDir(src)
		for _, e := range entries {
			if e.IsDir() {
				add(filepath.Join(src, e.Name()))
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
