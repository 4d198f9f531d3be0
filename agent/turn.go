package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"acpd/acp"
	"acpd/compact"
	"acpd/internal/loopguard"
	"acpd/model"
	"acpd/promptin"
	"acpd/tools"
)

// defaultMaxTurnRequests caps model requests per prompt turn when the config
// does not say.
const defaultMaxTurnRequests = 100

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func (a *Agent) prompt(ctx context.Context, p *acp.PromptRequest) (*acp.PromptResponse, error) {
	s, err := a.mustSession(p.SessionID)
	if err != nil {
		return nil, err
	}
	if len(p.Prompt) == 0 {
		// CodeCompanion sends an empty Enter as prompt []: nothing to do.
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	tctx, t, err := s.beginTurn(ctx)
	if errors.Is(err, errCancelledEarly) {
		// session/cancel read after this prompt (a quick Stop).
		return &acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	if err != nil {
		return nil, err
	}
	// The slot is released once the reply is written (AfterReply runs even
	// when the write fails or the handler panics): a prompt waiting for this
	// cancelled turn must not stream before the client has this reply.
	acp.AfterReply(ctx, func() { s.endTurn(t) })
	defer s.markReplying(t)
	stop, err := s.runTurn(tctx, p.Prompt)
	s.sync()
	if s.wasCancelled(t) {
		// session/cancel: the turn ends with "cancelled", never an error.
		return &acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	if err != nil {
		return nil, err
	}
	return &acp.PromptResponse{StopReason: stop}, nil
}

// turnState accumulates one model response.
type turnState struct {
	s       *sess
	ctx     context.Context
	msgID   string
	parts   []model.Part
	calls   []*pendingCall
	byID    map[string]*pendingCall
	finish  model.FinishReason
	usage   *model.Usage
	started bool // a delta reached the client
	// refused are the calls not to run (repetitions), by ID.
	refused map[string]bool
	// info is the model the response came from.
	info model.ModelInfo
	// text accumulates the text of the last part while it streams, so a
	// long answer costs linear time; flushText stores it in the part.
	text textBuf
}

// textBuf accumulates streamed text in blocks of growing size and joins
// them once, at the exact size. A strings.Builder would reallocate as the
// text grows, holding the old and the new copy at once (and raising the
// garbage collector's target to match), and keep up to a quarter of
// slack for good.
type textBuf struct {
	blocks [][]byte
	n      int
}

// textBlockMax bounds a block, and so the slack of a textBuf.
const textBlockMax = 1 << 20

func (t *textBuf) Len() int { return t.n }

func (t *textBuf) WriteString(s string) {
	t.n += len(s)
	for len(s) > 0 {
		if k := len(t.blocks); k > 0 {
			b := t.blocks[k-1]
			m := min(len(s), cap(b)-len(b))
			t.blocks[k-1] = append(b, s[:m]...)
			s = s[m:]
			if len(s) == 0 {
				return
			}
		}
		size := 512
		if k := len(t.blocks); k > 0 {
			size = min(2*cap(t.blocks[k-1]), textBlockMax)
		}
		t.blocks = append(t.blocks, make([]byte, 0, max(size, min(len(s), textBlockMax))))
	}
}

// String returns the text; Reset drops it.
func (t *textBuf) String() string {
	var b strings.Builder
	b.Grow(t.n)
	for _, blk := range t.blocks {
		b.Write(blk)
	}
	return b.String()
}

func (t *textBuf) Reset() { *t = textBuf{} }

// pendingCall is a tool call being streamed or run.
type pendingCall struct {
	id    string
	name  string
	args  strings.Builder
	input json.RawMessage
	sig   string
	opq   json.RawMessage
	shown bool // tool_call update sent
}

// runTurn runs one prompt turn to its stop reason.
func (s *sess) runTurn(ctx context.Context, prompt []acp.ContentBlock) (acp.StopReason, error) {
	out := s.a.baseContext()
	userMsgID := newID("u_")
	for _, b := range prompt {
		s.record(kindUpdate, acp.SessionUpdate{UserMessageChunk: &acp.ContentChunk{Content: b, MessageID: msgID(userMsgID)}})
	}
	st := s.settings()
	if st.Model == "" && s.a.refreshCredentials(out) {
		st = s.settings() // the refresh may have given this session a model
	}
	if st.Model == "" {
		// A session created while no model was available (no key yet)
		// takes the default found since (after `acpd login` and ACP
		// authenticate), so the user's retry works in the same session.
		if ref := s.a.fallbackModel(); ref != "" {
			st = s.update(func(st *settings) {
				if st.Model == "" {
					st.Model = ref
				}
			})
			s.announce(out, false)
		}
	}
	backend, info, resolveErr := s.a.opts.Resolve(st.Model)
	parts, notes := promptin.Parts(ctx, prompt, info, s.readLinked)
	for _, n := range notes {
		s.tell(out, acp.NoticeSeverityWarning, noteTitle(n), n+" Choose a model that takes it in the model selector to include it.")
	}
	_, isCommand := slashCommand(prompt)
	if st.Title == "" && !isCommand {
		if title := promptin.Title(prompt); title != "" {
			s.update(func(st *settings) { st.Title = title })
			now := time.Now().UTC().Format(time.RFC3339)
			s.notify(out, acp.SessionUpdate{SessionInfoUpdate: &acp.SessionInfoUpdate{Title: strp(title), UpdatedAt: &now}})
		}
	}
	if cmd, ok := slashCommand(prompt); ok {
		switch cmd {
		case "init":
			// /init is a model turn with acpd's own prompt.
			parts = []model.Part{{Type: model.PartText, Text: initPrompt}}
		default:
			// Other slash commands are for acpd, not the model: they stay
			// out of the transcript.
			if cmd == "compact" && resolveErr != nil {
				return "", modelUnavailable(st.Model, resolveErr)
			}
			return s.runCommand(ctx, cmd, backend, info)
		}
	}
	if resolveErr != nil {
		// The model never saw this prompt: keep it out of the transcript,
		// so the user's retry does not send it twice.
		return "", modelUnavailable(st.Model, resolveErr)
	}
	if p, stop, ok := s.mcp.PromptTurn(ctx, prompt); ok {
		// An MCP prompt command: its messages are the user's message.
		if stop != "" {
			return stop, nil
		}
		parts = p
	}
	if r := s.changeReminder(true); r != "" {
		parts = append(parts, model.Part{Type: model.PartText, Text: r})
	}
	s.appendMessage(model.Message{Role: model.RoleUser, Parts: parts})
	s.mcp.Await(ctx)
	maxReq := s.cfg.Agent.MaxTurnRequests
	if maxReq <= 0 {
		maxReq = defaultMaxTurnRequests
	}
	return s.loop(ctx, backend, info, maxReq)
}

// maxRestarts bounds re-requests after a retryable failure that happened
// once part of the response had reached the client.
const maxRestarts = 2

// loop runs model requests and tool calls until the model ends the turn.
func (s *sess) loop(ctx context.Context, backend model.Backend, info model.ModelInfo, maxReq int) (acp.StopReason, error) {
	out := s.a.baseContext()
	var guard loopguard.Guard
	restarts := 0
	for req := 0; ; req++ {
		if req >= maxReq {
			return acp.StopReasonMaxTurnRequests, nil
		}
		// The last allowed request (of several) offers no tools and asks
		// for a summary, so the turn ends with an answer, not a dangling
		// call.
		last := req > 0 && req == maxReq-1
		if ctx.Err() != nil {
			return acp.StopReasonCancelled, nil
		}
		if s.needsCompaction(info) {
			if err := s.compact(ctx, backend, info); err != nil {
				if ctx.Err() != nil {
					return acp.StopReasonCancelled, nil
				}
				s.a.log.Warn("compaction failed", "session", s.id, "err", err)
			}
		}
		ts, err := s.stream(ctx, backend, info, last)
		s.reportUsage(out, ts.usage, info)
		if err != nil {
			if ctx.Err() != nil {
				s.closeCalls(ts, "cancelled by the user")
				return acp.StopReasonCancelled, nil
			}
			s.closeCalls(ts, "the model's response failed before this tool ran")
			var me *model.Error
			if errors.As(err, &me) && me.Retryable() && ts.started && restarts < maxRestarts {
				// The retry wrapper retries silently only before the first
				// delta; after that the partial answer stays (marked
				// interrupted) and a new message continues it.
				restarts++
				s.a.log.Warn("model stream failed mid-answer; requesting again", "session", s.id, "err", err)
				continue
			}
			return "", modelError(err)
		}
		if len(ts.calls) == 0 {
			if last {
				return acp.StopReasonMaxTurnRequests, nil
			}
			switch ts.finish {
			case model.FinishMaxTokens:
				return acp.StopReasonMaxTokens, nil
			case model.FinishRefusal:
				return acp.StopReasonRefusal, nil
			}
			return acp.StopReasonEndTurn, nil
		}
		if last {
			// The request cap: the calls of the final answer do not run.
			s.closeCalls(ts, "not run: the turn reached its limit of model requests")
			return acp.StopReasonMaxTurnRequests, nil
		}
		var refused map[string]bool
		name := ""
		for _, pc := range ts.calls {
			v := guard.Observe(pc.name, pc.input)
			if v == loopguard.Stop {
				name = pc.name
				break
			}
			if v == loopguard.Refuse {
				if refused == nil {
					refused = map[string]bool{}
				}
				refused[pc.id] = true
			}
		}
		if name != "" {
			s.closeCalls(ts, "not run: the same call was repeated too often")
			msg := fmt.Sprintf("Stopped: the model kept calling %s with the same arguments (more than %d times in a row, and again after being told the result would not change). Rephrase the request or give more guidance.", name, loopguard.Limit)
			s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk(msg, newID("m_"))})
			return acp.StopReasonEndTurn, nil
		}
		ts.refused = refused
		if stop, done := s.runCalls(ctx, ts); done {
			return stop, nil
		}
	}
}

// stream makes one model request and streams its response to the client.
// The assistant message is appended to the transcript whatever happens, marked
// interrupted when the stream did not finish.
func (s *sess) stream(ctx context.Context, b model.Backend, info model.ModelInfo, last bool) (*turnState, error) {
	out := s.a.baseContext()
	ts := &turnState{s: s, ctx: ctx, msgID: newID("m_"), byID: map[string]*pendingCall{}, info: info}
	req := s.buildRequest(info)
	if last {
		compact.FinalRequest(req)
	}
	var streamErr error
	finished := false
	for ev, err := range b.Stream(ctx, req) {
		if err != nil {
			streamErr = err
			break
		}
		switch ev.Type {
		case model.EventText:
			if ev.Text == "" {
				continue
			}
			ts.addText(model.PartText, ev.Text)
			ts.started = true
			s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk(ev.Text, ts.msgID)})
		case model.EventReasoning:
			if ev.Text == "" {
				continue
			}
			ts.addText(model.PartReasoning, ev.Text)
			ts.started = true
			s.notify(out, acp.SessionUpdate{AgentThoughtChunk: textChunk(ev.Text, ts.msgID)})
		case model.EventReasoningDone:
			ts.closeReasoning(ev)
		case model.EventToolStart:
			pc := ts.call(ev.ToolCallID, ev.ToolName)
			if !pc.shown {
				pc.shown = true
				s.notify(out, acp.SessionUpdate{ToolCall: s.toolCallStarted(pc)})
			}
		case model.EventToolDelta:
			pc := ts.call(ev.ToolCallID, ev.ToolName)
			pc.args.WriteString(ev.Text)
		case model.EventToolDone:
			pc := ts.call(ev.ToolCallID, ev.ToolName)
			pc.input = ev.Input
			if len(pc.input) == 0 {
				pc.input = json.RawMessage(pc.args.String())
			}
			if len(pc.input) == 0 {
				pc.input = json.RawMessage("{}")
			}
			pc.sig, pc.opq = ev.Signature, ev.Opaque
			// Tool uses stay in stream order among reasoning and text:
			// providers such as the Responses API require it.
			ts.flushText()
			ts.parts = append(ts.parts, model.Part{Type: model.PartToolUse, ToolCallID: pc.id, ToolName: pc.name, Input: pc.input, Signature: pc.sig, Opaque: pc.opq, Provider: ev.Provider})
			if !pc.shown {
				pc.shown = true
				s.notify(out, acp.SessionUpdate{ToolCall: s.toolCallStarted(pc)})
			} else if tc := s.toolCallStarted(pc); tc.RawInput != nil {
				// Shown at tool_start, before its input existed: now show
				// the title rendered from the input, and the input.
				s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: tc.ToolCallID, Title: &tc.Title, RawInput: tc.RawInput}})
			}
		case model.EventUsage:
			u := *ev.Usage
			ts.usage = &u
		case model.EventFinish:
			ts.finish = ev.Finish
			finished = true
		}
	}
	if streamErr == nil && !finished && ctx.Err() == nil {
		streamErr = &model.Error{Kind: model.ErrNetwork, Message: "the model's stream ended without finishing"}
	}
	if streamErr == nil && ctx.Err() != nil {
		streamErr = ctx.Err()
	}
	// Calls that never completed are not in parts: a provider would reject a
	// tool use without a result.
	ts.flushText()
	msg := model.Message{Role: model.RoleAssistant, Parts: ts.parts}
	if msg.Parts == nil {
		msg.Parts = []model.Part{}
	}
	msg.Interrupted = streamErr != nil
	s.appendMessage(msg)
	if streamErr != nil {
		// Only completed calls are in the transcript; they get results below.
		done := ts.calls[:0]
		for _, pc := range ts.calls {
			if len(pc.input) > 0 {
				done = append(done, pc)
			} else if pc.shown {
				s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(pc.id), Status: statusp(acp.ToolCallStatusFailed)}})
			}
		}
		ts.calls = done
		return ts, streamErr
	}
	return ts, nil
}

func statusp(s acp.ToolCallStatus) *acp.ToolCallStatus { return &s }

func msgID(id string) *acp.MessageID {
	m := acp.MessageID(id)
	return &m
}

func textChunk(text, id string) *acp.ContentChunk {
	return &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: text}}, MessageID: msgID(id)}
}

func (ts *turnState) addText(t model.PartType, text string) {
	if n := len(ts.parts); n > 0 && ts.parts[n-1].Type == t && ts.parts[n-1].Signature == "" && !ts.parts[n-1].Redacted && ts.parts[n-1].Opaque == nil {
		if ts.text.Len() == 0 {
			// Reopened after a flush.
			ts.text.WriteString(ts.parts[n-1].Text)
		}
		ts.text.WriteString(text)
		return
	}
	ts.flushText()
	ts.parts = append(ts.parts, model.Part{Type: t})
	ts.text.WriteString(text)
}

// flushText stores the streamed text of the last part in it. Call it before
// reading ts.parts or adding a part other than through addText.
func (ts *turnState) flushText() {
	if ts.text.Len() > 0 {
		ts.parts[len(ts.parts)-1].Text = ts.text.String()
		ts.text.Reset()
	}
}

// closeReasoning attaches a reasoning block's signature or opaque data to the
// reasoning part it ends (or adds a redacted part).
func (ts *turnState) closeReasoning(ev model.Event) {
	ts.flushText()
	if n := len(ts.parts); n > 0 && ts.parts[n-1].Type == model.PartReasoning && ts.parts[n-1].Signature == "" && ts.parts[n-1].Opaque == nil && !ev.Redacted {
		ts.parts[n-1].Signature = ev.Signature
		ts.parts[n-1].Opaque = ev.Opaque
		ts.parts[n-1].Provider = ev.Provider
		return
	}
	ts.parts = append(ts.parts, model.Part{Type: model.PartReasoning, Signature: ev.Signature, Redacted: ev.Redacted, Opaque: ev.Opaque, Provider: ev.Provider})
}

func (ts *turnState) call(id, name string) *pendingCall {
	if id == "" {
		id = fmt.Sprintf("call_%d", len(ts.calls))
	}
	pc := ts.byID[id]
	if pc == nil {
		pc = &pendingCall{id: id, name: name}
		ts.byID[id] = pc
		ts.calls = append(ts.calls, pc)
	}
	if pc.name == "" {
		pc.name = name
	}
	return pc
}

// appendMessage adds m to the transcript and the log.
func (s *sess) appendMessage(m model.Message) {
	s.mu.Lock()
	s.transcript = append(s.transcript, m)
	s.mu.Unlock()
	s.record(kindMessage, m)
}

// buildRequest assembles the model request from the session's state.
func (s *sess) buildRequest(info model.ModelInfo) *model.Request {
	st := s.settings()
	_, modelID, _ := model.ParseRef(st.Model)
	s.mu.Lock()
	msgs := make([]model.Message, len(s.transcript))
	copy(msgs, s.transcript)
	s.mu.Unlock()
	// Cache breakpoints (for providers with explicit prompt caching) after
	// the newest user message, so the next request of the turn reads the
	// conversation so far from the cache, and after the one before it,
	// where the previous request wrote its entry. The copies are marked,
	// not the transcript.
	for i, marked := len(msgs)-1, 0; i >= 0 && marked < 2; i-- {
		if msgs[i].Role == model.RoleUser {
			msgs[i].Cache = true
			marked++
		}
	}
	effort := model.Effort(st.Thought)
	if !info.Reasoning {
		effort = ""
	}
	return &model.Request{
		Model:       modelID,
		System:      s.systemPrompt(),
		Messages:    msgs,
		Tools:       s.toolDefs(),
		Effort:      effort,
		CacheSystem: true,
		CacheTools:  true,
	}
}

// noteTitle is the few words titling a prompt note's card: what was not
// sent.
func noteTitle(note string) string {
	switch {
	case strings.Contains(note, "image"):
		return "The image was not sent"
	case strings.Contains(note, "audio"), strings.Contains(note, "recording"):
		return "The recording was not sent"
	}
	return "Part of the prompt was not sent"
}

// notices reports whether the client shows notice updates.
func (a *Agent) notices() bool {
	caps := a.clientCapabilities()
	return caps.Session != nil && caps.Session.Notices != nil
}

// notice tells clients that advertise notices about something they should see.
// Notices are live events, not session history: they are not logged, so
// session/load never replays them.
func (s *sess) notice(ctx context.Context, sev acp.NoticeSeverity, title string) {
	if !s.a.notices() {
		return
	}
	s.send(ctx, acp.SessionUpdate{Notice: &acp.Notice{Severity: sev, Title: title}})
}

// tell shows the user a problem in any editor: a notice (title, why as its
// description) where the client takes notices, else a card (see card).
// title says what, in a few words; why says why and how to fix it.
func (s *sess) tell(ctx context.Context, sev acp.NoticeSeverity, title, why string) {
	if s.a.notices() {
		n := &acp.Notice{Severity: sev, Title: title}
		if why != "" {
			n.Description = &why
		}
		s.send(ctx, acp.SessionUpdate{Notice: n})
		return
	}
	s.card(ctx, title, why)
}

// card shows a problem as a short failed tool call, which every editor
// shows: the title says what, the content why and how to fix it.
func (s *sess) card(ctx context.Context, title, why string) {
	tc := &acp.ToolCall{ToolCallID: acp.ToolCallID(newID("note_")), Title: title, Kind: acp.ToolKindOther, Status: acp.ToolCallStatusFailed}
	if why != "" {
		tc.Content = []acp.ToolCallContent{tools.TextContent(why)}
	}
	s.notify(ctx, acp.SessionUpdate{ToolCall: tc})
}

// modelUnavailable is the auth-required error for a session without a model.
func modelUnavailable(ref string, err error) error {
	msg := "No model is configured. Set ANTHROPIC_API_KEY, OPENAI_API_KEY (with OPENAI_BASE_URL for compatible servers) or GEMINI_API_KEY, or OLLAMA_HOST for a local Ollama, and choose a model with ACPD_MODEL=provider/model (or --model)."
	if ref != "" {
		msg = fmt.Sprintf("Model %q is not available: %v. %s", ref, err, msg)
	}
	return &acp.Error{Code: int(acp.ErrorCodeAuthenticationRequired), Message: msg}
}

// modelError turns a failed model request into the turn's JSON-RPC error,
// telling the user what to do.
func modelError(err error) error {
	var me *model.Error
	if !errors.As(err, &me) {
		return &acp.Error{Code: int(acp.ErrorCodeInternalError), Message: "model request failed: " + err.Error()}
	}
	var hint string
	switch me.Kind {
	case model.ErrAuth:
		return &acp.Error{Code: int(acp.ErrorCodeAuthenticationRequired), Message: me.Error() + ": check the provider's API key"}
	case model.ErrQuota:
		hint = "the provider reports the account's quota or credit is exhausted; check billing, or switch model"
	case model.ErrRateLimit, model.ErrOverloaded, model.ErrServer, model.ErrNetwork:
		hint = "the provider is unavailable or overloaded; try again in a moment, or switch model"
	case model.ErrContextOverflow:
		hint = "the conversation no longer fits the model's context window; start a new session or use /compact"
	case model.ErrReplay:
		hint = "the replay script does not cover this request"
	default:
		hint = "the provider rejected the request"
	}
	return &acp.Error{Code: int(acp.ErrorCodeInternalError), Message: me.Error() + ": " + hint}
}
