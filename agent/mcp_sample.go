package agent

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

// mcpSample serves an MCP server's sampling/createMessage with the
// session's model, after the user consented through
// session/request_permission (allow once, always for this server, reject).
// It fails when no prompt turn runs (nobody to ask), when the user rejects,
// or when the session's sampling budget is used up. The request ends with
// the running turn.
func (s *sess) mcpSample(ctx context.Context, server string, req mcpclient.SampleRequest) (mcpclient.SampleResult, error) {
	t := s.mcpTools
	s.mu.Lock()
	tn := s.turn
	s.mu.Unlock()
	peer, ok := s.a.peer()
	if t == nil || tn == nil || !ok {
		return mcpclient.SampleResult{}, errors.New("no prompt turn is running, so nobody can approve sampling")
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	unlink := context.AfterFunc(tn.ctx, stop)
	defer unlink()

	t.mu.Lock()
	always := t.sampleAlways[server]
	t.mu.Unlock()
	id := acp.ToolCallID(newID("sample_"))
	title := fmt.Sprintf("MCP server %s asks to use the model", server)
	out := s.a.baseContext()
	if !always {
		preview := tools.TextContent(samplePreview(req))
		s.notify(out, acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: id, Title: title, Kind: acp.ToolKindOther, Status: acp.ToolCallStatusPending, Content: []acp.ToolCallContent{preview}}})
		preq := acp.RequestPermissionRequest{SessionID: s.id, ToolCall: acp.ToolCallUpdate{ToolCallID: id, Title: &title}, Options: []acp.PermissionOption{
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
			s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: id, Status: statusp(acp.ToolCallStatusFailed)}})
			return mcpclient.SampleResult{}, errors.New("the user did not allow sampling")
		}
		if choice == sampleAllowServer {
			t.mu.Lock()
			t.sampleAlways[server] = true
			t.mu.Unlock()
		}
	} else {
		s.notify(out, acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: id, Title: title, Kind: acp.ToolKindOther, Status: acp.ToolCallStatusInProgress}})
	}
	res, err := s.sample(ctx, req)
	status := acp.ToolCallStatusCompleted
	if err != nil {
		status = acp.ToolCallStatusFailed
	}
	s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: id, Status: &status}})
	return res, err
}

// sample runs one sampling request on the session's model within the
// session's budget.
func (s *sess) sample(ctx context.Context, req mcpclient.SampleRequest) (mcpclient.SampleResult, error) {
	t := s.mcpTools
	limit := int(min(max(req.MaxTokens, 1), maxSampleTokens))
	t.mu.Lock()
	if t.sampleUsed+limit > sampleTokenBudget {
		t.mu.Unlock()
		return mcpclient.SampleResult{}, fmt.Errorf("the session's sampling budget (%d tokens) is used up", sampleTokenBudget)
	}
	t.sampleUsed += limit
	t.mu.Unlock()

	ref := s.settings().Model
	backend, info, err := s.a.opts.Resolve(ref)
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
