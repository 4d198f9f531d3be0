package agent

import (
	"context"
	"fmt"

	"acpd/acp"
	"acpd/mcpclient"
	"acpd/mcpclient/oauth"
	"acpd/tools/mcptools"
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
		schema, err := mcptools.ElicitationSchema(req.Schema)
		if err != nil {
			s.a.log.Warn("MCP elicitation declined", "session", s.id, "server", server, "err", err)
			return decline, nil
		}
		form = &acp.ElicitationFormMode{RequestedSchema: schema, Session: &acp.ElicitationSessionScope{SessionID: s.id}}
	case req.Mode == "url" && caps.Elicitation.URL != nil && req.URL != "":
		if err := oauth.CheckPageURL(req.URL); err != nil { // mcpclient checks too
			s.a.log.Warn("MCP URL elicitation declined", "session", s.id, "server", server, "err", err)
			return decline, nil
		}
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
		content, err := mcptools.ElicitationContent(resp.Accept.Content)
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
