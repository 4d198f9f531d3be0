package task

import (
	"context"

	"acpd/acp"
	"acpd/permissions"
	"acpd/tools"
)

// PolicyEnv is env as a sub-agent's tools see it: decide settles each of
// their calls without asking the user (a call it would ask about is
// refused; its context is the call's, as Sub.Pre returned it), and their progress is not reported as tool calls of their own.
// It is what a Host puts in Sub.Env.
func PolicyEnv(env tools.Env, decide func(context.Context, permissions.Call) permissions.Decision) tools.Env {
	return policyEnv{env, decide}
}

type policyEnv struct {
	tools.Env
	decide func(context.Context, permissions.Call) permissions.Decision
}

func (e policyEnv) Authorize(ctx context.Context, c *tools.Call, req permissions.Call, upd acp.ToolCallUpdate) (bool, string) {
	d := e.decide(ctx, req)
	if d.Action == permissions.Allow {
		return true, ""
	}
	return false, "Not allowed in a sub-agent (" + d.Reason + "); report what you need to the agent that called you."
}

// AuthorizeShowing is Authorize: a sub-agent never asks, so it has nothing
// to show.
func (e policyEnv) AuthorizeShowing(ctx context.Context, c *tools.Call, req permissions.Call, upd acp.ToolCallUpdate, _ func() []acp.ToolCallContent) (bool, string) {
	return e.Authorize(ctx, c, req, upd)
}

func (e policyEnv) Update(u acp.ToolCallUpdate) {}
