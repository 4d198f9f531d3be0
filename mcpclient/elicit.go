package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"acpd/mcpclient/oauth"
)

// Elicitation actions, as in [ElicitResult.Action].
const (
	ElicitAccept  = "accept"  // the user submitted the form; Content holds the values
	ElicitDecline = "decline" // the user explicitly refused
	ElicitCancel  = "cancel"  // the user dismissed the request without choosing
)

// ElicitRequest is a server's request for user input (MCP elicitation/create).
// The SDK has already checked that a form request's schema is a flat object
// of primitive properties; the receiver must still treat every field as
// untrusted server input.
type ElicitRequest struct {
	// Message is the server's explanation of what it needs.
	Message string
	// Schema is the requestedSchema of a form request (a JSON Schema object
	// whose properties are primitives); empty when the server sent none.
	Schema json.RawMessage
	// Mode is "form" or "url".
	Mode string
	// URL is the page a "url" request asks the user to visit.
	URL string
	// ID is a "url" request's elicitation id (the server may later report
	// the interaction complete).
	ID string
}

// ElicitResult is the user's answer to an [ElicitRequest].
type ElicitResult struct {
	// Action is ElicitAccept, ElicitDecline or ElicitCancel.
	Action string
	// Content holds the submitted values (JSON-compatible: string, float64,
	// bool, []any of strings) when Action is ElicitAccept; it is ignored
	// otherwise. The SDK validates it against the request's schema.
	Content map[string]any
}

// elicitHandler returns the SDK handler that forwards server's elicitation
// requests to Options.Elicit, or nil when Elicit is nil (the client then does
// not advertise the elicitation capability).
func (m *Manager) elicitHandler(server string) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	elicit := m.opts.Elicit
	if elicit == nil {
		return nil
	}
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		p := req.Params
		if p == nil {
			return nil, fmt.Errorf("elicitation without params")
		}
		er := ElicitRequest{Message: p.Message, Mode: p.Mode, URL: p.URL, ID: p.ElicitationID}
		if er.Mode == "" {
			er.Mode = "form"
		}
		if er.Mode == "url" {
			if err := oauth.CheckPageURL(er.URL); err != nil {
				// Never shown to the user: declined, with the reason for
				// the server's authors in _meta and in the log.
				m.log.Warn("MCP URL elicitation declined", "server", server, "url", truncate(er.URL, 200), "err", err)
				return &mcp.ElicitResult{Action: ElicitDecline, Meta: mcp.Meta{"acpd/declined": "acpd declined the URL elicitation: " + err.Error()}}, nil
			}
		}
		if p.RequestedSchema != nil {
			b, err := json.Marshal(p.RequestedSchema)
			if err != nil {
				return nil, fmt.Errorf("requestedSchema: %w", err)
			}
			er.Schema = b
		}
		res, err := runHook(m, ctx, "elicitation", server, elicit, er)
		if err != nil {
			return nil, err
		}
		switch res.Action {
		case ElicitAccept:
			content := res.Content
			if er.Mode == "form" {
				content = withDefaults(er.Schema, content)
			}
			return &mcp.ElicitResult{Action: ElicitAccept, Content: content}, nil
		case ElicitDecline, ElicitCancel:
			return &mcp.ElicitResult{Action: res.Action}, nil
		}
		return nil, fmt.Errorf("elicitation: invalid action %q", res.Action)
	}
}

// withDefaults fills the properties the user left out with the schema's
// defaults, so accepting an empty form keeps them.
func withDefaults(schema json.RawMessage, content map[string]any) map[string]any {
	var sch struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &sch) != nil {
		return content
	}
	for name, p := range sch.Properties {
		if len(p.Default) == 0 {
			continue
		}
		if _, ok := content[name]; ok {
			continue
		}
		var v any
		if json.Unmarshal(p.Default, &v) != nil {
			continue
		}
		if content == nil {
			content = map[string]any{}
		}
		content[name] = v
	}
	return content
}
