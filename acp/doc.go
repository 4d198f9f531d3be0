// Package acp is the typed surface of the Agent Client Protocol, generated
// from the pinned ACP schema (go generate ./acp): the protocol's types, the
// Agent and Client interfaces (one small interface per optional method),
// their dispatchers AgentHandler and ClientHandler, which serve a
// jsonrpc.Conn, and the typed callers AgentConn and ClientConn on one.
//
// Unmarshal decodes what acpd handles as an agent strictly (exact keys, no
// duplicates, closed unions held to their variants); UnmarshalLenient
// decodes what it receives as a client, keeping the variants a newer schema
// adds. The JSON-RPC transport itself (framing, scheduling, cancellation,
// stdout protection) is package acpd/acp/jsonrpc, which knows no ACP type;
// acp/internal/strict holds the strict decoding both share.
package acp
