package files

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// maxSymlinks bounds the number of symbolic links Resolve follows for one
// path (the same limit Linux applies to a whole path walk is 40; the larger
// value matches os.Root and filepath.EvalSymlinks).
const maxSymlinks = 255

// ErrNULInPath is returned by [Roots.Resolve] for paths containing a NUL byte.
var ErrNULInPath = errors.New("path contains a NUL byte")

// Roots confines paths to a session's roots: its working directory plus the
// additionalDirectories the client declared. A Roots is immutable after
// construction and safe for concurrent use.
type Roots struct {
	cwd   string
	roots []string // cwd first, then the additional roots, deduplicated
	// byLen holds the roots sorted longest first, so that the most specific
	// root wins when roots are nested.
	byLen []string
}

// NewRoots returns the roots cwd and additional. Every root must be an
// absolute path naming an existing directory; symlinks in it are resolved
// once here (filepath.EvalSymlinks), so later checks compare real paths.
// Duplicates are dropped.
func NewRoots(cwd string, additional ...string) (*Roots, error) {
	r := &Roots{}
	for i, p := range append([]string{cwd}, additional...) {
		real, err := resolveRoot(p)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			r.cwd = real
		}
		if !slices.Contains(r.roots, real) {
			r.roots = append(r.roots, real)
		}
	}
	r.byLen = slices.Clone(r.roots)
	slices.SortStableFunc(r.byLen, func(a, b string) int { return len(b) - len(a) })
	return r, nil
}

func resolveRoot(p string) (string, error) {
	if p == "" {
		return "", errors.New("fs: empty root path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("fs: root %q: %w", p, ErrNULInPath)
	}
	p, err := cleanInput(p)
	if err != nil {
		return "", fmt.Errorf("fs: root: %w", err)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("fs: root %q is not an absolute path", p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("fs: root: %w", err)
	}
	if real, err = cleanInput(real); err != nil {
		return "", fmt.Errorf("fs: root: %w", err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("fs: root: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("fs: root %q is not a directory", p)
	}
	return real, nil
}

// Cwd returns the session's working directory (symlinks resolved).
func (r *Roots) Cwd() string { return r.cwd }

// List returns all roots, the working directory first. The caller owns the
// returned slice.
func (r *Roots) List() []string { return slices.Clone(r.roots) }

// Resolved is the outcome of [Roots.Resolve].
type Resolved struct {
	// Path is the real absolute path: cleaned, symlinks in its existing
	// prefix resolved. Components that do not exist yet are kept as given.
	Path string
	// Root is the root containing Path, "" if Path is outside every root.
	// With nested roots the innermost one is reported.
	Root string
	// Rel is Path relative to Root, slash-separated ("." for the root
	// itself); "" when Root is "".
	Rel string
}

// Inside reports whether the real location is within one of the roots.
func (p Resolved) Inside() bool { return p.Root != "" }

// Resolve turns a tool path (absolute, or relative to the working directory)
// into its real absolute location. Symlinks are followed exactly as the
// kernel would: a ".." after a symlink applies to the link's target, an
// absolute link target restarts at "/". A not-yet-existing tail is allowed
// (so the result can name a file about to be created); once a component is
// missing, the rest is taken literally. Resolve never reports a path as
// inside because it is lexically under a root: a symlink in a root pointing
// outside makes the result outside.
//
// On Windows, junctions are followed like symlinks, existing components are
// compared as the filesystem spells them (case, 8.3 names), `\\?\` paths
// are accepted, UNC paths work like drive paths, and paths Windows would
// read differently from Resolve (C:x, \x, \\.\, names ending in a dot or
// space) are refused.
//
// Errors: empty path, NUL byte ([ErrNULInPath]), too many symlinks
// (ELOOP), and any Lstat/Readlink error other than "does not exist" or "not
// a directory" (for example permission denied).
func (r *Roots) Resolve(p string) (Resolved, error) {
	if p == "" {
		return Resolved{}, errors.New("empty path")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return Resolved{}, ErrNULInPath
	}
	cp, err := cleanInput(p)
	if err != nil {
		return Resolved{}, &iofs.PathError{Op: "resolve", Path: p, Err: err}
	}
	p = cp
	if !filepath.IsAbs(p) {
		p = r.cwd + string(filepath.Separator) + p
	}
	real, err := realPath(p)
	if err != nil {
		return Resolved{}, &iofs.PathError{Op: "resolve", Path: p, Err: err}
	}
	res := Resolved{Path: real}
	for _, root := range r.byLen {
		if rel, ok := within(root, real); ok {
			res.Root, res.Rel = root, rel
			break
		}
	}
	return res, nil
}

// lexicallyUnder reports whether p, taken literally (relative paths joined
// to the working directory), names something under a root, before or after
// lexical cleaning. Such a path must never be accessed outside the roots,
// whatever its symlinks resolve to. On Windows p is first brought into
// Resolve's form (separators, `\\?\`, the drive letter; a path Resolve
// refuses counts as under a root) and compared ignoring case, as the
// volumes compare names: another spelling of a root is still that root.
func (r *Roots) lexicallyUnder(p string) bool {
	p, err := cleanInput(p)
	if err != nil {
		return true
	}
	if !filepath.IsAbs(p) {
		return true // joined to cwd, which is a root
	}
	clean := filepath.Clean(p)
	for _, root := range r.roots {
		if hasPathPrefix(p, root) || hasPathPrefix(clean, root) {
			return true
		}
	}
	return false
}

// hasPathPrefix reports whether the path p, clean or not, is the directory
// root or starts with it followed by a separator, ignoring case on Windows
// (foldPrefix).
func hasPathPrefix(p, root string) bool {
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return foldPrefix(p+string(filepath.Separator), prefix)
}

// within reports whether the clean absolute path p is root or below it and
// returns the slash-separated relative path.
func within(root, p string) (string, bool) {
	if p == root {
		return ".", true
	}
	prefix := root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	if !strings.HasPrefix(p, prefix) {
		return "", false
	}
	return filepath.ToSlash(p[len(prefix):]), true
}

// realPath walks the absolute path p component by component, following
// symlinks like the kernel does, and tolerates a missing tail.
func realPath(p string) (string, error) {
	vol := filepath.VolumeName(p)
	sep := string(filepath.Separator)
	resolved := vol + sep
	rest := splitComponents(p[len(vol):])
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				resolved = next
				continue
			}
			return "", err
		}
		if fi.Mode()&iofs.ModeSymlink == 0 {
			target, ok, err := reparseTarget(next, fi)
			if err != nil {
				return "", err
			}
			if ok {
				// A junction: continue from its final path.
				links++
				if links > maxSymlinks {
					return "", syscall.ELOOP
				}
				resolved = target
				continue
			}
			resolved = filepath.Join(resolved, diskName(resolved, c))
			continue
		}
		links++
		if links > maxSymlinks {
			return "", syscall.ELOOP
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if target == "" {
			return "", syscall.ENOENT
		}
		if filepath.IsAbs(target) {
			tv := filepath.VolumeName(target)
			resolved = tv + sep
			target = target[len(tv):]
		}
		rest = append(splitComponents(target), rest...)
	}
	return resolved, nil
}

// splitComponents splits p at separators, dropping empty components.
func splitComponents(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) })
}
