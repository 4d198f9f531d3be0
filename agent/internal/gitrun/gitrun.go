// Package gitrun runs git for acpd itself (the system prompt's repository
// facts, /review's diff) so that the repository's own configuration
// cannot run a command: its fsmonitor, hooks, external diff, text
// conversion and filter drivers are turned off on the command line
// (diff, show and log always get --no-ext-diff and --no-textconv), git
// never prompts or takes optional locks, and where a sandbox policy is
// given git runs under it.
//
// A Runner may be used concurrently.
package gitrun

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"runtime"
	"strings"

	"acpd/sandbox"
)

// Runner runs git in Dir.
type Runner struct {
	// Dir is where git runs.
	Dir string
	// Env is git's whole environment (the session's child environment).
	Env []string
	// Sandbox, when not nil, is the policy git runs under (a read-only,
	// offline one is what acpd passes). A machine without a sandbox runs
	// git with only the command-line hardening.
	Sandbox *sandbox.Policy
}

// Run runs git args and returns its standard output. A failure's error
// carries git's standard error.
func (r Runner) Run(ctx context.Context, args ...string) ([]byte, error) {
	pre := []string{"--no-pager", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + devNull()}
	pre = append(pre, r.noFilters(ctx)...)
	if len(args) > 0 && (args[0] == "diff" || args[0] == "show" || args[0] == "log") {
		// External diff and text conversion commands run only when asked
		// for on the command line, whatever the configuration says.
		args = append([]string{args[0], "--no-ext-diff", "--no-textconv"}, args[1:]...)
	}
	cmd := exec.CommandContext(ctx, "git", append(pre, args...)...)
	cmd.Dir = r.Dir
	cmd.Env = append(r.Env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if r.Sandbox != nil {
		if err := r.Sandbox.Wrap(cmd); err != nil && !errors.Is(err, sandbox.ErrUnavailable) {
			return nil, err
		}
	}
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return out, errors.New(msg)
		}
	}
	return out, err
}

// noFilters are -c options emptying every filter driver command the
// configuration names (reading it runs nothing), so that git runs none.
func (r Runner) noFilters(ctx context.Context) []string {
	cmd := exec.CommandContext(ctx, "git", "config", "--name-only", "--get-regexp", `^filter\..*\.(clean|smudge|process)$`)
	cmd.Dir = r.Dir
	cmd.Env = append(r.Env, "GIT_TERMINAL_PROMPT=0")
	out, _ := cmd.Output()
	var opts []string
	for _, name := range strings.Fields(string(out)) {
		opts = append(opts, "-c", name+"=")
	}
	return opts
}

func devNull() string {
	if runtime.GOOS == "windows" {
		return "NUL"
	}
	return "/dev/null"
}
