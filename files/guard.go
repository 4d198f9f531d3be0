package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// ErrPathChanged is returned by the broker's writes when what a write would
// open is not what its path named when the caller decided on it: a
// directory in the path was replaced by a symbolic link, or by a protected
// directory (a ".git"), since. Nothing was written; resolving the path
// again shows where it leads now.
var ErrPathChanged = errors.New("the path changed while it was being written (a directory in it is now a symbolic link or a protected directory); nothing was written")

// guard is the broker's knowledge of the protected places (see
// BrokerOptions.Protected and ProtectedNames).
type guard struct {
	roots *Roots
	names []string // directory names protected wherever they appear
	dirs  []string // absolute protected directories, cleaned
	// known are the identities of the protected directories when the
	// broker was created: they keep counting if one is renamed later.
	known []os.FileInfo
}

func newGuard(names, dirs []string, roots *Roots) guard {
	g := guard{roots: roots, names: names}
	for _, d := range dirs {
		if filepath.IsAbs(d) {
			g.dirs = append(g.dirs, filepath.Clean(d))
		}
	}
	g.known = g.identities(roots.List())
	return g
}

// identities stats the protected directories that exist now: each root's
// protected names and the protected directories.
func (g guard) identities(roots []string) []os.FileInfo {
	var out []os.FileInfo
	add := func(p string) {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			out = append(out, fi)
		}
	}
	for _, r := range roots {
		for _, n := range g.names {
			add(filepath.Join(r, n))
		}
	}
	for _, d := range g.dirs {
		add(d)
	}
	return out
}

// lexical reports whether the absolute path abs, as written, names a
// protected place: a component with a protected name (ignoring case, as
// the permission policy does) or a path in a protected directory.
func (g guard) lexical(abs string) bool {
	for _, c := range splitComponents(abs[len(filepath.VolumeName(abs)):]) {
		for _, n := range g.names {
			if strings.EqualFold(c, n) {
				return true
			}
		}
	}
	for _, d := range g.dirs {
		if hasPathPrefixFold(abs, d) {
			return true
		}
	}
	return false
}

// hasPathPrefixFold reports whether p is dir or below it, ignoring case.
func hasPathPrefixFold(p, dir string) bool {
	if len(p) < len(dir) || !strings.EqualFold(p[:len(dir)], dir) {
		return false
	}
	return len(p) == len(dir) || os.IsPathSeparator(p[len(dir)]) || strings.HasSuffix(dir, string(filepath.Separator))
}

// isProtected reports whether fi is one of the protected directories in
// prot.
func isProtected(fi os.FileInfo, prot []os.FileInfo) bool {
	for _, p := range prot {
		if os.SameFile(fi, p) {
			return true
		}
	}
	return false
}

// writeTarget is where a disk write goes: the top directory the walk starts
// from (a session root, or the file system's root for a path outside
// them), the directory path below it and the file name.
type writeTarget struct {
	top, topAbs string // topAbs: top's absolute path
	dir         string // slash path of the parent below top, "." for top
	name        string
}

// targetOf splits res into its write target. ok is false where a path
// outside the roots is not walked (Windows: the broker then opens its
// parent directly).
func targetOf(res Resolved) (writeTarget, bool) {
	if res.Inside() {
		return writeTarget{top: res.Root, topAbs: res.Root, dir: path.Dir(res.Rel), name: path.Base(res.Rel)}, true
	}
	if runtime.GOOS == "windows" {
		return writeTarget{}, false
	}
	vol := filepath.VolumeName(res.Path)
	top := vol + string(filepath.Separator)
	rel := filepath.ToSlash(strings.TrimLeft(res.Path[len(vol):], string(filepath.Separator)))
	if rel == "" {
		return writeTarget{}, false
	}
	return writeTarget{top: top, topAbs: top, dir: path.Dir(rel), name: path.Base(rel)}, true
}

// openParent opens t's parent directory one component at a time, never
// following a symbolic link, creating missing directories when create is
// set (a missing one is an error otherwise). Each directory opened must be
// the one its name showed just before (so no link or swap slipped in
// between) and, unless expectProtected, neither a protected directory
// (by name or identity, prot) nor inside one: otherwise the error wraps
// ErrPathChanged. The caller closes the returned root.
func (g guard) openParent(t writeTarget, create, expectProtected bool, prot []os.FileInfo) (*os.Root, error) {
	d, err := os.OpenRoot(t.top)
	if err != nil {
		return nil, err
	}
	abs := t.topAbs
	check := func(fi os.FileInfo) error {
		if expectProtected {
			return nil
		}
		if g.lexical(abs) || isProtected(fi, prot) {
			return fmt.Errorf("%w: %s is a protected directory now", ErrPathChanged, abs)
		}
		return nil
	}
	if fi, err := d.Stat("."); err != nil {
		d.Close()
		return nil, err
	} else if err := check(fi); err != nil {
		d.Close()
		return nil, err
	}
	if t.dir == "." {
		return d, nil
	}
	for _, c := range strings.Split(t.dir, "/") {
		abs = filepath.Join(abs, c)
		fi, err := d.Lstat(c)
		if errors.Is(err, fs.ErrNotExist) && create {
			if err = d.Mkdir(c, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
				fi, err = d.Lstat(c)
			}
		}
		if err != nil {
			d.Close()
			return nil, &fs.PathError{Op: "open", Path: abs, Err: unwrapPath(err)}
		}
		if fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 { // Windows: junctions are irregular
			d.Close()
			return nil, fmt.Errorf("%w: %s is a symbolic link now", ErrPathChanged, abs)
		}
		if !fi.IsDir() {
			d.Close()
			return nil, &fs.PathError{Op: "open", Path: abs, Err: errNotDir}
		}
		next, err := d.OpenRoot(c)
		d.Close()
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: abs, Err: unwrapPath(err)}
		}
		d = next
		opened, err := d.Stat(".")
		if err != nil {
			d.Close()
			return nil, err
		}
		if !sameOpened(fi, opened) {
			d.Close()
			return nil, fmt.Errorf("%w: %s was replaced while it was opened", ErrPathChanged, abs)
		}
		if err := check(opened); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

var errNotDir = errors.New("not a directory")

// sameOpened reports whether the directory opened is the one Lstat showed.
// On Windows, where os.SameFile of these infos would reopen by path, the
// check is left to os.Root (which refuses reparse points out of the root).
func sameOpened(shown, opened os.FileInfo) bool {
	return runtime.GOOS == "windows" || os.SameFile(shown, opened)
}

// unwrapPath is err's underlying error when it is a path error (whose path
// names only a component).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// written is p as the caller wrote it, absolute and cleaned.
func (g guard) written(p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.roots.Cwd(), p)
	}
	return filepath.Clean(p)
}

// redirected reports, as an error wrapping ErrPathChanged, a path that did
// not name a protected place as the caller wrote it (p) but resolves into
// one now (res): a link was put in it after the caller's decision.
func (g guard) redirected(p string, res Resolved) error {
	written := g.written(p)
	if g.lexical(res.Path) && !g.lexical(written) {
		return &fs.PathError{Op: "write", Path: written, Err: fmt.Errorf("%w: it resolves to %s", ErrPathChanged, res.Path)}
	}
	return nil
}

// protectedNow are the identities of the protected directories: those when
// the guard was made and those that exist now.
func (g guard) protectedNow() []os.FileInfo {
	return append(g.identities(g.roots.List()), g.known...)
}

// expectProtected reports whether the caller named a protected place (and
// so made its decision knowing it).
func (g guard) expectProtected(p string) bool { return g.lexical(g.written(p)) }

// WriteOptions configures [WriteFileConfined].
type WriteOptions struct {
	// Protected and ProtectedNames are as in [BrokerOptions].
	Protected, ProtectedNames []string
}

// WriteFileConfined writes data atomically to the file at p (absolute, or
// relative to roots' working directory) whose real location must lie
// inside roots, the way a [Broker] writes to disk: missing parent
// directories are created, the parent is opened one component at a time
// without following symbolic links, and a path that reaches a protected
// directory it does not name is refused with [ErrPathChanged]. It serves
// callers without a broker (a client's fs/write_text_file).
func WriteFileConfined(roots *Roots, p string, data []byte, o WriteOptions) error {
	res, err := roots.Resolve(p)
	if err != nil {
		return err
	}
	if !res.Inside() || res.Rel == "." {
		return &fs.PathError{Op: "write", Path: res.Path, Err: errors.New("not a file inside the roots")}
	}
	g := newGuard(o.ProtectedNames, o.Protected, roots)
	if err := g.redirected(p, res); err != nil {
		return err
	}
	t, _ := targetOf(res)
	d, err := g.openParent(t, true, g.expectProtected(p), g.protectedNow())
	if err != nil {
		return addPath(err, res.Path)
	}
	defer d.Close()
	if err := writeInDir(d, t.name, data, 0o644); err != nil {
		return addPath(err, res.Path)
	}
	return nil
}
