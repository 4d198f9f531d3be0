//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func requireGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
}

// git runs git outside the sandbox, as the user would later.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %q: %v: %s", args, err, out)
	}
	return string(out)
}

// gitRepo makes dir a repository with one commit.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	git(t, dir, "init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "f")
	git(t, dir, "commit", "-qm", "first")
}

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// TestGitDirReadOnlyAsAWhole: reading git commands work in the sandbox
// (quietly: no index.lock complaint), writing ones fail naming the
// read-only git directory, and no file of .git, nor .git itself, can be
// changed, renamed or replaced.
func TestGitDirReadOnlyAsAWhole(t *testing.T) {
	requireSandbox(t)
	requireGit(t)
	w := newWorld(t)
	gitRepo(t, w.root)
	p := w.policy()
	if err := os.WriteFile(filepath.Join(w.root, "f"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRun(t, p, w.root, `git status --short && git diff --stat && git log --oneline`)
	if !strings.Contains(out, " M f") || !strings.Contains(out, "first") || strings.Contains(out, "lock") {
		t.Fatalf("read-only git in the sandbox: %s", out)
	}
	out = mustFail(t, p, w.root, `git add f`)
	if !strings.Contains(out, ".git/index.lock") || !strings.Contains(out, "Read-only file system") {
		t.Errorf("git add failed with %q, want the read-only index.lock", out)
	}
	mustFail(t, p, w.root, `git -c user.name=t -c user.email=t@example.com commit -qam second`)
	before := inode(t, filepath.Join(w.root, ".git"))
	for _, attack := range []string{
		`echo '[core] fsmonitor = "touch pwned"' >> .git/config`,
		`echo /tmp/evil > .git/commondir`,
		`echo '[core] fsmonitor = "touch pwned"' > .git/config.worktree`,
		`mkdir -p .git/info && echo x > .git/info/attributes`,
		`echo /tmp > .git/objects/info/alternates`,
		`echo x > .git/hooks/pre-commit`,
		`mv .git .git.old`,
		`rm -rf .git`,
		`cp -a .git .git.new && mv -T .git.new .git`,
		`mount -t tmpfs none .git`,
		`umount .git`,
	} {
		mustFail(t, p, w.root, attack)
	}
	if inode(t, filepath.Join(w.root, ".git")) != before {
		t.Fatal(".git was replaced")
	}
	git(t, w.root, "status")
	if _, err := os.Stat(filepath.Join(w.root, "pwned")); err == nil {
		t.Fatal("git status ran a planted fsmonitor")
	}
}

// TestGitWorktreeSession: a session rooted in a linked worktree (.git is a
// file) runs commands; git reads work, and the .git file, the worktree's
// git directory and the common directory are all read-only.
func TestGitWorktreeSession(t *testing.T) {
	requireSandbox(t)
	requireGit(t)
	w := newWorld(t)
	main := filepath.Join(w.extra, "main")
	if err := os.Mkdir(main, 0o755); err != nil {
		t.Fatal(err)
	}
	gitRepo(t, main)
	wt := filepath.Join(w.root, "wt")
	git(t, main, "worktree", "add", "-q", wt)
	p := w.policy()
	p.Roots = []string{wt}
	// The extra dir holds the main repository: writable, but its .git is
	// the worktree's common directory.
	out := mustRun(t, p, wt, `git status --short --branch && git log --oneline && echo ok > new`)
	if !strings.Contains(out, "first") {
		t.Fatalf("git log in the worktree: %s", out)
	}
	gd := strings.TrimSpace(git(t, wt, "rev-parse", "--absolute-git-dir"))
	for _, attack := range []string{
		`echo "gitdir: /tmp/evil" > .git`,
		`rm .git`,
		`mv .git .git.old`,
		`echo /tmp/evil > ` + gd + `/commondir`,
		`echo '[core] fsmonitor = "touch pwned"' >> ` + filepath.Join(main, ".git", "config"),
		`mv ` + filepath.Join(main, ".git") + ` ` + filepath.Join(main, "g"),
		`mv ` + main + ` ` + main + `.old`,
		`git add new`,
	} {
		mustFail(t, p, wt, attack)
	}
	git(t, wt, "status")
	if _, err := os.Stat(filepath.Join(wt, "pwned")); err == nil {
		t.Fatal("git status ran a planted fsmonitor")
	}
}

// TestAncestorRenameRefused: with the session root at a home directory,
// neither acpd's hidden configuration nor a project's protected paths can
// be replaced by renaming or removing a directory above them.
func TestAncestorRenameRefused(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	home := w.root
	cfg := filepath.Join(home, ".config", "acpd")
	state := filepath.Join(home, ".local", "state", "acpd")
	proj := filepath.Join(home, "src", "proj")
	for _, d := range []string{cfg, state, filepath.Join(proj, ".acpd")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := w.policy()
	p.Roots = []string{home, proj}
	p.Hidden = []string{cfg, state}
	for _, attack := range []string{
		`mv .config .config.moved`,
		`mv .local/state .local/s2`,
		`mv .local .l`,
		`rm -rf .config`,
		`mv src s`,
		`mv src/proj src/p`,
		`mv src/proj/.acpd src/proj/a`,
		`mkdir x && mv -T x .config`,
		// A nested user and mount namespace (unshare then umount in the
		// same process, which holds every capability in it) cannot
		// unlock them: the mounts it inherits are locked (MNT_LOCKED),
		// umount fails with EINVAL. (x86-64 system call numbers.)
		`perl -e 'syscall(272, 0x10020000) == 0 or die "unshare: $!"; for my $p (".config/acpd", ".config", "src/proj") { my $q = $p; syscall(166, $q, 2) } rename(".config", ".config.moved") or die "rename: $!"'`,
	} {
		mustFail(t, p, home, attack)
	}
	// Neighbours: files beside the protected paths stay writable.
	mustRun(t, p, home, `echo a > .config/other && mkdir -p .local/share/x && mv .config/other .config/other2 && rm -r .local/share/x && echo b > src/proj/main.go`)
	if _, err := os.Stat(filepath.Join(cfg, "config.toml")); err == nil {
		t.Fatal("config planted")
	}
}

// TestHiddenDirCreated: a hidden directory that does not exist yet is
// created, private, before the command starts, so the command cannot
// create it.
func TestHiddenDirCreated(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	cfg := filepath.Join(w.root, ".config", "acpd")
	p := w.policy()
	p.Hidden = []string{cfg}
	mustFail(t, p, w.root, `echo '[sandbox]' > .config/acpd/config.toml`)
	fi, err := os.Stat(cfg)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("hidden dir: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(cfg, "config.toml")); err == nil {
		t.Fatal("config planted")
	}
}

// TestProtects names why a path is protected.
func TestProtects(t *testing.T) {
	requireGit(t)
	w := newWorld(t)
	gitRepo(t, w.root)
	p := w.policy()
	for path, want := range map[string]string{
		filepath.Join(w.root, ".git", "index.lock"): "git directory",
		filepath.Join(w.root, ".acpd", "x"):         "project configuration",
		filepath.Join(w.config, "credentials.json"): "hidden",
	} {
		why, ok := p.Protects(path)
		if !ok || !strings.Contains(why, want) {
			t.Errorf("Protects(%s) = %q, %v; want %q", path, why, ok, want)
		}
	}
	sub := filepath.Join(w.root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if gd, ok := p.ProtectedGitDir(sub); !ok || gd != filepath.Join(w.root, ".git") {
		t.Errorf("ProtectedGitDir(%s) = %q, %v", sub, gd, ok)
	}
	if gd, ok := p.ProtectedGitDir(w.outside); ok {
		t.Errorf("ProtectedGitDir outside any repository = %q", gd)
	}
	if _, ok := (Policy{Mode: Off}).ProtectedGitDir(sub); ok {
		t.Error("ProtectedGitDir with the sandbox off")
	}
	if why, ok := p.Protects(filepath.Join(w.root, "f")); ok {
		t.Errorf("a project file is protected: %s", why)
	}
	out := "fatal: Unable to create '" + filepath.Join(w.root, ".git", "index.lock") + "': Read-only file system\n"
	if note := p.Explain(out, w.root); !strings.Contains(note, "outside the sandbox") || !strings.Contains(note, ".git") {
		t.Errorf("Explain: %q", note)
	}
	if note := p.Explain("error: could not lock config file .git/config: Read-only file system\n", w.root); note == "" {
		t.Error("Explain missed a relative path")
	}
	if note := p.Explain("cp: cannot create regular file 'x': Read-only file system\n", w.root); note != "" {
		t.Errorf("Explain for an unprotected path: %q", note)
	}
}

// attackerEnv makes the test binary, run as a sandboxed command, the
// rename racer (see TestMain).
const attackerEnv = "SANDBOX_TEST_RENAME_RACE"

// renameRace is the sandboxed attacker: for each "FROM:TO" pair in args it
// tries, from several threads at once, rounds times, to rename FROM to TO
// (and back), to exchange them (renameat2 RENAME_EXCHANGE) and to remove
// FROM, and prints how many attempts succeeded.
func renameRace(args []string, rounds int) {
	done := make(chan int)
	for _, a := range args {
		from, to, _ := strings.Cut(a, ":")
		for range 4 {
			go func() {
				won := 0
				for range rounds {
					if unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_EXCHANGE) == nil {
						won++
					}
					if unix.Rename(from, to) == nil {
						won++
						unix.Rename(to, from)
					}
					if unix.Rmdir(from) == nil {
						won++
					}
				}
				done <- won
			}()
		}
	}
	won := 0
	for range 4 * len(args) {
		won += <-done
	}
	fmt.Printf("won %d\n", won)
	os.Exit(0)
}

// TestAncestorRenameRace runs thousands of concurrent rename, exchange and
// removal attempts on every ancestor of the protected paths (and on the
// protected paths themselves) from inside the sandbox: none succeeds.
func TestAncestorRenameRace(t *testing.T) {
	requireSandbox(t)
	requireGit(t)
	w := newWorld(t)
	home := w.root
	cfg := filepath.Join(home, ".config", "acpd")
	proj := filepath.Join(home, "src", "proj")
	for _, d := range []string{cfg, proj, filepath.Join(home, "decoy")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	gitRepo(t, proj)
	p := w.policy()
	p.Roots = []string{home, proj}
	p.Hidden = []string{cfg}
	decoy := filepath.Join(home, "decoy")
	var pairs []string
	for _, target := range []string{filepath.Join(home, ".config"), cfg, filepath.Join(home, "src"), proj, filepath.Join(proj, ".git"), filepath.Join(proj, ".git", "hooks")} {
		pairs = append(pairs, target+":"+decoy)
	}
	const rounds = 500 // × 4 threads × 6 targets × 3 operations
	before := map[string]uint64{}
	for _, pair := range pairs {
		from, _, _ := strings.Cut(pair, ":")
		before[from] = inode(t, from)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary, where the sandbox's private /tmp shows it.
	if err := os.Link(self, filepath.Join(home, "sandbox.test")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(home, "sandbox.test"), pairs...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), attackerEnv+"="+strconv.Itoa(rounds))
	if err := p.Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("racer: %v: %s", err, out)
	}
	if strings.TrimSpace(string(out)) != "won 0" {
		t.Fatalf("rename attempts succeeded inside the sandbox: %s", out)
	}
	for from, ino := range before {
		if inode(t, from) != ino {
			t.Errorf("%s was replaced", from)
		}
	}
	if _, err := os.Lstat(decoy); err != nil {
		t.Errorf("decoy: %v", err)
	}
}

// attacker runs renameRace when the test binary was started as the racer.
func attacker() {
	if n, err := strconv.Atoi(os.Getenv(attackerEnv)); err == nil {
		renameRace(os.Args[1:], n)
	}
}

// TestUserGitConfigReadOnly: in a session rooted at the home folder the
// user's global git configuration is read (git sees user.name) but cannot
// be changed or replaced; a missing one is reported by Unprotected.
func TestUserGitConfigReadOnly(t *testing.T) {
	requireSandbox(t)
	requireGit(t)
	w := newWorld(t)
	home := w.root
	global := filepath.Join(home, ".gitconfig")
	if err := os.WriteFile(global, []byte("[user]\n\tname = Someone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := w.policy()
	p.ReadOnly = []string{global, filepath.Join(home, ".config", "git")}
	run := func(script string) string { return "export HOME=" + home + "; " + script }
	if out := mustRun(t, p, home, run(`git config --global user.name`)); strings.TrimSpace(out) != "Someone" {
		t.Fatalf("git config read: %q", out)
	}
	mustFail(t, p, home, run(`git config --global core.fsmonitor "touch pwned"`))
	mustFail(t, p, home, run(`mv .gitconfig g`))
	mustFail(t, p, home, run(`echo x > .gitconfig`))
	if b, _ := os.ReadFile(global); !strings.Contains(string(b), "Someone") || strings.Contains(string(b), "fsmonitor") {
		t.Fatalf(".gitconfig changed: %s", b)
	}
	if got := p.Unprotected(); !slices.Contains(got, filepath.Join(home, ".config", "git")) || slices.Contains(got, global) {
		t.Errorf("Unprotected = %q, want the missing ~/.config/git", got)
	}
}
