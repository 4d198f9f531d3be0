// Package agent is acpd's ACP agent: it answers an editor's requests
// (initialize, session lifecycle, modes and config options, prompts), runs
// each prompt turn against a model backend, and reports everything the editor
// shows as session/update notifications.
//
// The tools the model calls live elsewhere: the built-in ones in package
// tools, a session's MCP tools, resource tools and prompt commands in
// tools/mcptools. A tool sees its session only through tools.Env, which
// agent implements (toolenv.go); agent hands a response's calls to
// package tools/batch, which runs them and reports their lifecycle
// (calls.go), asks permission (permission.go, deciding
// with package permissions) and answers MCP elicitation through the
// editor (mcp_elicit.go). A session's MCP servers (their start, tools,
// prompt commands, sampling and App views) are package mcpbridge's, which
// sees the session through mcpbridge.Session (mcp.go). The rest is the
// agent's own: handlers and lifecycle (agent.go, lifecycle.go; session/load
// replays through package session/replay), settings (settings.go),
// persistence (session.go), and the turn: turn.go holds the loop (a response's events become its
// message through model.Assembler), prompt.go the
// session's system prompt (built by package sysprompt) and prompt context
// (the prompt's content converted by package promptin),
// compact.go compaction (package compact) and usage, commands.go the slash
// commands. The task tool's sub-agent (tools/task) runs through
// task.Host, which toolenv.go implements; internal/loopguard stops a model
// repeating a call.
//
// # Concurrency
//
// One [Agent] serves one connection. Requests run concurrently (the acp
// package gives each its own goroutine); each [session] guards its own state
// with a mutex, and at most one prompt turn runs per session at a time. A turn
// owns every goroutine it starts and waits for them before its reply is sent,
// so no session/update of a turn follows the turn's reply.
//
// # Persistence
//
// Every session has an append-only log in the session store (package
// session) with three record kinds:
//
//   - "update": a session/update payload exactly as the client was shown it
//     (replayed by session/load, see package session/replay);
//   - "message": one model-facing transcript message (model.Message), so a
//     loaded or resumed session continues with the model exactly;
//   - "meta": a change of mode, model, reasoning level or title.
//
// The log is synced at turn boundaries and whenever a setting changes.
// Streamed text reaches the log and the client through package
// internal/outbox, which merges chunks.
package agent
