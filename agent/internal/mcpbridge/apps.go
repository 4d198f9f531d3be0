package mcpbridge

import (
	"context"
	"errors"
	"fmt"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/permissions"
	"acpd/tools/mcptools"
)

// Permission options of a view's ui/message.
const (
	appMessageAllow  = "allow"
	appMessageReject = "reject"
)

// errTurnInProgress answers a view's message while a turn runs (the
// session's own answer to an overlapping prompt).
var errTurnInProgress = &jsonrpc.Error{Code: int(acp.ErrorCodeInvalidParams), Message: "turn in progress: wait for the running prompt to finish or send session/cancel first"}

// newApps returns the MCP Apps state of a session whose client renders
// views.
func (b *Bridge) newApps() *mcptools.Apps {
	apps := mcptools.NewApps(b.m)
	apps.Message = b.appMessage
	apps.Log = func(callID, level, text string) {
		b.log.Info("MCP App log", "session", b.id, "toolCall", callID, "level", level, "data", text)
	}
	return apps
}

// appMessage runs a view's ui/message: after the user's consent (not asked
// in full mode) the text becomes a user message of the session and a turn
// answers it. It fails while a turn runs.
func (b *Bridge) appMessage(ctx context.Context, callID, text string) error {
	if _, busy := b.s.Turn(); busy {
		return errTurnInProgress
	}
	if b.s.Mode() != permissions.ModeFull {
		peer, ok := b.s.Peer()
		if !ok {
			return errors.New("no client to ask")
		}
		title := "An MCP App asks to send a message: " + text
		if len(title) > 300 {
			title = title[:300] + "…"
		}
		resp, err := peer.RequestPermission(ctx, &acp.RequestPermissionRequest{SessionID: b.id,
			ToolCall: acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(callID), Title: &title},
			Options: []acp.PermissionOption{
				{OptionID: appMessageAllow, Name: "Send", Kind: acp.PermissionOptionKindAllowOnce},
				{OptionID: appMessageReject, Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
			}})
		if err != nil {
			return fmt.Errorf("asking the user: %w", err)
		}
		if resp.Outcome.Selected == nil || resp.Outcome.Selected.OptionID != appMessageAllow {
			return &jsonrpc.Error{Code: int(acp.ErrorCodeInvalidRequest), Message: "the user did not allow the message"}
		}
	}
	block := acp.ContentBlock{Text: &acp.TextContent{Text: text}}
	id := acp.MessageID(newID("m_"))
	b.s.Notify(acp.SessionUpdate{UserMessageChunk: &acp.ContentChunk{Content: block, MessageID: &id}})
	return b.s.Prompt(ctx, []acp.ContentBlock{block})
}
