package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"acpd/acp"
	"acpd/mcpclient"
)

// mcpElicit answers an MCP server's request for user input by forwarding it
// to the editor as ACP elicitation/create (a form, or a URL to open),
// scoped to the session. It answers "decline" without asking when the
// editor does not advertise that mode, when a form's schema does not map
// to ACP's, or when no prompt turn is running (nobody is there to answer).
// Servers are only told the client elicits when the editor does
// (elicitation). The request ends with the running turn: session/cancel
// answers "cancel".
func (s *sess) mcpElicit(ctx context.Context, server string, req mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
	decline := mcpclient.ElicitResult{Action: mcpclient.ElicitDecline}
	caps := s.a.clientCapabilities()
	if caps.Elicitation == nil {
		return decline, nil
	}
	var form *acp.ElicitationFormMode
	var link *acp.ElicitationURLMode
	switch {
	case req.Mode == "form" && caps.Elicitation.Form != nil:
		schema, err := elicitationSchema(req.Schema)
		if err != nil {
			s.a.log.Warn("MCP elicitation declined", "session", s.id, "server", server, "err", err)
			return decline, nil
		}
		form = &acp.ElicitationFormMode{RequestedSchema: schema, Session: &acp.ElicitationSessionScope{SessionID: s.id}}
	case req.Mode == "url" && caps.Elicitation.URL != nil && req.URL != "":
		id := req.ID
		if id == "" {
			id = newID("el_")
		}
		link = &acp.ElicitationURLMode{ElicitationID: acp.ElicitationID(id), URL: req.URL, Session: &acp.ElicitationSessionScope{SessionID: s.id}}
	default:
		return decline, nil
	}
	tctx, running := s.slot.Running()
	peer, ok := s.a.peer()
	if !running || !ok {
		return decline, nil
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	unlink := context.AfterFunc(tctx, stop)
	defer unlink()

	msg := req.Message
	if server != "" {
		msg = fmt.Sprintf("%s (MCP server %q)", req.Message, server)
	}
	areq := acp.CreateElicitationRequest{Message: msg, Form: form, URL: link}
	resp, err := peer.CreateElicitation(ctx, &areq)
	if err != nil {
		if ctx.Err() != nil {
			return mcpclient.ElicitResult{Action: mcpclient.ElicitCancel}, nil
		}
		return mcpclient.ElicitResult{}, fmt.Errorf("editor: %w", err)
	}
	switch {
	case resp.Accept != nil && link != nil:
		return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept}, nil
	case resp.Accept != nil:
		content, err := elicitationContent(resp.Accept.Content)
		if err != nil {
			return mcpclient.ElicitResult{}, err
		}
		return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: content}, nil
	case resp.Cancel != nil:
		return mcpclient.ElicitResult{Action: mcpclient.ElicitCancel}, nil
	}
	return decline, nil // decline, or an action this schema version does not know
}

// elicitation returns the session's elicitation hook and the modes the
// editor shows (nil, nil when it shows none).
func (s *sess) elicitation() (func(context.Context, string, mcpclient.ElicitRequest) (mcpclient.ElicitResult, error), []string) {
	var modes []string
	if ec := s.a.clientCapabilities().Elicitation; ec != nil {
		if ec.Form != nil {
			modes = append(modes, "form")
		}
		if ec.URL != nil {
			modes = append(modes, "url")
		}
	}
	if len(modes) == 0 {
		return nil, []string{}
	}
	return s.mcpElicit, modes
}

// elicitationSchema maps an MCP requestedSchema (untrusted) to ACP's form
// schema. It fails for anything but an object of properties of the types
// ACP defines (string, number, integer, boolean, multi-select array).
func elicitationSchema(raw json.RawMessage) (acp.ElicitationSchema, error) {
	out := acp.ElicitationSchema{Type: acp.ElicitationSchemaTypeObject}
	if len(raw) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return acp.ElicitationSchema{}, fmt.Errorf("requestedSchema: %w", err)
	}
	if out.Type != acp.ElicitationSchemaTypeObject {
		return acp.ElicitationSchema{}, fmt.Errorf("requestedSchema: type %q is not \"object\"", out.Type)
	}
	for name, p := range out.Properties {
		if p.String == nil && p.Number == nil && p.Integer == nil && p.Boolean == nil && p.Array == nil {
			return acp.ElicitationSchema{}, fmt.Errorf("requestedSchema: property %q has an unsupported type", name)
		}
	}
	for _, name := range out.Required {
		if _, ok := out.Properties[name]; !ok {
			return acp.ElicitationSchema{}, fmt.Errorf("requestedSchema: required property %q is not defined", name)
		}
	}
	return out, nil
}

// elicitationContent converts the editor's answer to JSON values.
func elicitationContent(in map[string]acp.ElicitationContentValue) (map[string]any, error) {
	if len(in) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("elicitation content: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("elicitation content: %w", err)
	}
	return out, nil
}
