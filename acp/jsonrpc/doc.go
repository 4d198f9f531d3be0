// Package jsonrpc is the JSON-RPC 2.0 transport that carries the Agent
// Client Protocol: newline-delimited JSON messages over a byte stream
// (stdio), symmetric, so the same Conn serves acpd as an agent and as a
// client. It knows no ACP method or type: package acp builds the protocol's
// typed surface (the types, the dispatchers AgentHandler and ClientHandler,
// the typed callers AgentConn and ClientConn) on a Conn and a Handler.
//
// # The connection and github.com/sourcegraph/jsonrpc2
//
// Conn wraps a jsonrpc2.Conn, used only through its public API: the library
// runs the read loop over this package's jsonrpc2.ObjectStream and calls
// this package's jsonrpc2.Handler for every request and notification read.
// The wrapper adds what ACP needs and the library does not provide:
//
//   - Framing and validation (the ObjectStream): one message per line,
//     lines longer than Options.MaxLineBytes discarded in bounded memory,
//     and a strict envelope (exactly spelled members, no duplicates,
//     "jsonrpc": "2.0"); malformed input is answered with the JSON-RPC
//     error and the connection lives on, where the library's codecs would
//     end it. The stream decodes each line itself and keeps the message:
//     the library's decoding would re-encode params (losing the duplicate
//     keys acp.Unmarshal must see) and cannot represent every valid id
//     (negative, fractional, huge, null), which replies must echo exactly.
//     What the library decodes, with its own exported decoding, is a
//     ticket: the message's method and, for a request, its arrival number
//     as the id. The handler takes the kept message only when handed its
//     ticket; the library's documented contract that nothing else is read
//     while its handler runs keeps the two in step. The ticket costs about
//     33 allocations and 2 KB per inbound message, some 10% of a small
//     round trip's CPU time (BenchmarkRoundTrip, BenchmarkTicket).
//   - Scheduling: requests run concurrently, at most
//     Options.MaxConcurrentRequests at once; notifications run in arrival
//     order on one worker behind a bounded queue, except Options.Immediate
//     ones (session/cancel), handled on the read loop; "$/cancel_request"
//     cancels a running request, which is then answered -32800.
//   - Writing: replies, outbound requests and notifications are written by
//     this package, because the library's send path holds a lock that no
//     context can interrupt (a peer that stops reading would hang every
//     sender and Close), and its calls neither send "$/cancel_request" when
//     abandoned nor forget the abandoned call. Responses to our calls are
//     routed by the stream for the same reason; results and error objects
//     are decoded with the strict rules of acp.Unmarshal. AfterReply runs
//     code right after a reply is written; Arrival orders a handler's
//     message among all those read.
//
// ProtectStdout keeps stray writes to standard output off the protocol
// stream.
package jsonrpc
