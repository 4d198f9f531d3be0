// Package agent is acpd's ACP agent: it answers an editor's requests
// (initialize, session lifecycle, modes and config options, prompts), runs
// each prompt turn against a model backend, and reports everything the editor
// shows as session/update notifications.
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
//     (replayed by session/load);
//   - "message": one model-facing transcript message (model.Message), so a
//     loaded or resumed session continues with the model exactly;
//   - "meta": a change of mode, model, reasoning level or title.
//
// The log is synced at turn boundaries and whenever a setting changes.
package agent
