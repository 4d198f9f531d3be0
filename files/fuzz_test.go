package files

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzResolve feeds arbitrary path strings to Resolve over a tree full of
// hostile symlinks: it must never panic, and a path it reports as inside
// must really be inside (checked with filepath.Rel on the returned real
// path, whose existing prefix must contain no symlinks), while a path it
// reports as outside must not be under any root.
func FuzzResolve(f *testing.F) {
	fx := newFixture(f)
	r := fx.root
	mustMkdir(f, filepath.Join(r, "sub", "deep"))
	mustMkdir(f, filepath.Join(fx.outside, "dir"))
	mustWrite(f, filepath.Join(r, "file"), "x")
	for target, link := range map[string]string{
		fx.outside:                  "abs-out",
		"../outside/dir":            "rel-out",
		"sub/deep/../../../outside": "dotdot-out",
		filepath.Join(r, "sub"):     "abs-in",
		"sub/deep":                  "rel-in",
		"loop":                      "loop",
		"missing/target":            "dangling",
		".":                         "dot",
		"..":                        "up",
		fx.extra:                    "to-extra",
		"/":                         "slash",
	} {
		mustSymlink(f, target, filepath.Join(r, link))
	}
	mustSymlink(f, "../root/abs-out", filepath.Join(fx.extra, "chain"))

	for _, seed := range []string{
		"file", "../../etc/passwd", "/etc/passwd", "abs-out/x", "rel-out/../dir",
		"dotdot-out", "abs-in/deep/../../file", "rel-in/..", "loop/x", "dangling/y",
		"dot/dot/up/root/file", "up/outside", "to-extra/chain/z", "slash/tmp",
		"a\x00b", "", ".", "..", "/", "sub/./deep//x/../y", fx.extra + "/chain",
		strings.Repeat("../", 50) + "x", strings.Repeat("dot/", 300),
	} {
		f.Add(seed)
	}
	rootList := fx.roots.List()
	f.Fuzz(func(t *testing.T, p string) {
		res, err := fx.roots.Resolve(p)
		if err != nil {
			if res != (Resolved{}) {
				t.Fatalf("error %v with non-zero result %+v", err, res)
			}
			return
		}
		if !filepath.IsAbs(res.Path) || filepath.Clean(res.Path) != res.Path {
			t.Fatalf("Path %q is not absolute and clean", res.Path)
		}
		if !res.Inside() {
			if res.Rel != "" {
				t.Fatalf("outside result with Rel %q", res.Rel)
			}
			for _, root := range rootList {
				if rel, err := filepath.Rel(root, res.Path); err == nil && !relOutside(rel) {
					t.Fatalf("%q resolved to %q inside %q but reported outside", p, res.Path, root)
				}
			}
			return
		}
		if !slices.Contains(rootList, res.Root) {
			t.Fatalf("Root %q is not a root", res.Root)
		}
		rel, err := filepath.Rel(res.Root, res.Path)
		if err != nil || relOutside(rel) {
			t.Fatalf("%q reported inside %q but real path is %q", p, res.Root, res.Path)
		}
		if filepath.ToSlash(rel) != res.Rel {
			t.Fatalf("Rel = %q, want %q", res.Rel, rel)
		}
		// The existing prefix of a real path contains no symlinks.
		existing := res.Path
		for {
			if _, err := os.Lstat(existing); err == nil || !errors.Is(err, os.ErrNotExist) && !isNotDir(err) {
				break
			}
			existing = filepath.Dir(existing)
		}
		if ev, err := filepath.EvalSymlinks(existing); err == nil && ev != existing {
			t.Fatalf("%q: real path %q still goes through a symlink (%q → %q)", p, res.Path, existing, ev)
		}
	})
}

// relOutside reports whether rel, from filepath.Rel, leaves its base.
func relOutside(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func isNotDir(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory")
}
