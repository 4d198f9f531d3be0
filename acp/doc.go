// Package acp is the typed surface of the Agent Client Protocol, generated
// from the pinned ACP schema (go generate ./acp): the protocol's types, the
// Agent and Client interfaces (one small interface per optional method),
// their dispatchers AgentHandler and ClientHandler, which serve a
// jsonrpc.Conn, and the typed callers AgentConn and ClientConn on one.
//
// The types are generated from the unstable schema as a superset of the
// stable one, in one package, because the unstable schema extends stable
// definitions (PromptResponse.usage, ClientCapabilities.plan and
// .subagents, SessionUpdate's plan_update and subagent_update, …) and Go
// cannot add a field to a struct from another file or package.
// types_gen.go holds what the stable schema defines, every field and
// variant only the unstable schema adds documented as UNSTABLE;
// unstable_gen.go holds the definitions only the unstable schema has. The
// methods (methods_gen.go) are the stable schema's. An UNSTABLE property of
// a stable definition that does not decode is taken as absent (the schema's
// x-deserialize-default-on-error), so a peer's draft field never fails a
// whole message; the stable properties keep their strict decoding. Whoever builds a
// message keeps it stable by leaving the UNSTABLE parts unset unless the
// peer negotiated them (a capability, or the unstable schema's own rule,
// such as PromptResponse.usage, which needs none); acpd's tests validate
// what it sends against the stable schema when nothing unstable was
// negotiated, and against the unstable schema otherwise.
//
// Unmarshal decodes what acpd handles as an agent strictly (exact keys, no
// duplicates, closed unions held to their variants); UnmarshalLenient
// decodes what it receives as a client, keeping the variants a newer schema
// adds. The JSON-RPC transport itself (framing, scheduling, cancellation,
// stdout protection) is package acpd/acp/jsonrpc, which knows no ACP type;
// acp/internal/strict holds the strict decoding both share.
package acp
