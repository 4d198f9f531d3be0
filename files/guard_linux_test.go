package files

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

var exchangeLoops = flag.Int("fs.exchangeloops", 3000, "writes raced against RENAME_EXCHANGE swaps into .git")

// gitFixture is a root with a .git directory (config "[core]\n") and a
// real directory sub; the broker knows .git as protected and has read
// .git/config (so only the guard, not the stale check, can stop a write).
func gitFixture(t *testing.T) (f *fixture, b *Broker, gitConfig string) {
	t.Helper()
	f = newFixture(t)
	mustMkdir(t, filepath.Join(f.root, ".git"))
	mustMkdir(t, filepath.Join(f.root, "sub"))
	gitConfig = filepath.Join(f.root, ".git", "config")
	mustWrite(t, gitConfig, "[core]\n")
	mustWrite(t, filepath.Join(f.root, ".git", "HEAD"), "ref: refs/heads/main\n")
	b = newTestBroker(t, BrokerOptions{Roots: f.roots, ProtectedNames: []string{".git", ".acpd"}})
	mustRead(t, b, gitConfig)
	return f, b, gitConfig
}

// exchangeLoop swaps a and b with renameat2(RENAME_EXCHANGE) until ctx
// ends, and leaves them as they were.
func exchangeLoop(ctx context.Context, t *testing.T, wg *sync.WaitGroup, a, b string) {
	wg.Go(func() {
		n := 0
		for ; ctx.Err() == nil; n++ {
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("RENAME_EXCHANGE: %v", err)
				return
			}
		}
		if n%2 == 1 {
			unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
		}
	})
}

// TestWriteRacesLinkExchangeIntoGit is issue 20's hole 3: a real sub/ is
// exchanged, thousands of times, with a symbolic link to .git while the
// broker writes sub/config (a path the permission layer lets through).
// .git/config must never change; writes that find sub real land in it.
func TestWriteRacesLinkExchangeIntoGit(t *testing.T) {
	f, b, gitConfig := gitFixture(t)
	link := filepath.Join(f.root, "link")
	if err := os.Symlink(".git", link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(f.root, "sub")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	exchangeLoop(ctx, t, &wg, sub, link)
	landed, refused := 0, 0
	for i := range *exchangeLoops {
		content := fmt.Sprintf("[core]\n\tfsmonitor = touch /tmp/pwned-%d\n", i)
		var err error
		if i%2 == 0 {
			_, _, err = b.WriteFile(ctx, filepath.Join(sub, "config"), content)
		} else {
			_, _, err = b.EditFile(ctx, filepath.Join(sub, "config"), func(string) (string, error) { return content, nil })
		}
		switch {
		case err == nil:
			landed++
		case errors.Is(err, ErrPathChanged):
			refused++
		}
		if got := readString(t, gitConfig); got != "[core]\n" {
			cancel()
			wg.Wait()
			t.Fatalf("write %d reached .git/config: %q", i, got)
		}
	}
	cancel()
	wg.Wait()
	t.Logf("%d writes landed in sub/config, %d refused as changed paths", landed, refused)
	if landed == 0 || refused == 0 {
		t.Errorf("landed %d, refused %d: want both (the race did not happen?)", landed, refused)
	}
	if got := readString(t, filepath.Join(sub, "config")); got == "" {
		t.Error("sub/config is empty")
	}
}

// TestWriteRacesDirectoryExchangeWithGit: the real .git directory itself is
// exchanged with a real sub/ (no link at all); a write of sub/config that
// finds git's directory there is refused by identity, so git's config never
// changes.
func TestWriteRacesDirectoryExchangeWithGit(t *testing.T) {
	f, b, _ := gitFixture(t)
	sub, git := filepath.Join(f.root, "sub"), filepath.Join(f.root, ".git")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	exchangeLoop(ctx, t, &wg, sub, git)
	landed := 0
	for i := range *exchangeLoops / 2 {
		if _, _, err := b.WriteFile(ctx, filepath.Join(sub, "config"), "evil\n"); err == nil {
			landed++
		}
		_ = i
	}
	cancel()
	wg.Wait()
	if got := readString(t, filepath.Join(git, "config")); got != "[core]\n" {
		t.Fatalf(".git/config = %q", got)
	}
	t.Logf("%d writes landed in sub/config", landed)
}

// TestRemoveRacesLinkExchangeIntoGit: apply_patch's delete goes through
// Broker.Remove, which never removes .git/config through a swapped link.
func TestRemoveRacesLinkExchangeIntoGit(t *testing.T) {
	f, b, gitConfig := gitFixture(t)
	link := filepath.Join(f.root, "link")
	if err := os.Symlink(".git", link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(f.root, "sub")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	exchangeLoop(ctx, t, &wg, sub, link)
	removed := 0
	for range *exchangeLoops / 2 {
		// Whichever directory sub names now gets the file: the real one,
		// or (through the link) nothing, as .git/config exists already.
		if real, err := filepath.EvalSymlinks(sub); err == nil && real != filepath.Join(f.root, ".git") {
			os.WriteFile(filepath.Join(real, "config"), []byte("x"), 0o644)
		}
		if err := b.Remove(ctx, filepath.Join(sub, "config")); err == nil {
			removed++
		}
		if _, err := os.Stat(gitConfig); err != nil {
			cancel()
			wg.Wait()
			t.Fatalf("Remove reached .git/config: %v", err)
		}
	}
	cancel()
	wg.Wait()
	t.Logf("%d removals", removed)
}

// TestWriteNamedProtectedPath: a write whose path names .git (the user
// approved it) goes through; one that reaches .git through a link it does
// not name is refused at once.
func TestWriteNamedProtectedPath(t *testing.T) {
	f, b, gitConfig := gitFixture(t)
	if _, _, err := b.WriteFile(context.Background(), gitConfig, "[core]\n\tbare = false\n"); err != nil {
		t.Fatalf("approved write of .git/config: %v", err)
	}
	if err := os.Symlink(".git", filepath.Join(f.root, "link")); err != nil {
		t.Fatal(err)
	}
	_, _, err := b.WriteFile(context.Background(), filepath.Join(f.root, "link", "config"), "[core]\n\tbare = false\n")
	if !errors.Is(err, ErrPathChanged) {
		t.Fatalf("write through a link into .git: %v, want ErrPathChanged", err)
	}
	if err := WriteFileConfined(f.roots, filepath.Join(f.root, "link", "HEAD"), []byte("x"), WriteOptions{ProtectedNames: []string{".git"}}); !errors.Is(err, ErrPathChanged) {
		t.Fatalf("WriteFileConfined through a link into .git: %v, want ErrPathChanged", err)
	}
	if err := WriteFileConfined(f.roots, filepath.Join(f.root, "new", "dir", "f"), []byte("x"), WriteOptions{ProtectedNames: []string{".git"}}); err != nil {
		t.Fatalf("WriteFileConfined of a new file: %v", err)
	}
	if got := readString(t, filepath.Join(f.root, "new", "dir", "f")); got != "x" {
		t.Fatalf("new file = %q", got)
	}
}

// swappingEditor writes on disk by path (as an editor does, following
// links), after swapping sub for a link to .git: the editor's own open
// cannot be guarded, so the broker must notice and report it.
type swappingEditor struct {
	sub, link string
	swap      bool
}

func (e *swappingEditor) ReadTextFile(_ context.Context, p string, _, _ *int) (string, error) {
	b, err := os.ReadFile(p)
	return string(b), err
}

func (e *swappingEditor) WriteTextFile(_ context.Context, p, content string) error {
	if e.swap {
		if err := unix.Renameat2(unix.AT_FDCWD, e.sub, unix.AT_FDCWD, e.link, unix.RENAME_EXCHANGE); err != nil {
			return err
		}
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// TestEditorWriteChecksTheDirectories: a write through the editor is
// refused before the request when sub is a link into .git, and reported
// as a changed path when sub is swapped during it; an ordinary editor
// write works.
func TestEditorWriteChecksTheDirectories(t *testing.T) {
	f := newFixture(t)
	mustMkdir(t, filepath.Join(f.root, ".git"))
	mustMkdir(t, filepath.Join(f.root, "sub"))
	mustWrite(t, filepath.Join(f.root, ".git", "config"), "[core]\n")
	link := filepath.Join(f.root, "link")
	if err := os.Symlink(".git", link); err != nil {
		t.Fatal(err)
	}
	ed := &swappingEditor{sub: filepath.Join(f.root, "sub"), link: link}
	b := newTestBroker(t, BrokerOptions{Roots: f.roots, Editor: ed, CanEditorRead: true, CanEditorWrite: true, ProtectedNames: []string{".git"}})
	ctx := context.Background()
	target := filepath.Join(f.root, "sub", "notes")
	if _, _, err := b.WriteFile(ctx, target, "hello\n"); err != nil {
		t.Fatalf("ordinary editor write: %v", err)
	}
	ed.swap = true
	_, _, err := b.WriteFile(ctx, filepath.Join(f.root, "sub", "new"), "x\n")
	if !errors.Is(err, ErrPathChanged) {
		t.Fatalf("editor write during a swap: %v, want ErrPathChanged", err)
	}
	// sub is the link now: refused before the editor is asked.
	ed.swap = false
	_, _, err = b.WriteFile(ctx, filepath.Join(f.root, "sub", "config"), "x\n")
	if !errors.Is(err, ErrPathChanged) {
		t.Fatalf("editor write through the link: %v, want ErrPathChanged", err)
	}
	if got := readString(t, filepath.Join(f.root, ".git", "config")); got != "[core]\n" {
		t.Fatalf(".git/config = %q", got)
	}
}
