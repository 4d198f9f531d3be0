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
	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t.Name] = true
		mreq.Tools = append(mreq.Tools, model.ToolDef{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema})
	}
	// The backends know no tool choice: it is an instruction, and a
	// forbidden call is dropped below.
	switch {
	case len(req.Tools) > 0 && req.ToolChoice == mcpclient.ToolChoiceNone:
		mreq.System = strings.TrimSpace(mreq.System + "\n\nDo not call any tool in this answer; answer in text.")
	case len(req.Tools) > 0 && req.ToolChoice == mcpclient.ToolChoiceRequired:
		mreq.System = strings.TrimSpace(mreq.System + "\n\nAnswer by calling at least one of the tools.")
	}
	for _, m := range req.Messages {
		role := model.RoleUser
		if m.Role == "assistant" {
			role = model.RoleAssistant
		}
		msg := model.Message{Role: role}
		for _, c := range m.Content {
			switch c.Type {
			case mcpclient.ContentToolUse:
				msg.Parts = append(msg.Parts, model.Part{Type: model.PartToolUse, ToolCallID: c.ToolUseID, ToolName: c.ToolName, Input: c.Input})
			case mcpclient.ContentToolResult:
				var parts []model.Part
				for _, r := range c.Result {
					parts = append(parts, samplePart(r, info))
				}
				msg.Parts = append(msg.Parts, model.Part{Type: model.PartToolResult, ToolCallID: c.ToolUseID, Content: parts, IsError: c.IsError})
			default:
				msg.Parts = append(msg.Parts, samplePart(c.Content, info))
			}
		}
		if len(msg.Parts) > 0 {
			mreq.Messages = append(mreq.Messages, msg)
		}
	}
	var text strings.Builder
	var uses []mcpclient.SampleToolUse
	stopReason := "endTurn"
	for ev, err := range backend.Stream(ctx, mreq) {
		if err != nil {
			return mcpclient.SampleResult{}, err
		}
		switch ev.Type {
		case model.EventText:
			text.WriteString(ev.Text)
		case model.EventToolDone:
			// Only the request's own tools, and none when it forbade them.
			if offered[ev.ToolName] && req.ToolChoice != mcpclient.ToolChoiceNone {
				uses = append(uses, mcpclient.SampleToolUse{ID: ev.ToolCallID, Name: ev.ToolName, Input: ev.Input})
			}
		case model.EventFinish:
			if ev.Finish == model.FinishMaxTokens {
				stopReason = "maxTokens"
			}
		}
	}
	if len(uses) > 0 {
		stopReason = "toolUse"
	}
	return mcpclient.SampleResult{Text: text.String(), ToolUses: uses, Model: ref, StopReason: stopReason}, nil
}

// samplePart is a text, image or audio block of a sampling request as the
// model takes it: an image only where the model reads images, else a note.
func samplePart(c mcpclient.Content, info model.ModelInfo) model.Part {
	switch {
	case c.Type == mcpclient.ContentImage && info.Images:
		return model.Part{Type: model.PartImage, MimeType: c.MIMEType, Data: base64.StdEncoding.EncodeToString(c.Data)}
	case c.Type == mcpclient.ContentText:
		return model.Part{Type: model.PartText, Text: c.Text}
	}
	return model.Part{Type: model.PartText, Text: fmt.Sprintf("[%s content (%s) not shown]", c.Type, c.MIMEType)}
}

// samplePreview shows the user what a server wants the model to answer.
func samplePreview(req mcpclient.SampleRequest) string {
	var b strings.Builder
	if req.SystemPrompt != "" {
		fmt.Fprintf(&b, "System prompt: %s\n\n", req.SystemPrompt)
	}
	for _, m := range req.Messages {
		for _, c := range m.Content {
			switch c.Type {
			case mcpclient.ContentText:
				fmt.Fprintf(&b, "%s: %s\n", m.Role, c.Text)
			case mcpclient.ContentToolUse:
				fmt.Fprintf(&b, "%s: [calls %s %s]\n", m.Role, c.ToolName, c.Input)
			case mcpclient.ContentToolResult:
				var r []string
				for _, x := range c.Result {
					if x.Type == mcpclient.ContentText {
						r = append(r, x.Text)
					}
				}
				fmt.Fprintf(&b, "%s: [result of %s: %s]\n", m.Role, c.ToolUseID, strings.Join(r, " "))
			default:
				fmt.Fprintf(&b, "%s: [%s]\n", m.Role, c.Type)
			}
		}
	}
	if len(req.Tools) > 0 {
		names := make([]string, len(req.Tools))
		for i, t := range req.Tools {
			names[i] = t.Name
		}
		fmt.Fprintf(&b, "\nThe server's tools the model may call (the server runs them): %s.\n", strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, "\nUp to %d tokens.", min(max(req.MaxTokens, 1), maxSampleTokens))
	return tools.Truncate(b.String(), samplePreviewBytes)
}
