package run

import (
	"context"
	"testing"

	"acpd/acp"
	"acpd/cmd/acpd/internal/uihost"
)

// TestMessageConsentFallsBack: only a view's ui/message consent request
// (its documented allow/reject options) is asked on the page, and only
// while a page shows the view; otherwise the terminal and --approve rules
// decide (asked is false).
func TestMessageConsentFallsBack(t *testing.T) {
	consentOpts := []acp.PermissionOption{
		{OptionID: messageAllow, Name: "Send", Kind: acp.PermissionOptionKindAllowOnce},
		{OptionID: messageReject, Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
	}
	toolOpts := []acp.PermissionOption{
		{OptionID: "allow_once", Name: "Allow once", Kind: acp.PermissionOptionKindAllowOnce},
		{OptionID: "reject_once", Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
	}
	if !isMessageConsent(consentOpts) || isMessageConsent(toolOpts) || isMessageConsent(consentOpts[:1]) {
		t.Fatal("isMessageConsent does not tell the message's consent from a tool's permission")
	}
	h := uihost.New(uihost.Options{})
	if _, err := h.Start(); err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	u := &runUI{mode: uiOn, host: h}
	title := "An MCP App asks to send a message: hi"
	for _, opts := range [][]acp.PermissionOption{consentOpts, toolOpts} {
		req := acp.RequestPermissionRequest{SessionID: "s_1", ToolCall: acp.ToolCallUpdate{ToolCallID: "call_time", Title: &title}, Options: opts}
		if _, asked := u.consent(context.Background(), req); asked {
			t.Errorf("options %v: asked on a page that no one opened", opts)
		}
	}
	var off *runUI
	if _, asked := off.consent(context.Background(), acp.RequestPermissionRequest{Options: consentOpts}); asked {
		t.Error("asked with views off")
	}
}
