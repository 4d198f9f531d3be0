package sandbox

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxGitFile bounds what gitPaths reads of a .git file, a commondir file,
// a config file or .gitmodules.
const maxGitFile = 1 << 20

// gitPaths returns, for the path dotgit (a root's .git, existing or not),
// every path through which git run later outside the sandbox would take
// code or configuration: the .git itself (a directory, or the file of a
// linked worktree or submodule), the git directory a `gitdir:` file points
// to, the common directory its `commondir` names, the submodules' .git
// files listed in .gitmodules (with their own git directories), and the
// files the repository's configuration includes or names as hooks
// directory. Paths are absolute and cleaned, not yet resolved; missing ones
// are included only for dotgit itself. It never fails: what it cannot read
// it leaves out.
func gitPaths(dotgit string) []string {
	out := []string{dotgit}
	seen := map[string]bool{dotgit: true}
	add := func(p string) {
		p = filepath.Clean(p)
		if !seen[p] {
			if _, err := os.Lstat(p); err == nil {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	worktree := filepath.Dir(dotgit)
	var gitDirs []string
	var visit func(dotgit string, depth int)
	visit = func(dotgit string, depth int) {
		if depth > 4 {
			return
		}
		gd := gitDir(dotgit)
		if gd == "" {
			return
		}
		add(gd)
		gitDirs = append(gitDirs, gd)
		if cd := commonDir(gd); cd != "" {
			add(cd)
			gitDirs = append(gitDirs, cd)
		}
		// Submodules: git status looks into each one's .git.
		for _, sub := range submodulePaths(filepath.Join(filepath.Dir(dotgit), ".gitmodules")) {
			sg := filepath.Join(filepath.Dir(dotgit), sub, ".git")
			add(sg)
			visit(sg, depth+1)
		}
	}
	visit(dotgit, 0)
	for _, gd := range gitDirs {
		for _, cfg := range []string{"config", "config.worktree"} {
			for _, p := range configPaths(filepath.Join(gd, cfg), worktree) {
				add(p)
			}
		}
	}
	return out
}

// Bounds of nestedGits' search.
const (
	maxNestedDepth = 4
	maxNestedDirs  = 20000
)

// nestedGits returns the .git entries (directories or files) found below
// root, breadth first (shallow repositories first), at most maxNestedDepth
// levels down and looking at no more than maxNestedDirs directories: the
// repositories inside a session root (a home folder holding projects, a
// monorepo with vendored clones) whose git the user runs later. It does
// not descend into .git directories or node_modules (thousands of
// directories, and package managers strip .git) or follow symbolic links.
// Repositories beyond the bounds are not found (the package documentation
// says so).
func nestedGits(root string) []string {
	var found []string
	level := []string{root}
	seen := 0
	for depth := 1; depth <= maxNestedDepth && len(level) > 0; depth++ {
		var next []string
		for _, dir := range level {
			if seen++; seen > maxNestedDirs {
				return found
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			for _, e := range ents {
				p := filepath.Join(dir, e.Name())
				if e.Name() == ".git" {
					if dir != root {
						found = append(found, p)
					}
					continue
				}
				if e.IsDir() && e.Name() != "node_modules" {
					next = append(next, p)
				}
			}
		}
		level = next
	}
	return found
}

// gitDir returns the git directory of dotgit: dotgit itself when it is a
// directory, the target of its `gitdir:` line when it is a file, "" when
// neither.
func gitDir(dotgit string) string {
	fi, err := os.Stat(dotgit)
	if err != nil {
		return ""
	}
	if fi.IsDir() {
		return dotgit
	}
	b := readSmall(dotgit)
	line, _, _ := bytes.Cut(b, []byte("\n"))
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(line)), "gitdir:")
	if !ok {
		return ""
	}
	return relTo(filepath.Dir(dotgit), strings.TrimSpace(rest))
}

// commonDir returns the directory gd's `commondir` file names, or "".
func commonDir(gd string) string {
	b := bytes.TrimSpace(readSmall(filepath.Join(gd, "commondir")))
	if len(b) == 0 {
		return ""
	}
	return relTo(gd, string(b))
}

// submodulePaths returns the `path` values of a .gitmodules file.
func submodulePaths(file string) []string {
	var out []string
	for _, e := range configEntries(readSmall(file)) {
		sec, key, val := e.sec, e.key, e.val
		if strings.HasPrefix(sec, "submodule") && key == "path" && val != "" && !filepath.IsAbs(val) && !strings.Contains(val, "..") {
			out = append(out, val)
		}
	}
	return out
}

// configPaths returns the files a git config file takes code or more
// configuration from: include.path and includeIf.*.path (relative to the
// file), core.hooksPath (relative to the work tree), and the program that
// core.fsmonitor, core.sshCommand and diff/filter drivers name when that
// is a path.
func configPaths(file, worktree string) []string {
	var out []string
	home, _ := os.UserHomeDir()
	expand := func(base, v string) string {
		if rest, ok := strings.CutPrefix(v, "~/"); ok && home != "" {
			return filepath.Join(home, rest)
		}
		return relTo(base, v)
	}
	for _, e := range configEntries(readSmall(file)) {
		sec, key, val := e.sec, e.key, e.val
		if val == "" {
			continue
		}
		switch {
		case key == "path" && (sec == "include" || strings.HasPrefix(sec, "includeif")):
			out = append(out, expand(filepath.Dir(file), val))
		case sec == "core" && key == "hookspath":
			out = append(out, expand(worktree, val))
		case sec == "core" && (key == "fsmonitor" || key == "sshcommand"),
			strings.HasPrefix(sec, "diff") && (key == "textconv" || key == "command"),
			strings.HasPrefix(sec, "filter") && (key == "clean" || key == "smudge" || key == "process"):
			prog, _, _ := strings.Cut(val, " ")
			if strings.Contains(prog, "/") {
				out = append(out, expand(worktree, prog))
			}
		}
	}
	return out
}

// configEntry is one `key = value` of a git config file.
type configEntry struct{ sec, key, val string }

// configEntries returns (section, key, value) of a git config file, section
// and key lower-cased (a subsection's name kept after the section name:
// `submodule "x"` is `submodule "x"`); values unquoted only of their outer
// quotes. It is a reader for paths, not a full git config parser.
func configEntries(b []byte) []configEntry {
	var out []configEntry
	sec := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), maxGitFile)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			name := line[1:end]
			head, sub, hasSub := strings.Cut(name, " ")
			sec = strings.ToLower(head)
			if hasSub {
				sec += " " + strings.TrimSpace(sub)
			}
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if dot := strings.LastIndexByte(k, '.'); dot >= 0 { // [a] b.c = (not git syntax, be lenient)
			k = k[dot+1:]
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		out = append(out, configEntry{sec, k, v})
	}
	return out
}

// readSmall reads at most maxGitFile bytes of a regular file (nil for
// anything else: a FIFO is never waited on).
func readSmall(path string) []byte {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(f, maxGitFile))
	return b
}

// relTo is p made absolute against base.
func relTo(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}
