// Package review is what /review asks the model: which changes to review
// (the uncommitted ones, those against a base branch, or one commit), the
// reviewing prompt with the diff, and the file and line locations of the
// findings in the model's answer, which the editor shows as clickable
// locations.
//
// The package runs no process itself: the caller passes a Git function that
// runs git in the session's directory (under the session's sandbox,
// read-only and without network), so a hostile repository's configuration
// (filters, fsmonitor) cannot act outside it.
package review

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"acpd/internal/lazy"
)

// Kind is what a review covers.
type Kind int

// The kinds of review.
const (
	// Uncommitted is the working tree and index against HEAD, untracked
	// files included.
	Uncommitted Kind = iota
	// Base is the changes of HEAD against its merge base with a branch.
	Base
	// Commit is one commit.
	Commit
)

// Target is what to review.
type Target struct {
	Kind Kind
	// Ref is the base branch (Base) or the commit (Commit).
	Ref string
	// Focus is the user's extra words ("/review focus on error handling").
	Focus string
}

// Usage is the command's input hint.
const Usage = "nothing for the uncommitted changes, `base BRANCH`, or `commit SHA` (then what to focus on)"

// Parse reads /review's argument: "" or "uncommitted", "base BRANCH",
// "commit SHA"; anything else is the focus of a review of the uncommitted
// changes.
func Parse(args string) (Target, error) {
	f := strings.Fields(args)
	if len(f) == 0 {
		return Target{}, nil
	}
	rest := func(n int) string {
		if len(f) <= n {
			return ""
		}
		return strings.Join(f[n:], " ")
	}
	switch strings.ToLower(f[0]) {
	case "uncommitted", "changes":
		return Target{Focus: rest(1)}, nil
	case "base", "branch", "against":
		if len(f) < 2 {
			return Target{}, fmt.Errorf("/review base needs a branch: /review base main")
		}
		if !safeRef(f[1]) {
			return Target{}, fmt.Errorf("/review base: %q is not a branch name", f[1])
		}
		return Target{Kind: Base, Ref: f[1], Focus: rest(2)}, nil
	case "commit":
		if len(f) < 2 {
			return Target{}, fmt.Errorf("/review commit needs a commit: /review commit HEAD~1")
		}
		if !safeRef(f[1]) {
			return Target{}, fmt.Errorf("/review commit: %q is not a commit", f[1])
		}
		return Target{Kind: Commit, Ref: f[1], Focus: rest(2)}, nil
	}
	return Target{Focus: strings.Join(f, " ")}, nil
}

// safeRef reports whether ref can be passed to git as a revision: no
// option (leading "-") and no whitespace or control characters.
func safeRef(ref string) bool {
	if ref == "" || strings.HasPrefix(ref, "-") {
		return false
	}
	for _, r := range ref {
		if r <= ' ' || r == 0x7f {
			return false
		}
	}
	return true
}

// Git runs git with args in the session's directory and returns its
// standard output.
type Git func(ctx context.Context, args ...string) ([]byte, error)

// MaxDiff bounds the diff put in the prompt; the model reads the rest of a
// longer change with its tools.
const MaxDiff = 192 << 10

// diffArgs make git's output plain (the Git function keeps the
// repository's external diff and text conversion commands from running).
var diffArgs = []string{"--no-color", "--stat", "--patch", "--find-renames"}

// ErrNothing is returned by Prompt when there is nothing to review.
type ErrNothing struct{ What string }

func (e ErrNothing) Error() string { return "There is nothing to review: " + e.What + "." }

// Prompt collects the changes t names and returns the reviewing prompt
// for the model.
func Prompt(ctx context.Context, git Git, t Target) (string, error) {
	if _, err := git(ctx, "rev-parse", "--git-dir"); err != nil {
		return "", fmt.Errorf("/review needs a git repository: %w", err)
	}
	var what, diff string
	switch t.Kind {
	case Uncommitted:
		what = "the uncommitted changes (working tree and index against HEAD, and untracked files)"
		args := append([]string{"diff", "HEAD"}, diffArgs...)
		if _, err := git(ctx, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
			// No commit yet: everything staged is new.
			args = append([]string{"diff", "--cached"}, diffArgs...)
		}
		out, err := git(ctx, args...)
		if err != nil {
			return "", fmt.Errorf("git diff: %w", err)
		}
		diff = string(out)
		untracked, err := git(ctx, "ls-files", "--others", "--exclude-standard")
		if err != nil {
			return "", fmt.Errorf("git ls-files: %w", err)
		}
		if u := strings.TrimSpace(string(untracked)); u != "" {
			diff += "\nUntracked files (new, not in the diff; read them):\n" + u + "\n"
		}
		if strings.TrimSpace(diff) == "" {
			return "", ErrNothing{"no uncommitted changes (use `/review base BRANCH` or `/review commit SHA`)"}
		}
	case Base:
		base, err := git(ctx, "merge-base", "HEAD", t.Ref)
		if err != nil {
			return "", fmt.Errorf("no merge base of HEAD and %s: %w", t.Ref, err)
		}
		b := strings.TrimSpace(string(base))
		what = fmt.Sprintf("the changes of the current branch against %s (since their merge base %s)", t.Ref, short(b))
		out, err := git(ctx, append([]string{"diff", b}, diffArgs...)...)
		if err != nil {
			return "", fmt.Errorf("git diff: %w", err)
		}
		diff = string(out)
		if strings.TrimSpace(diff) == "" {
			return "", ErrNothing{"no changes against " + t.Ref}
		}
	case Commit:
		out, err := git(ctx, append([]string{"show", "--format=commit %H%nAuthor: %an%n%n%B", t.Ref}, diffArgs...)...)
		if err != nil {
			return "", fmt.Errorf("git show %s: %w", t.Ref, err)
		}
		what = "commit " + t.Ref
		diff = string(out)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Review %s. You are reviewing code someone else wrote: find real problems, do not change any file.\n\n", what)
	b.WriteString(instructions)
	if t.Focus != "" {
		fmt.Fprintf(&b, "\nThe user asks you to focus on: %s\n", t.Focus)
	}
	if len(diff) > MaxDiff {
		cut := strings.LastIndexByte(diff[:MaxDiff], '\n') + 1
		fmt.Fprintf(&b, "\nThe diff is %d bytes; the first %d are below. Read the rest of the changed files with your tools.\n", len(diff), cut)
		diff = diff[:cut]
	}
	b.WriteString("\n```diff\n")
	b.WriteString(strings.ReplaceAll(diff, "```", "` ` `"))
	if !strings.HasSuffix(diff, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString("```\n")
	return b.String(), nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// instructions ask for prioritised findings in a form Locations reads.
const instructions = `Read the surrounding code where the diff alone does not tell you enough. Report only issues the author would want to fix: bugs, security problems, data loss, races, broken error handling, missing tests for risky logic, and clear maintainability problems. Do not report style nits or speculation.

Answer with the findings, most important first, each as one list item in exactly this form:

- [P0] Title — path/to/file.go:LINE
  Why it is a problem and what to do, in one to three sentences.

P0 is a release blocker, P1 must be fixed soon, P2 should be fixed, P3 is minor. The path is relative to the repository root and LINE is the line in the new version of the file (a range as LINE-LINE). End with one line giving your overall verdict: "The change looks correct." or "The change needs work.". If you find nothing worth reporting, say so in one sentence.
`

// Finding is one location in the model's answer.
type Finding struct {
	// Priority is "P0".."P3", or "" when the item had none.
	Priority string
	Title    string
	// Path is as the model wrote it; Line is 1-based.
	Path string
	Line int
}

// findingRE matches a finding's list item: "- [P1] Title — path:12" (or
// with "-" / ":" instead of the dash, and an optional range and backticks).
var findingRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile("(?m)^\\s*(?:[-*]|\\d+\\.)\\s+(?:\\*\\*)?\\[(P[0-3])\\](?:\\*\\*)?\\s*(.*?)\\s*(?:—|–|-|:)?\\s*`?([^\\s`:]+):(\\d+)(?:-\\d+)?`?\\s*$")
}}

// Findings reads the findings in a reviewing answer, in order.
func Findings(answer string) []Finding {
	var out []Finding
	for _, m := range findingRE.Get().FindAllStringSubmatch(answer, -1) {
		line, err := strconv.Atoi(m[4])
		if err != nil || line < 1 {
			continue
		}
		title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(m[2]), "—–-:"))
		out = append(out, Finding{Priority: m[1], Title: title, Path: filepath.FromSlash(m[3]), Line: line})
	}
	return out
}
