package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"acpd/acp"
	"acpd/agent/internal/gitrun"
	"acpd/agent/internal/review"
	"acpd/model"
	"acpd/sandbox"
)

// reviewPrompt is what /review ARGS asks the model; a user error (no
// repository, nothing to review, a bad argument) is the returned error,
// shown as the agent's answer without a model request.
func (s *sess) reviewPrompt(ctx context.Context, args string) (string, error) {
	t, err := review.Parse(args)
	if err != nil {
		return "", err
	}
	return review.Prompt(ctx, s.git, t)
}

// git runs git in the session's directory as acpd's own commands do
// (package gitrun), under the session's sandbox made read-only and
// offline: /review's diffs.
func (s *sess) git(ctx context.Context, args ...string) ([]byte, error) {
	off := false
	p := toolEnv{s}.Sandbox().Tighten(sandbox.ReadOnly, &off, []string{})
	return gitrun.Runner{Dir: s.cwd, Env: s.childEnv(), Sandbox: &p}.Run(ctx, args...)
}

// quickGit is git with gitrun's command-line hardening only, which keeps
// the repository's commands from running without a sandbox's start-up
// cost: the system prompt's few facts at a session's first prompt.
func (s *sess) quickGit(ctx context.Context, args ...string) ([]byte, error) {
	return gitrun.Runner{Dir: s.cwd, Env: s.childEnv()}.Run(ctx, args...)
}

// showFindings gives the review's findings in the last answer to the
// editor as one completed tool call whose locations it can open: each
// finding whose file is inside the session's roots.
func (s *sess) showFindings(ctx context.Context) {
	var answer string
	s.mu.Lock()
	for i := len(s.transcript) - 1; i >= 0; i-- {
		if m := s.transcript[i]; m.Role == model.RoleAssistant {
			answer = m.Text()
			break
		}
	}
	s.mu.Unlock()
	found := review.Findings(answer)
	if len(found) == 0 {
		return
	}
	top, err := s.git(ctx, "rev-parse", "--show-toplevel")
	root := strings.TrimSpace(string(top))
	if err != nil || root == "" {
		root = s.cwd
	}
	var locs []acp.ToolCallLocation
	var list strings.Builder
	for _, f := range found {
		r, err := toolEnv{s}.Resolve(filepath.Join(root, f.Path))
		if err != nil || r.Root == "" {
			continue
		}
		line := uint32(f.Line)
		locs = append(locs, acp.ToolCallLocation{Path: r.Path, Line: &line})
		fmt.Fprintf(&list, "- [%s] %s — %s:%d\n", f.Priority, f.Title, r.Rel, f.Line)
	}
	if len(locs) == 0 {
		return
	}
	title := fmt.Sprintf("Review: %d findings", len(locs))
	if len(locs) == 1 {
		title = "Review: 1 finding"
	}
	name := "review"
	s.notify(ctx, acp.SessionUpdate{ToolCall: &acp.ToolCall{
		ToolCallID: acp.ToolCallID(newID("review_")), Title: title, Name: &name, Kind: acp.ToolKindRead,
		Status: acp.ToolCallStatusCompleted, Locations: locs,
		Content: []acp.ToolCallContent{{Content: &acp.Content{Content: acp.ContentBlock{Text: &acp.TextContent{Text: list.String()}}}}},
	}})
}

// reviewRefusal is the answer to a /review that cannot run.
func reviewRefusal(err error) string {
	var nothing review.ErrNothing
	if errors.As(err, &nothing) {
		return nothing.Error()
	}
	return "Cannot review: " + err.Error()
}
