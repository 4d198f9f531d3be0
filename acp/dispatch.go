package acp

import (
	"context"
	"encoding/json"
	"fmt"

	"acpd/acp/jsonrpc"
)

// The typed ACP surface is generated into methods_gen.go: the Agent and
// Client interfaces, the per-method interfaces of the optional methods, the
// dispatchers AgentHandler and ClientHandler, and the typed callers on
// AgentConn and ClientConn. This file holds what they share.

// ClientConn is an agent's side of a connection: its methods call the
// client's methods (and send the client's notifications) with typed params
// and results. The zero value is not usable; see NewClientConn.
type ClientConn struct{ conn *jsonrpc.Conn }

// NewClientConn returns the typed calls of an agent to the client on c.
func NewClientConn(c *jsonrpc.Conn) ClientConn { return ClientConn{c} }

// Conn returns the underlying connection.
func (c ClientConn) Conn() *jsonrpc.Conn { return c.conn }

func (c ClientConn) call(ctx context.Context, method string, params, result any) error {
	return c.conn.Call(ctx, method, params, result)
}

// AgentConn is a client's side of a connection: its methods call the
// agent's methods (and send the agent's notifications) with typed params and
// results. The zero value is not usable; see NewAgentConn.
type AgentConn struct{ conn *jsonrpc.Conn }

// NewAgentConn returns the typed calls of a client to the agent on c.
func NewAgentConn(c *jsonrpc.Conn) AgentConn { return AgentConn{c} }

// Conn returns the underlying connection.
func (c AgentConn) Conn() *jsonrpc.Conn { return c.conn }

// call decodes the agent's results leniently (see UnmarshalLenient): what a
// client receives it only consumes, and a newer agent's unknown variants
// must not fail the call.
func (c AgentConn) call(ctx context.Context, method string, params, result any) error {
	var raw json.RawMessage
	if err := c.conn.Call(ctx, method, params, &raw); err != nil || result == nil {
		return err
	}
	if err := unmarshalStrict(raw, result, true, false); err != nil {
		return fmt.Errorf("acp: decoding result: %w", err)
	}
	return nil
}

// decodeParams decodes params into p with Unmarshal, or UnmarshalLenient
// when lenient; absent or null params count as an empty object.
func decodeParams(params json.RawMessage, p any, lenient bool) error {
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	if err := unmarshalStrict(params, p, false, !lenient); err != nil {
		return jsonrpc.ErrInvalidParams(err)
	}
	return nil
}

// serveRequest decodes params into P and calls f.
func serveRequest[P, R any](ctx context.Context, params json.RawMessage, lenient bool, f func(context.Context, *P) (*R, error)) (any, error) {
	var p P
	if err := decodeParams(params, &p, lenient); err != nil {
		return nil, err
	}
	r, err := f(ctx, &p)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// serveNotification decodes params into P and calls f.
func serveNotification[P any](ctx context.Context, params json.RawMessage, lenient bool, f func(context.Context, *P) error) error {
	var p P
	if err := decodeParams(params, &p, lenient); err != nil {
		return err
	}
	return f(ctx, &p)
}
