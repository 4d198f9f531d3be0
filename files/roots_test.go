package files

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestNewRootsRejectsBadRoots(t *testing.T) {
	f := newFixture(t)
	file := filepath.Join(f.base, "file")
	mustWrite(t, file, "x")
	for _, tc := range []struct {
		name string
		cwd  string
		add  []string
	}{
		{"empty", "", nil},
		{"relative", "root", nil},
		{"missing", filepath.Join(f.base, "missing"), nil},
		{"file", file, nil},
		{"nul", f.root + "\x00x", nil},
		{"bad additional", f.root, []string{"rel"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewRoots(tc.cwd, tc.add...); err == nil {
				t.Fatal("NewRoots succeeded")
			}
		})
	}
}

func TestNewRootsResolvesSymlinksAndDedups(t *testing.T) {
	f := newFixture(t)
	alias := filepath.Join(f.base, "alias")
	mustSymlink(t, f.root, alias)
	r, err := NewRoots(alias, f.extra, f.root, f.extra+"/")
	if err != nil {
		t.Fatal(err)
	}
	if r.Cwd() != f.root {
		t.Errorf("Cwd = %q, want %q", r.Cwd(), f.root)
	}
	if got, want := r.List(), []string{f.root, f.extra}; !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q", got, want)
	}
	r.List()[0] = "mutated"
	if r.List()[0] != f.root {
		t.Error("List exposes internal state")
	}
}

func TestResolve(t *testing.T) {
	f := newFixture(t)
	nested := filepath.Join(f.root, "nested")
	mustMkdir(t, filepath.Join(f.root, "sub", "deep"))
	mustMkdir(t, nested)
	mustMkdir(t, filepath.Join(f.outside, "dir"))
	mustWrite(t, filepath.Join(f.root, "a.txt"), "a")
	mustWrite(t, filepath.Join(f.outside, "secret"), "secret")
	mustWrite(t, filepath.Join(f.outside, "dir", "secret"), "secret")
	mustSymlink(t, filepath.Join(f.outside, "secret"), filepath.Join(f.root, "out-file"))
	mustSymlink(t, filepath.Join(f.outside, "dir"), filepath.Join(f.root, "out-dir"))
	mustSymlink(t, "../outside/dir", filepath.Join(f.root, "rel-out"))
	mustSymlink(t, filepath.Join(f.root, "sub"), filepath.Join(f.root, "abs-in"))
	mustSymlink(t, "sub/deep", filepath.Join(f.root, "deep-link"))
	mustSymlink(t, "loop", filepath.Join(f.root, "loop"))
	mustSymlink(t, f.extra, filepath.Join(f.root, "to-extra"))

	roots, err := NewRoots(f.root, f.extra, nested)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		path, root, rel string
	}
	for _, tc := range []struct {
		in   string
		want want
	}{
		{"a.txt", want{filepath.Join(f.root, "a.txt"), f.root, "a.txt"}},
		{"./sub//deep/", want{filepath.Join(f.root, "sub", "deep"), f.root, "sub/deep"}},
		{".", want{f.root, f.root, "."}},
		{"sub/../a.txt", want{filepath.Join(f.root, "a.txt"), f.root, "a.txt"}},
		{"../../etc/passwd", want{filepath.Join(filepath.Dir(f.base), "etc", "passwd"), "", ""}},
		{"../outside/secret", want{filepath.Join(f.outside, "secret"), "", ""}},
		{"/etc/passwd", want{"/etc/passwd", "", ""}},
		{f.outside, want{f.outside, "", ""}},
		// symlinks inside a root pointing outside count as outside
		{"out-file", want{filepath.Join(f.outside, "secret"), "", ""}},
		{"out-dir/secret", want{filepath.Join(f.outside, "dir", "secret"), "", ""}},
		{"out-dir/new/file", want{filepath.Join(f.outside, "dir", "new", "file"), "", ""}},
		{"rel-out/secret", want{filepath.Join(f.outside, "dir", "secret"), "", ""}},
		{filepath.Join(f.root, "out-dir", "secret"), want{filepath.Join(f.outside, "dir", "secret"), "", ""}},
		// and out-of-root symlinks back in count as inside
		{"abs-in/deep", want{filepath.Join(f.root, "sub", "deep"), f.root, "sub/deep"}},
		// ".." after a symlink applies to its target, like the kernel
		{"deep-link/../x", want{filepath.Join(f.root, "sub", "x"), f.root, "sub/x"}},
		// not-yet-existing tails are allowed
		{"new/dir/file.go", want{filepath.Join(f.root, "new", "dir", "file.go"), f.root, "new/dir/file.go"}},
		{"missing/../a.txt", want{filepath.Join(f.root, "a.txt"), f.root, "a.txt"}},
		{"a.txt/below", want{filepath.Join(f.root, "a.txt", "below"), f.root, "a.txt/below"}},
		// additional directories are roots; the innermost root wins
		{filepath.Join(f.extra, "x"), want{filepath.Join(f.extra, "x"), f.extra, "x"}},
		{"to-extra/y", want{filepath.Join(f.extra, "y"), f.extra, "y"}},
		{"nested/z", want{filepath.Join(nested, "z"), nested, "z"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			res, err := roots.Resolve(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := (want{res.Path, res.Root, res.Rel}); got != tc.want {
				t.Errorf("Resolve(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
			if res.Inside() != (tc.want.root != "") {
				t.Errorf("Inside = %v", res.Inside())
			}
		})
	}

	for _, tc := range []struct {
		in   string
		want error
	}{
		{"", nil},
		{"a\x00b", ErrNULInPath},
		{"loop/x", syscall.ELOOP},
	} {
		if _, err := roots.Resolve(tc.in); err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("Resolve(%q) error = %v, want %v", tc.in, err, tc.want)
		}
	}
}

// TestBrokerRefusesSymlinkEscape checks that the broker never follows a
// path under a root out of the roots, for reads and writes, while the real
// outside path stays usable once the caller allowed it.
func TestBrokerRefusesSymlinkEscape(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	secret := filepath.Join(f.outside, "secret")
	mustWrite(t, secret, "secret")
	mustSymlink(t, secret, filepath.Join(f.root, "out-file"))
	mustSymlink(t, f.outside, filepath.Join(f.root, "out-dir"))
	b := newTestBroker(t, BrokerOptions{Roots: f.roots})

	for _, p := range []string{"out-file", filepath.Join(f.root, "out-file"), "out-dir/secret", "out-dir/../out-dir/secret"} {
		if _, err := b.ReadFile(ctx, p); !errors.Is(err, ErrSymlinkEscape) {
			t.Errorf("ReadFile(%q) error = %v, want ErrSymlinkEscape", p, err)
		}
		if _, err := b.ReadLines(ctx, p, 1, 10); !errors.Is(err, ErrSymlinkEscape) {
			t.Errorf("ReadLines(%q) error = %v, want ErrSymlinkEscape", p, err)
		}
	}
	for _, p := range []string{"out-file", "out-dir/new", "out-dir/sub/new"} {
		if _, _, err := b.WriteFile(ctx, p, "pwned"); !errors.Is(err, ErrSymlinkEscape) {
			t.Errorf("WriteFile(%q) error = %v, want ErrSymlinkEscape", p, err)
		}
	}
	if got := readString(t, secret); got != "secret" {
		t.Errorf("outside file modified: %q", got)
	}
	if ents, _ := os.ReadDir(f.outside); len(ents) != 1 {
		t.Errorf("outside dir has %d entries, want 1", len(ents))
	}

	// After the caller approved the outside location, it passes the real
	// path, which works for reads and writes.
	res, err := f.roots.Resolve("out-file")
	if err != nil || res.Inside() {
		t.Fatalf("Resolve = %+v, %v", res, err)
	}
	if got, err := b.ReadFile(ctx, res.Path); err != nil || got != "secret" {
		t.Fatalf("ReadFile(real) = %q, %v", got, err)
	}
	if prev, existed, err := b.WriteFile(ctx, res.Path, "updated"); err != nil || !existed || prev != "secret" {
		t.Fatalf("WriteFile(real) = %q, %v, %v", prev, existed, err)
	}
	if got := readString(t, secret); got != "updated" {
		t.Errorf("outside file = %q", got)
	}
	if fi, err := os.Lstat(filepath.Join(f.root, "out-file")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("in-root symlink replaced: %v %v", fi, err)
	}
	if _, _, err := b.WriteFile(ctx, filepath.Join(f.outside, "new", "file"), "x"); err != nil {
		t.Errorf("WriteFile(new outside file) = %v", err)
	}
}

// TestOsRootPinsConfinement resolves a path while it is inside, swaps a
// component for a symlink to the outside, then performs the I/O: the write
// and the read must fail instead of following the swap.
func TestOsRootPinsConfinement(t *testing.T) {
	f := newFixture(t)
	link := filepath.Join(f.root, "link")
	mustMkdir(t, link)
	mustWrite(t, filepath.Join(link, "f"), "inside")
	mustWrite(t, filepath.Join(f.outside, "f"), "outside")
	b := newTestBroker(t, BrokerOptions{Roots: f.roots})
	for _, target := range []string{f.outside, "../outside"} {
		if err := os.RemoveAll(link); err != nil {
			t.Fatal(err)
		}
		mustMkdir(t, link)
		mustWrite(t, filepath.Join(link, "f"), "inside")
		res, err := f.roots.Resolve("link/f")
		if err != nil || !res.Inside() {
			t.Fatalf("Resolve = %+v, %v", res, err)
		}
		if err := os.RemoveAll(link); err != nil {
			t.Fatal(err)
		}
		mustSymlink(t, target, link)

		if err := b.writeDisk(res, []byte("pwned"), false); err == nil {
			t.Errorf("writeDisk through swapped symlink (%s) succeeded", target)
		}
		if data, err := b.readDisk(context.Background(), res); err == nil {
			t.Errorf("readDisk through swapped symlink (%s) = %q", target, data)
		}
		if got := readString(t, filepath.Join(f.outside, "f")); got != "outside" {
			t.Fatalf("outside file = %q", got)
		}
		ents, _ := os.ReadDir(f.outside)
		for _, e := range ents {
			if e.Name() != "f" {
				t.Errorf("stray file outside: %s", e.Name())
			}
		}
	}
}

func TestLexicallyUnder(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		p    string
		want bool
	}{
		{"rel", true},
		{"../../x", true}, // relative paths start at the cwd root
		{f.root, true},
		{f.root + "/x", true},
		{f.root + "/../outside", true}, // unclean prefix counts
		{f.extra + "//x", true},
		{f.outside, false},
		{f.root + "x", false},
		{filepath.VolumeName(f.base) + filepath.FromSlash("/etc/passwd"), false},
	} {
		if got := f.roots.lexicallyUnder(tc.p); got != tc.want {
			t.Errorf("lexicallyUnder(%q) = %v, want %v", strings.TrimPrefix(tc.p, f.base), got, tc.want)
		}
	}
}
