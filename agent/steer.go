package agent

import (
	"context"
	"encoding/json"
	"fmt"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/agent/internal/handshake"
	"acpd/agent/internal/promptin"
	"acpd/agent/internal/turnslot"
	"acpd/model"
)

// steerMsg is a steering message: the prompt of a _session/steering
// request, waiting in the running turn's inbox (turnslot).
type steerMsg = []acp.ContentBlock

// steeringRequest is the params of _session/steering (docs/extending.md):
// the prompt to put into the running turn, and in _meta.steering what to
// do when none runs.
type steeringRequest struct {
	SessionID acp.SessionID      `json:"sessionId"`
	Prompt    []acp.ContentBlock `json:"prompt"`
	Meta      map[string]any     `json:"_meta,omitempty"`
}

// steeringResponse is its answer: outcome "injected" (the running turn
// took it), "promptRequired" (none runs and the client asked to send it as
// a session/prompt itself; reason "noRunningTurn") or "startedNewTurn"
// (none ran: it is the prompt of a turn of its own, which has begun).
type steeringResponse struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
}

// withSteering serves _session/steering in front of h.
func (a *Agent) withSteering(h jsonrpc.Handler) jsonrpc.Handler {
	return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if method != handshake.SteeringMethod {
			return h(ctx, method, params)
		}
		return a.steer(ctx, params)
	}
}

// steer answers one _session/steering request.
func (a *Agent) steer(ctx context.Context, params json.RawMessage) (any, error) {
	var p steeringRequest
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, jsonrpc.ErrInvalidParams(err)
	}
	if p.SessionID == "" {
		return nil, invalidParams("steering params require a non-empty sessionId")
	}
	if len(p.Prompt) == 0 {
		return nil, invalidParams("steering params require a non-empty prompt array")
	}
	promptRequired := false
	if st, ok := p.Meta["steering"]; ok {
		m, ok := st.(map[string]any)
		if !ok {
			return nil, invalidParams("steering _meta.steering must be an object")
		}
		if ib, ok := m["idleBehavior"]; ok {
			if ib != "promptRequired" {
				return nil, invalidParams("unsupported steering idleBehavior %v (acpd knows promptRequired)", ib)
			}
			promptRequired = true
		}
	}
	s, err := a.mustSession(p.SessionID)
	if err != nil {
		return nil, err
	}
	if s.slot.Steer(p.Prompt) {
		a.log.Debug("steering message queued for the running turn", "session", s.id)
		return steeringResponse{Outcome: "injected"}, nil
	}
	if promptRequired {
		return steeringResponse{Outcome: "promptRequired", Reason: "noRunningTurn"}, nil
	}
	// No turn takes it: it starts one of its own (behind a turn that is
	// ending), answered once that turn has begun; its stop reason goes
	// nowhere (the client learns of the turn from its updates).
	s.prompted.Store(true)
	s.detached.Add(1)
	t, err := s.slot.Begin(a.baseContext(), jsonrpc.Arrival(ctx))
	if err != nil {
		s.detached.Done()
		if _, err := s.notBegun(p.Prompt, err); err != nil {
			return nil, err
		}
		return nil, &jsonrpc.Error{Code: int(acp.ErrorCodeInvalidRequest), Message: fmt.Sprintf("session %q was cancelled before the steering turn began", s.id)}
	}
	go func() {
		defer s.detached.Done()
		defer func() {
			t.Replying()
			t.End()
		}()
		if _, err := s.runPrompt(t, p.Prompt, true); err != nil {
			a.log.Warn("the turn a steering request started failed", "session", s.id, "err", err)
		}
	}()
	return steeringResponse{Outcome: "startedNewTurn"}, nil
}

// userMessage logs prompt as a user message with a fresh id and, with
// show, sends it to the client as well.
func (s *sess) userMessage(ctx context.Context, prompt []acp.ContentBlock, show bool) {
	id := newID("u_")
	for _, b := range prompt {
		u := acp.SessionUpdate{UserMessageChunk: &acp.ContentChunk{Content: b, MessageID: msgID(id)}}
		if show {
			s.notify(ctx, u)
		} else {
			s.record(kindUpdate, u)
		}
	}
}

// deliverSteered puts steering messages into the transcript, in order, at
// a model-request boundary: each is shown to the client and logged as a
// user message where it joined the turn, so session/load replays it there.
func (s *sess) deliverSteered(ctx context.Context, msgs []steerMsg, info model.ModelInfo) {
	out := s.a.baseContext()
	for _, m := range msgs {
		s.userMessage(out, m, true)
		parts, notes := promptin.Parts(ctx, m, info, s.readLinked)
		for _, n := range notes {
			s.tell(out, acp.NoticeSeverityWarning, promptin.NoteTitle(n), n+" Choose a model that takes it in the model selector to include it.")
		}
		s.appendMessage(model.Message{Role: model.RoleUser, Parts: parts})
		s.a.log.Debug("steering message delivered", "session", s.id)
	}
}

// refuseSteering closes t to steering (a turn that makes no model
// request), telling the messages it already took.
func (s *sess) refuseSteering(t *turnslot.Turn[steerMsg]) {
	for _, m := range t.Shut() {
		s.tellDropped(m, "It was sent to steer a command that makes no model request; send it again to run it.")
	}
}

// tellDropped tells the user that prompt never reached the model, and
// why.
func (s *sess) tellDropped(prompt []acp.ContentBlock, why string) {
	what := promptin.Title(prompt)
	if what == "" {
		what = "a prompt without text"
	} else {
		what = "“" + what + "”"
	}
	s.tell(s.a.baseContext(), acp.NoticeSeverityWarning, "Not sent to the model: "+what, why)
}
