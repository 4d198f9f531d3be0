package permissions

import "testing"

func TestGitWrite(t *testing.T) {
	writes := map[string]string{
		"git add .":                                "git add",
		"git commit -m 'x'":                        "git commit",
		"git -C sub -c user.name=x commit -am y":   "git commit",
		"git --no-pager --git-dir .git reset HEAD": "git reset",
		"make && git add -A && git commit -m done": "git add",
		"env GIT_DIR=.git git checkout main":       "git checkout",
		"sudo /usr/bin/git fetch":                  "git fetch",
		`sh -c "git push origin main"`:             "git push",
		"git branch new":                           "git branch",
		"git branch -D old":                        "git branch",
		"git tag v1":                               "git tag",
		"git stash":                                "git stash",
		"git stash pop":                            "git stash",
		"git config core.fsmonitor 'touch x'":      "git config",
		"git config --unset core.x":                "git config",
		"git config set core.x y":                  "git config",
		"git restore --staged f":                   "git restore",
		"git apply --index p.diff":                 "git apply",
		"git hash-object -w f":                     "git hash-object",
		"git symbolic-ref HEAD refs/heads/x":       "git symbolic-ref",
		"git $cmd":                                 "git (with a subcommand that is not a literal word)",
		"git remote add o https://x":               "git remote",
		"git worktree add ../wt":                   "git worktree",
	}
	for line, want := range writes {
		if got, ok := GitWrite(line); !ok || got != want {
			t.Errorf("GitWrite(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
	for _, line := range []string{
		"git status", "git log --oneline", "git diff HEAD", "git show", "git -C sub status",
		"git branch", "git branch -a", "git branch --show-current", "git tag", "git tag -l 'v*'",
		"git stash list", "git config user.name", "git config --get user.name", "git config --list",
		"git config get user.name", "git remote -v", "git worktree list", "git restore f",
		"git apply --check p.diff", "git hash-object f", "git symbolic-ref HEAD", "git clone https://x y",
		"echo git commit", "grep -r 'git add' .", "ls", "go test ./...",
	} {
		if got, ok := GitWrite(line); ok {
			t.Errorf("GitWrite(%q) = %q, want no write", line, got)
		}
	}
}

func FuzzGitWrite(f *testing.F) {
	for _, s := range []string{"git add .", "git -C x config a b", `sh -c 'git commit'`, "git $x", "git config"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if sub, ok := GitWrite(line); ok && sub == "" {
			t.Fatalf("GitWrite(%q) writes but names no command", line)
		}
	})
}
