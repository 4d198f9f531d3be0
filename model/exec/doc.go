// Package exec is a [model.Backend] served by a plug-in: a program of the
// user's choosing that acpd starts and talks to over its standard input
// and output. Plug-ins let acpd use model APIs it has no built-in client
// for, local inference engines, or test doubles, in any language.
//
// # Process
//
// One plug-in process serves one configured backend. acpd starts it lazily
// (at the first request or model listing), keeps it running for later
// requests, and starts it again at the next request if it has exited.
// The process runs in its own process group, in the configured directory,
// with acpd's environment minus every variable whose name looks like a
// credential (the one filter acpd applies to every child, see
// internal/childenv: names containing KEY, TOKEN, SECRET, PASSWORD, PASSWD,
// PASS, CREDENTIAL(S), CREDS, AUTH, COOKIE or PRIVATE as a "_"-separated
// word, or ending in KEY, TOKEN, SECRET or PASSWORD, and more) unless
// `[env] allow` names them, plus the extra variables the configuration
// gives it; a plug-in that needs a credential gets it from the
// configuration, explicitly.
//
// The plug-in's standard error goes to acpd's log: each line at debug
// level (long lines cut), and the last one is quoted when the plug-in
// fails. When acpd closes the backend it sends SIGTERM to the plug-in's
// process group, then SIGKILL two seconds later. A plug-in must also exit
// when its standard input reaches end of file (acpd went away).
//
// # Framing
//
// Both directions carry UTF-8 JSON objects, one per line, terminated by
// "\n" ("\r\n" is accepted). Every object has "v": 1, the protocol
// version. Lines a plug-in writes may not exceed 16 MiB; lines acpd writes
// have no limit (a request carries the whole conversation, images
// included). Empty lines are ignored. A plug-in writing anything else to
// its standard output (a line that is not a JSON object, a wrong "v", an
// over-long line) breaks the protocol: acpd kills it and fails its
// in-flight requests with a retryable model.ErrServer error.
//
// # Handshake
//
// acpd's first line is
//
//	{"v":1,"type":"hello","acpd":"1.2.0"}
//
// and the plug-in's first line must answer it, within the handshake
// timeout (10 seconds by default), with the models it serves:
//
//	{"v":1,"type":"hello","models":[{"id":"echo-1","name":"Echo","contextWindow":8192,"tools":true}]}
//
// The entries are [model.ModelInfo] objects; "id" is required. A plug-in
// that cannot serve this acpd refuses with an error object instead of
// models: {"v":1,"type":"hello","error":{"message":"needs acpd >= 2.0"}}.
// A hello with another "v", a refusal, another line, silence or an exit
// before the answer fail the backend's start with a non-retryable error
// (model.ErrInvalidRequest) naming the cause.
//
// # Requests
//
// acpd writes one line per model request, with an id unique for the
// process's lifetime:
//
//	{"v":1,"type":"request","id":"r1","request":{"model":"echo-1","messages":[...],...}}
//
// "request" is the [model.Request] JSON, unchanged. It holds every part of
// the conversation, including the signatures and opaque data other
// providers produced (see [model.Part].Provider): a plug-in forwarding to
// a provider that verifies them must pass on only its own.
//
// The plug-in answers with lines carrying the request's id, each holding
// one [model.Event] JSON object,
//
//	{"v":1,"id":"r1","event":{"type":"text","text":"Hel"}}
//	{"v":1,"id":"r1","event":{"type":"text","text":"lo"}}
//	{"v":1,"id":"r1","event":{"type":"usage","usage":{"inputTokens":12,"outputTokens":2}}}
//	{"v":1,"id":"r1","event":{"type":"finish","finish":"end_turn"}}
//
// and ends the request with a finish event, or with an error instead:
//
//	{"v":1,"id":"r1","error":{"kind":"overloaded","message":"busy","status":529,"retryAfterMs":2000}}
//
// "kind" is a [model.ErrorKind] ("auth", "quota", "rate_limit",
// "overloaded", "server", "network", "context_overflow",
// "invalid_request"); an unknown or missing kind is "server". "status"
// and "retryAfterMs" are optional. The kind decides whether acpd retries.
//
// Events follow the [model.Backend] contract: text and reasoning deltas,
// reasoning_done, tool_start / tool_delta / tool_done with a toolCallId
// unique within the response (tool_done's "input" is the complete JSON
// arguments), usage, and finish with one of "end_turn", "tool_use",
// "max_tokens", "refusal". Events carrying a signature or opaque data
// should name the plug-in's dialect in "provider". An event of an unknown
// type, a finish without a known reason, a usage event without usage, a
// tool event without toolCallId or a tool_done without "input" whose
// tool_delta arguments are not valid JSON fails that request (model.ErrServer);
// acpd then cancels it and forgets the id.
//
// # Concurrency and cancellation
//
// acpd may send a request before the previous ones have finished; the
// plug-in may answer them in any order and interleave their lines (it
// must not interleave bytes within a line). When the consumer of a
// request stops early (the user cancelled the turn, or the agent needs no
// more), acpd writes
//
//	{"v":1,"type":"cancel","id":"r1"}
//
// and ignores anything the plug-in still sends for that id; the plug-in
// should stop working on it. Lines for unknown ids are ignored.
//
// A plug-in that exits, or closes its standard output, while requests are
// in flight fails them with a retryable model.ErrNetwork error; the next
// request starts a new process.
//
// testdata/plugins/echo_plugin.py in the repository is a complete plug-in
// of a few dozen lines.
package exec
