package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Mode says what a sandboxed command may write.
type Mode string

// The modes of the [sandbox] configuration section.
const (
	// WorkspaceWrite lets commands write inside the session roots, the temp
	// directory and the configured extra paths (the default).
	WorkspaceWrite Mode = "workspace-write"
	// ReadOnly lets commands write nowhere but the terminal devices.
	ReadOnly Mode = "read-only"
	// Off runs commands unconfined.
	Off Mode = "off"
)

// Valid reports whether m is one of the three modes.
func (m Mode) Valid() bool { return m == WorkspaceWrite || m == ReadOnly || m == Off }

// tighter reports whether m allows no more than o.
func (m Mode) tighter(o Mode) bool { return m.rank() <= o.rank() }

func (m Mode) rank() int {
	switch m {
	case ReadOnly:
		return 0
	case WorkspaceWrite:
		return 1
	}
	return 2
}

// UserGitConfig returns the user's global git configuration files, which
// git reads in every repository (a core.fsmonitor there runs on every `git
// status`): ~/.gitconfig and $XDG_CONFIG_HOME/git (~/.config/git). A
// policy keeps them read-only (Policy.ReadOnly) for sessions whose roots
// contain them (a session rooted at the home folder).
func UserGitConfig() []string {
	var out []string
	home, err := os.UserHomeDir()
	if err == nil && filepath.IsAbs(home) {
		out = append(out, filepath.Join(home, ".gitconfig"))
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		out = append(out, filepath.Join(x, "git"))
	} else if err == nil && filepath.IsAbs(home) {
		out = append(out, filepath.Join(home, ".config", "git"))
	}
	return out
}

// DefaultProtected are the paths, relative to each session root, that stay
// read-only inside a writable root: the whole git directory (its hooks,
// configuration, commondir, info, objects/info/alternates … all make git
// run code or read configuration outside the sandbox later), and acpd's
// project configuration. A ".git" entry also protects every git
// indirection found from it (see gitPaths): the git directory and common
// directory of a linked worktree's `.git` file, submodules' `.git` files
// and the files the repository configuration includes) and every .git of
// the repositories nested in the root (a home folder holding projects),
// found at most three levels down within a bounded search (nestedGits).
var DefaultProtected = []string{".git", ".acpd"}

// Policy is the one description of what a sandboxed command may do; every
// platform backend renders it (Linux: Landlock plus namespaces, macOS: a
// Seatbelt profile). The zero Policy is read-only with the network off.
//
// Reads are allowed everywhere except Hidden. Writes are allowed inside
// Roots, TempDir and Writable (in WorkspaceWrite mode only), except in the
// Protected paths of each root, which stay read-only. Network is all or
// nothing.
type Policy struct {
	Mode Mode `json:"mode"`
	// Roots are the session roots (cwd and additional directories).
	Roots []string `json:"roots,omitempty"`
	// Writable are extra writable paths from the configuration.
	Writable []string `json:"writable,omitempty"`
	// TempDir is the temporary directory ("" for none).
	TempDir string `json:"tempDir,omitempty"`
	// Protected are paths relative to each root that stay read-only;
	// nil means DefaultProtected.
	Protected []string `json:"protected,omitempty"`
	// ReadOnly are absolute paths that stay read-only where they lie in a
	// writable tree (the user's git configuration: UserGitConfig).
	ReadOnly []string `json:"readOnly,omitempty"`
	// Hidden are absolute paths that commands can neither read nor write:
	// acpd's configuration and state directories (keys, sessions).
	Hidden []string `json:"hidden,omitempty"`
	// Network allows network access.
	Network bool `json:"network,omitempty"`
}

// Tighten returns p restricted by a project's wishes: the stricter mode, the
// network only if both allow it, and only those extra writable paths that
// both name. It never loosens p.
func (p Policy) Tighten(mode Mode, network *bool, writable []string) Policy {
	if mode.Valid() && mode.tighter(p.Mode) {
		p.Mode = mode
	}
	if network != nil && !*network {
		p.Network = false
	}
	if writable != nil {
		var keep []string
		for _, w := range p.Writable {
			if slices.Contains(writable, w) {
				keep = append(keep, w)
			}
		}
		p.Writable = keep
	}
	return p
}

// plan is a Policy resolved to absolute, symlink-free paths: what a backend
// renders.
type plan struct {
	// writable trees (dirs or files).
	writable []string
	// readOnly paths inside writable trees (existing ones resolved,
	// missing ones joined to their resolved root).
	readOnly []string
	// hidden paths that exist.
	hidden []string
	// locked are the ancestors of readOnly and hidden paths that lie in a
	// writable tree, shallowest first: a backend keeps them from being
	// renamed or removed, so that a protected path cannot be replaced by
	// moving a directory above it away (Linux: each is bind-mounted onto
	// itself, and a mount point cannot be renamed; Seatbelt: unlink is
	// denied on them).
	locked []string
	// visible are the roots (resolved, existing), which stay visible in
	// every mode where the backend hides other paths (Linux's private
	// /tmp).
	visible []string
	network bool
}

// errOff is returned when a plan of an Off policy is asked for.
var errOff = errors.New("sandbox: mode is off")

// resolve turns p into a plan. Paths that do not exist are left out (a
// writable root that does not exist cannot be written anyway; a protected
// path that does not exist cannot be mounted over: see the package
// documentation), except protected paths.
func (p Policy) resolve() (plan, error) { return p.resolvePlan(true) }

// resolvePlan is resolve; without nested it does not search the roots for
// nested repositories (for callers that only look at the roots' own
// protected paths).
func (p Policy) resolvePlan(nested bool) (plan, error) {
	var pl plan
	switch p.Mode {
	case Off:
		return pl, errOff
	case WorkspaceWrite, ReadOnly, "":
	default:
		return pl, fmt.Errorf("sandbox: unknown mode %q", p.Mode)
	}
	pl.network = p.Network
	for _, root := range p.Roots {
		if r, ok, err := real(root); err == nil && ok && !slices.Contains(pl.visible, r) {
			pl.visible = append(pl.visible, r)
		}
	}
	if p.Mode == WorkspaceWrite {
		var cands []string
		cands = append(cands, p.Roots...)
		cands = append(cands, p.Writable...)
		if p.TempDir != "" {
			cands = append(cands, p.TempDir)
		}
		for _, c := range cands {
			r, ok, err := real(c)
			if err != nil {
				return pl, err
			}
			if ok && !slices.Contains(pl.writable, r) {
				pl.writable = append(pl.writable, r)
			}
		}
		prot := p.Protected
		if prot == nil {
			prot = DefaultProtected
		}
		for _, root := range p.Roots {
			rr, ok, err := real(root)
			if err != nil || !ok {
				continue
			}
			for _, rel := range prot {
				paths := []string{filepath.Join(rr, rel)}
				if rel == ".git" {
					paths = gitPaths(paths[0])
					if nested {
						for _, n := range nestedGits(rr) {
							paths = append(paths, gitPaths(n)...)
						}
					}
				}
				for i, path := range paths {
					r, ok, err := real(path)
					if err != nil {
						return pl, err
					}
					if !ok {
						if i > 0 {
							continue
						}
						// Kept for backends that can deny a missing
						// path (Seatbelt); mounts skip it.
						r = path
					}
					if !slices.Contains(pl.readOnly, r) {
						pl.readOnly = append(pl.readOnly, r)
					}
				}
			}
		}
	}
	if p.Mode == WorkspaceWrite {
		for _, ro := range p.ReadOnly {
			r, ok, err := real(ro)
			if err != nil {
				return pl, err
			}
			if !ok {
				r = resolveExisting(ro) // kept as the missing root paths are
			}
			if slices.ContainsFunc(pl.writable, func(w string) bool { return within(r, w) }) && !slices.Contains(pl.readOnly, r) {
				pl.readOnly = append(pl.readOnly, r)
			}
		}
	}
	for _, h := range p.Hidden {
		r, ok, err := real(h)
		if err != nil {
			return pl, err
		}
		if !ok {
			// A hidden directory that does not exist yet (acpd's
			// configuration before the first `acpd login`) is
			// created, empty and private, so that a command cannot
			// create it with contents of its choosing.
			// Where acpd cannot create it (a read-only home), no
			// command can either: there is nothing to hide.
			if err := os.MkdirAll(h, 0o700); err != nil {
				continue
			}
			if r, ok, err = real(h); err != nil {
				return pl, err
			}
		}
		if ok && !slices.Contains(pl.hidden, r) {
			pl.hidden = append(pl.hidden, r)
		}
	}
	// A hidden path must not stay visible through a writable tree below it
	// or be re-exposed by a read-only bind mounted later: hidden paths are
	// applied last by every backend, and a writable tree inside a hidden
	// one is dropped.
	// A hidden path inside another is covered already.
	hidden := pl.hidden
	pl.hidden = slices.DeleteFunc(slices.Clone(hidden), func(h string) bool {
		for _, o := range hidden {
			if o != h && within(h, o) {
				return true
			}
		}
		return false
	})
	inHidden := func(w string) bool {
		for _, h := range pl.hidden {
			if within(w, h) {
				return true
			}
		}
		return false
	}
	pl.writable = slices.DeleteFunc(pl.writable, inHidden)
	pl.visible = slices.DeleteFunc(pl.visible, inHidden)
	pl.locked = pl.ancestors()
	return pl, nil
}

// ancestors returns the directories above pl's read-only and hidden paths
// that lie inside a writable tree (and so could be renamed or removed),
// shallowest first, each once.
func (pl plan) ancestors() []string {
	var out []string
	for _, q := range slices.Concat(pl.readOnly, pl.hidden) {
		for a := filepath.Dir(q); a != filepath.Dir(a); a = filepath.Dir(a) {
			if !slices.Contains(out, a) && slices.ContainsFunc(pl.writable, func(w string) bool { return within(a, w) }) &&
				!slices.ContainsFunc(pl.readOnly, func(r string) bool { return within(a, r) }) {
				out = append(out, a)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b string) int {
		return strings.Count(a, string(filepath.Separator)) - strings.Count(b, string(filepath.Separator))
	})
	return out
}

// real returns the absolute, symlink-resolved form of path, and false when
// it does not exist.
func real(path string) (string, bool, error) {
	if !filepath.IsAbs(path) {
		return "", false, fmt.Errorf("sandbox: path %q is not absolute", path)
	}
	r, err := filepath.EvalSymlinks(path)
	if errors.Is(err, os.ErrNotExist) || isNotDir(err) {
		// ENOTDIR: a path below a file (.git/hooks where .git is a
		// worktree's file) does not exist either.
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("sandbox: %w", err)
	}
	return r, true, nil
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// Describe is a one-line human summary of p, for doctor and notices.
func (p Policy) Describe() string {
	if p.Mode == Off {
		return "off"
	}
	var b strings.Builder
	if p.Mode == WorkspaceWrite {
		b.WriteString("writes only in the project")
		if p.TempDir != "" {
			b.WriteString(", the temp dir")
		}
		if len(p.Writable) > 0 {
			fmt.Fprintf(&b, " and %s", strings.Join(p.Writable, ", "))
		}
		prot := p.Protected
		if prot == nil {
			prot = DefaultProtected
		}
		fmt.Fprintf(&b, " (%s read-only)", strings.Join(prot, ", "))
	} else {
		b.WriteString("read-only")
	}
	if p.Network {
		b.WriteString("; network on")
	} else {
		b.WriteString("; network off")
	}
	if len(p.Hidden) > 0 {
		b.WriteString("; acpd's config and state hidden")
	}
	b.WriteString(backendDescription(p))
	return b.String()
}

// Unprotected lists the protected paths of p's roots that do not exist
// now. The Linux backend cannot mount over a missing path, so a command
// may create them; callers check afterwards and tell the user (Seatbelt
// denies them by path).
func (p Policy) Unprotected() []string {
	if p.Mode != WorkspaceWrite {
		return nil
	}
	pl, err := p.resolvePlan(false) // nested repositories exist
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range pl.readOnly {
		if _, err := os.Lstat(r); errors.Is(err, os.ErrNotExist) {
			out = append(out, r)
		}
	}
	return out
}
