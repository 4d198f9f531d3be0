package mcpbridge

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"acpd/acp"
	"acpd/mcpclient"
	"acpd/model"
	"acpd/tools"
)

// Sampling limits: one request's answer, and all of a session's.
const (
	maxSampleTokens    = 4096
	sampleTokenBudget  = 32768
	samplePreviewBytes = 2000
)

// Permission option ids of a sampling request.
const (
	sampleAllowOnce   = "allow_once"
	sampleAllowServer = "allow_server"
	sampleReject      = "reject"
)

// sample serves an MCP server's sampling/createMessage with the session's
// model, after the user consented through session/request_permission
// (allow once, always for this server, reject). It fails when no prompt
// turn runs (nobody to ask), when the user rejects, or when the session's
// sampling budget is used up. The request ends with the running turn.
func (b *Bridge) sample(ctx context.Context, server string, req mcpclient.SampleRequest) (mcpclient.SampleResult, error) {
	tctx, running := b.s.Turn()
	peer, ok := b.s.Peer()
	if !running || !ok {
		return mcpclient.SampleResult{}, errors.New("no prompt turn is running, so nobody can approve sampling")
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	unlink := context.AfterFunc(tctx, stop)
	defer unlink()

	b.mu.Lock()
	always := b.sampleAlways[server]
	b.mu.Unlock()
	id := acp.ToolCallID(newID("sample_"))
	title := fmt.Sprintf("MCP server %s asks to use the model", server)
	if !always {
		preview := tools.TextContent(samplePreview(req))
		b.s.Notify(acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: id, Title: title, Kind: acp.ToolKindOther, Status: acp.ToolCallStatusPending, Content: []acp.ToolCallContent{preview}}})
		preq := acp.RequestPermissionRequest{SessionID: b.id, ToolCall: acp.ToolCallUpdate{ToolCallID: id, Title: &title}, Options: []acp.PermissionOption{
			{OptionID: sampleAllowOnce, Name: "Allow once", Kind: acp.PermissionOptionKindAllowOnce},
			{OptionID: sampleAllowServer, Name: "Always for this server", Kind: acp.PermissionOptionKindAllowAlways},
			{OptionID: sampleReject, Name: "Reject", Kind: acp.PermissionOptionKindRejectOnce},
		}}
		resp, err := peer.RequestPermission(ctx, &preq)
		choice := ""
		if err == nil && resp.Outcome.Selected != nil {
			choice = string(resp.Outcome.Selected.OptionID)
		}
		if choice != sampleAllowOnce && choice != sampleAllowServer {
			failed := acp.ToolCallStatusFailed
			b.s.Notify(acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: id, Status: &failed}})
			return mcpclient.SampleResult{}, errors.New("the user did not allow sampling")
		}
		if choice == sampleAllowServer {
			b.mu.Lock()
			b.sampleAlways[server] = true
			b.mu.Unlock()
		}
	} else {
		b.s.Notify(acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: id, Title: title, Kind: acp.ToolKindOther, Status: acp.ToolCallStatusInProgress}})
	}
	res, err := b.runSample(ctx, req)
	status := acp.ToolCallStatusCompleted
	if err != nil {
		status = acp.ToolCallStatusFailed
	}
	b.s.Notify(acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: id, Status: &status}})
	return res, err
}

// runSample runs one sampling request on the session's model within the
// session's budget.
func (b *Bridge) runSample(ctx context.Context, req mcpclient.SampleRequest) (mcpclient.SampleResult, error) {
	limit := int(min(max(req.MaxTokens, 1), maxSampleTokens))
	b.mu.Lock()
	if b.sampleUsed+limit > sampleTokenBudget {
		b.mu.Unlock()
		return mcpclient.SampleResult{}, fmt.Errorf("the session's sampling budget (%d tokens) is used up", sampleTokenBudget)
	}
	b.sampleUsed += limit
	b.mu.Unlock()

	ref, backend, info, err := b.s.Model()
	if err != nil {
		return mcpclient.SampleResult{}, fmt.Errorf("no model: %w", err)
	}
	_, modelID, _ := model.ParseRef(ref)
	mreq := &model.Request{Model: modelID, System: req.SystemPrompt, MaxOutputTokens: limit}
	for _, m := range req.Messages {
		role := model.RoleUser
		if m.Role == "assistant" {
			role = model.RoleAssistant
		}
		var p model.Part
		switch c := m.Content; {
		case c.Type == mcpclient.ContentImage && info.Images:
			p = model.Part{Type: model.PartImage, MimeType: c.MIMEType, Data: base64.StdEncoding.EncodeToString(c.Data)}
		case c.Type == mcpclient.ContentText:
			p = model.Part{Type: model.PartText, Text: c.Text}
		default:
			p = model.Part{Type: model.PartText, Text: fmt.Sprintf("[%s content (%s) not shown]", c.Type, c.MIMEType)}
		}
		mreq.Messages = append(mreq.Messages, model.Message{Role: role, Parts: []model.Part{p}})
	}
	var text strings.Builder
	stopReason := "endTurn"
	for ev, err := range backend.Stream(ctx, mreq) {
		if err != nil {
			return mcpclient.SampleResult{}, err
		}
		switch ev.Type {
		case model.EventText:
			text.WriteString(ev.Text)
		case model.EventFinish:
			if ev.Finish == model.FinishMaxTokens {
				stopReason = "maxTokens"
			}
		}
	}
	return mcpclient.SampleResult{Text: text.String(), Model: ref, StopReason: stopReason}, nil
}

// samplePreview shows the user what a server wants the model to answer.
func samplePreview(req mcpclient.SampleRequest) string {
	var b strings.Builder
	if req.SystemPrompt != "" {
		fmt.Fprintf(&b, "System prompt: %s\n\n", req.SystemPrompt)
	}
	for _, m := range req.Messages {
		if m.Content.Type == mcpclient.ContentText {
			fmt.Fprintf(&b, "%s: %s\n", m.Role, m.Content.Text)
		} else {
			fmt.Fprintf(&b, "%s: [%s]\n", m.Role, m.Content.Type)
		}
	}
	fmt.Fprintf(&b, "\nUp to %d tokens.", min(max(req.MaxTokens, 1), maxSampleTokens))
	return tools.Truncate(b.String(), samplePreviewBytes)
}
