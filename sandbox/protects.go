package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Protects reports whether a command sandboxed by p cannot write path (an
// absolute path; symbolic links in its existing part are resolved), and
// why, in a sentence that names the protected path: for a git directory it
// says that git commands that write must run outside the sandbox. It is
// the signal for callers that decide whether to ask for a command to run
// outside the sandbox (a `git commit` needs it), and for the notes that
// explain a failure. With mode Off nothing is protected.
func (p Policy) Protects(path string) (why string, ok bool) {
	why, _ = p.protects(path)
	return why, why != ""
}

// protects is Protects; named is true when path is in a protected or
// hidden path (not merely outside the writable trees).
func (p Policy) protects(path string) (why string, named bool) {
	if p.Mode == Off || !filepath.IsAbs(path) {
		return "", false
	}
	pl, err := p.resolve()
	if err != nil {
		return "", false
	}
	return p.protectsIn(pl, path)
}

// protectsIn is protects against pl, p resolved.
func (p Policy) protectsIn(pl plan, path string) (why string, named bool) {
	path = resolveExisting(path)
	for _, h := range pl.hidden {
		if within(path, h) {
			return fmt.Sprintf("%s is hidden from sandboxed commands (acpd's own configuration and state)", h), true
		}
	}
	for _, r := range pl.readOnly {
		if !within(path, r) {
			continue
		}
		switch {
		case isGitPath(r):
			return fmt.Sprintf("the git directory %s is read-only inside the sandbox: git commands that write (add, commit, checkout, fetch …) must run outside the sandbox, with the user's approval", r), true
		case filepath.Base(r) == ".acpd":
			return fmt.Sprintf("acpd's project configuration %s is read-only inside the sandbox", r), true
		default:
			return fmt.Sprintf("%s is protected (read-only) inside the sandbox", r), true
		}
	}
	if p.Mode == ReadOnly || p.Mode == "" {
		return "the sandbox is read-only: commands write nowhere", false
	}
	if !slices.ContainsFunc(pl.writable, func(w string) bool { return within(path, w) }) {
		return fmt.Sprintf("%s is outside the places sandboxed commands may write (%s)", path, strings.Join(pl.writable, ", ")), false
	}
	return "", false
}

// isGitPath reports whether r, a protected path, belongs to git: a .git
// (file or directory) or something below one.
func isGitPath(r string) bool {
	return slices.Contains(strings.Split(r, string(filepath.Separator)), ".git")
}

// resolveExisting resolves the symbolic links of the longest existing
// prefix of the absolute path p and appends the rest.
func resolveExisting(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		} else if !errors.Is(err, os.ErrNotExist) && !isNotDir(err) {
			return filepath.Join(p, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// refusals are the errors a write into a protected path ends with: the
// read-only mounts' EROFS, Landlock's EACCES, EBUSY for a mount point.
var refusals = []string{"Read-only file system", "Permission denied", "Operation not permitted", "Device or resource busy"}

// Explain returns a note for the output of a command that failed inside
// the sandbox (run in dir) when a line of it reports a refused write to a
// path p protects ("" when none does): e.g. that the git directory is
// read-only and git commands that write must run outside the sandbox. The
// note is derived from the paths the output names, checked with
// Protects, so a command cannot make it claim a path it does not name
// is protected; it is advice for the model and the user, never a reason to
// loosen anything.
func (p Policy) Explain(output, dir string) string {
	if p.Mode == Off {
		return ""
	}
	var pl *plan // resolved once, on the first refusal
	for line := range strings.Lines(output) {
		if !slices.ContainsFunc(refusals, func(r string) bool { return strings.Contains(line, r) }) {
			continue
		}
		for _, tok := range strings.FieldsFunc(line, func(r rune) bool {
			return r == ' ' || r == '\t' || r == '\'' || r == '"' || r == '`' || r == '\n' || r == '\r'
		}) {
			tok = strings.TrimRight(tok, ":,;.)")
			tok = strings.TrimLeft(tok, "(")
			if tok == "" || (!strings.Contains(tok, string(filepath.Separator)) && tok != ".git" && tok != ".acpd") {
				continue
			}
			if !filepath.IsAbs(tok) {
				if dir == "" {
					continue
				}
				tok = filepath.Join(dir, tok)
			}
			if pl == nil {
				r, err := p.resolve()
				if err != nil {
					return ""
				}
				pl = &r
			}
			if why, named := p.protectsIn(*pl, tok); named {
				return "[sandbox: " + why + "]"
			}
		}
	}
	return ""
}

// ProtectedGitDir returns the git directory of the repository dir (an
// absolute path) is in, when sandboxed commands cannot write it: git
// commands that write (add, commit, checkout, fetch, stash …) run in dir
// would fail inside the sandbox, so a caller can ask to run them outside
// it up front. For a linked worktree it is the worktree's git directory
// (the common directory is protected too). ok is false when dir is in no
// repository or its git directory is writable (mode Off, or a .git the
// sandbox could not protect).
func (p Policy) ProtectedGitDir(dir string) (gitDirectory string, ok bool) {
	if p.Mode == Off || !filepath.IsAbs(dir) {
		return "", false
	}
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			gd := gitDir(filepath.Join(d, ".git"))
			if gd == "" {
				return "", false
			}
			if _, named := p.protects(filepath.Join(gd, "index.lock")); named {
				return gd, true
			}
			if p.Mode == ReadOnly {
				return gd, true
			}
			return "", false
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}
