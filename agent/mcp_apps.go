package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"acpd/acp"
	"acpd/mcpclient"
	"acpd/permissions"
	"acpd/tools/mcptools"
)

// MCP Apps (docs/mcp-apps.md): a client that renders MCP App views opts in
// with clientCapabilities._meta["io.modelcontextprotocol/ui"].mimeTypes
// naming text/html;profile=mcp-app, and hosts the views; their requests
// come back as the _acpd/app/ extension methods.

// appPrefix prefixes the extension methods of MCP App views.
const appPrefix = "_acpd/app/"

// Permission options of a view's ui/message.
const (
	appMessageAllow  = "allow"
	appMessageReject = "reject"
)

// rendersApps reports whether the client opted in to MCP App views.
func (a *Agent) rendersApps() bool {
	ui, _ := a.clientCapabilities().Meta[mcpclient.AppsExtension].(map[string]any)
	types, _ := ui["mimeTypes"].([]any)
	return slices.ContainsFunc(types, func(t any) bool { s, _ := t.(string); return s == mcpclient.AppMIMEType })
}

// withApps serves the _acpd/app/ extension methods and passes every other
// method to h.
func (a *Agent) withApps(h acp.Handler) acp.Handler {
	return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if !strings.HasPrefix(method, appPrefix) {
			return h(ctx, method, params)
		}
		var p struct {
			SessionID acp.SessionID `json:"sessionId"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, acp.ErrInvalidParams(err)
		}
		s, err := a.mustSession(p.SessionID)
		if err != nil {
			return nil, err
		}
		if s.mcpTools == nil || s.mcpTools.apps == nil {
			return nil, &acp.Error{Code: int(acp.ErrorCodeInvalidRequest), Message: "this session has no MCP App views (the client did not opt in to " + mcpclient.AppsExtension + ")"}
		}
		res, err := s.mcpTools.apps.Handle(ctx, method, params)
		if errors.Is(err, mcptools.ErrAppRefused) {
			return nil, &acp.Error{Code: int(acp.ErrorCodeInvalidRequest), Message: err.Error()}
		}
		return res, err
	}
}

// newApps returns the MCP Apps state of the session when its client renders
// views, else nil.
func (s *sess) newApps(m *mcpclient.Manager) *mcptools.Apps {
	if !s.a.rendersApps() {
		return nil
	}
	apps := mcptools.NewApps(m)
	apps.Message = s.appMessage
	apps.Log = func(callID, level, text string) {
		s.a.log.Info("MCP App log", "session", s.id, "toolCall", callID, "level", level, "data", text)
	}
	return apps
}

// appMessage runs a view's ui/message: after the user's consent (not asked
// in full mode) the text becomes a user message of the session and a turn
// answers it. It fails while a turn runs.
func (s *sess) appMessage(ctx context.Context, callID, text string) error {
	s.mu.Lock()
	busy := s.turn != nil
	s.mu.Unlock()
	if busy {
		return errTurnInProgress
	}
	if s.settings().Mode != string(permissions.ModeFull) {
		peer, ok := s.a.peer()
		if !ok {
			return errors.New("no client to ask")
		}
		title := "An MCP App asks to send a message: " + text
		if len(title) > 300 {
			title = title[:300] + "…"
		}
		resp, err := peer.RequestPermission(ctx, &acp.RequestPermissionRequest{SessionID: s.id,
			ToolCall: acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(callID), Title: &title},
			Options: []acp.PermissionOption{
				{OptionID: appMessageAllow, Name: "Send", Kind: acp.PermissionOptionKindAllowOnce},
				{OptionID: appMessageReject, Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
			}})
		if err != nil {
			return fmt.Errorf("asking the user: %w", err)
		}
		if resp.Outcome.Selected == nil || resp.Outcome.Selected.OptionID != appMessageAllow {
			return &acp.Error{Code: int(acp.ErrorCodeInvalidRequest), Message: "the user did not allow the message"}
		}
	}
	block := acp.ContentBlock{Text: &acp.TextContent{Text: text}}
	s.notify(s.a.baseContext(), acp.SessionUpdate{UserMessageChunk: &acp.ContentChunk{Content: block, MessageID: msgID(newID("m_"))}})
	_, err := s.a.prompt(ctx, &acp.PromptRequest{SessionID: s.id, Prompt: []acp.ContentBlock{block}})
	return err
}

// appReminder is the views' model context not yet given to the model.
func (s *sess) appReminder() string {
	if t := s.mcpTools; t != nil && t.apps != nil {
		return t.apps.TakeContext()
	}
	return ""
}
