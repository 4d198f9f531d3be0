// Package agent is acpd's ACP agent: it answers an editor's requests
// (initialize, session lifecycle, modes and config options, prompts), runs
// each prompt turn against a model backend, and reports everything the editor
// shows as session/update notifications.
//
// agent holds the handlers and the session lifecycle (agent.go,
// lifecycle.go), the settings (settings.go), persistence (session.go) and
// the turn (turn.go: the loop; prompt.go: the system prompt and prompt
// context; compact.go: compaction and usage; commands.go: the slash
// commands). What they build on lives in packages of its own:
//
//   - tools (the built-in tools), tools/mcptools (MCP tools, resource tools
//     and prompt commands) and tools/task (the sub-agent): a tool sees its
//     session only through tools.Env, which toolenv.go implements, and
//     task.Host; agent/internal/batch runs a response's calls (calls.go);
//     permission.go asks the user, deciding with package permissions;
//   - agent/internal/mcpbridge: a session's MCP servers (their start, tools,
//     prompt commands, sampling, OAuth and App views), through
//     mcpbridge.Session (mcp.go); MCP elicitation, which speaks ACP, is
//     mcp_elicit.go's;
//   - internal/outbox (the update queue and the chunk log), model.Assembler
//     (a streamed response), compact and internal/loopguard;
//   - under agent/internal, the packages only agent uses: replay (what
//     session/load replays), listing (session/list), handshake
//     (initialize's reply, the auth methods), turnerr (a turn's errors),
//     turnslot (one turn per session, its queue and its steering
//     messages; steer.go serves _session/steering), configopts (the settings as ACP
//     shows them), slash (acpd's slash commands), notice (a notice, or a
//     card where the client takes none), sysprompt, promptin and editor
//     (the editor's fs/* and terminal/*).
//
// # Concurrency
//
// One [Agent] serves one connection. Requests run concurrently (the acp
// package gives each its own goroutine); each session guards its own state
// with a mutex, and at most one prompt turn runs per session at a time
// (agent/internal/turnslot).
//
// A turn owns every goroutine it starts and waits for them before its
// reply is sent, so no session/update of a turn follows the turn's reply,
// with one exception: abandoned tool calls. Once a turn is cancelled, its
// running tool calls get batch.AbandonGrace (1 s) to return; a call that
// does not (stuck where its context cannot reach, such as a blocking
// system call) is abandoned: the turn ends without it, the call's result
// in the transcript says it was abandoned and its tool_call_update says
// failed. From then on the session owns the call's goroutine (sess.abandoned,
// handed over through batch.Options.Abandon), not the turn: later turns do
// not wait for it, and it may still send its own tool_call_updates after
// the cancelled turn's reply. Closing the session (session/close, a
// failed session/new or load, the end of [Agent.Serve]) cancels and awaits
// the running turn, then waits for the abandoned calls, at most
// abandonedWait (10 s), before it closes the session's jobs, MCP servers,
// file broker and log; a call still stuck then is logged and left to the
// process, which nothing can make it leave sooner, with the one goroutine
// that waits for it.
//
// # Persistence
//
// Every session has an append-only log in the session store (package
// session) with these record kinds:
//
//   - "update": a session/update payload exactly as the client was shown it
//     (replayed by session/load, see package agent/internal/replay);
//   - "message": one model-facing transcript message (model.Message), so a
//     loaded or resumed session continues with the model exactly;
//   - "meta": a change of mode, model, reasoning level or title;
//   - "turn": the start of a model turn, whose sequence number names the
//     turn in the session's checkpoints (checkpoint.go: /undo, /rewind,
//     session/fork and /fork, see docs/checkpoints.md);
//   - "rewind" (session.KindRewind): the records since a turn left the
//     session; session.Live applies it on every load.
//
// The log is synced at turn boundaries and whenever a setting changes.
// Streamed text reaches the log and the client through package
// internal/outbox, which merges chunks. A record the log could not take (a
// full disk, a record that does not encode) is never dropped silently: the
// session remembers the first failure until the user is told, the running
// turn stops before its next model request, and the prompt ends with an
// error (turnerr.NotSaved) and an error notice.
package agent
