package client

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"acpd/acp"
	"acpd/acp/jsonrpc"
)

// elicitAgent is an in-process agent that reports the client's
// capabilities and, once initialized, asks it a form question; answers
// receives the client's answer (or error).
func elicitAgent(caps chan<- *acp.ClientCapabilities, answers chan<- any) *ServeTransport {
	return &ServeTransport{Serve: func(serveCtx context.Context, r io.Reader, w io.WriteCloser) error {
		var conn *jsonrpc.Conn
		ready := make(chan struct{})
		conn = jsonrpc.NewConn(serveCtx, r, w, func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method != acp.AgentMethodInitialize {
				return nil, jsonrpc.ErrMethodNotFound(method)
			}
			var req acp.InitializeRequest
			if err := json.Unmarshal(params, &req); err != nil {
				return nil, err
			}
			caps <- req.ClientCapabilities
			jsonrpc.AfterReply(ctx, func() {
				go func() {
					<-ready
					res, err := acp.NewClientConn(conn).CreateElicitation(serveCtx, &acp.CreateElicitationRequest{Message: "Which?",
						Form: &acp.ElicitationFormMode{Session: &acp.ElicitationSessionScope{SessionID: "s"}, RequestedSchema: acp.ElicitationSchema{Type: acp.ElicitationSchemaTypeObject}}})
					if err != nil {
						answers <- err
						return
					}
					answers <- *res
				}()
			})
			return acp.InitializeResponse{ProtocolVersion: 1}, nil
		}, jsonrpc.Options{Logger: slog.New(slog.DiscardHandler)})
		close(ready)
		select {
		case <-conn.Done():
		case <-serveCtx.Done():
		}
		return nil
	}}
}

// With Options.Elicit the client advertises form elicitation and hands
// the agent's forms to it; without, it advertises none and declines.
func TestElicit(t *testing.T) {
	for _, withElicit := range []bool{true, false} {
		caps := make(chan *acp.ClientCapabilities, 1)
		answers := make(chan any, 1)
		o := Options{Cwd: t.TempDir()}
		if withElicit {
			o.Elicit = func(ctx context.Context, req acp.CreateElicitationRequest) (acp.CreateElicitationResponse, error) {
				if req.Message != "Which?" || req.Form == nil {
					t.Errorf("request %+v", req)
				}
				return acp.CreateElicitationResponse{Accept: &acp.ElicitationAcceptAction{}}, nil
			}
		}
		c, err := Dial(t.Context(), elicitAgent(caps, answers), o, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := <-caps
		if advertised := got.Elicitation != nil && got.Elicitation.Form != nil; advertised != withElicit {
			t.Errorf("Elicit set %v: capabilities %+v", withElicit, got.Elicitation)
		}
		switch a := (<-answers).(type) {
		case acp.CreateElicitationResponse:
			if withElicit && a.Accept == nil || !withElicit && a.Decline == nil {
				t.Errorf("Elicit set %v: answer %+v", withElicit, a)
			}
		default:
			t.Errorf("Elicit set %v: %v", withElicit, a)
		}
		c.Close()
	}
}
