package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/agent/internal/hooks"
	"acpd/agent/internal/notice"
	"acpd/agent/internal/promptin"
	"acpd/agent/internal/slash"
	"acpd/agent/internal/subagents"
	"acpd/agent/internal/turnerr"
	"acpd/agent/internal/turnslot"
	"acpd/agent/internal/usercmd"
	"acpd/compact"
	"acpd/internal/loopguard"
	"acpd/model"
)

// defaultMaxTurnRequests caps model requests per prompt turn when the config
// does not say.
const defaultMaxTurnRequests = 100

func newID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

func (h handlers) Prompt(ctx context.Context, p *acp.PromptRequest) (*acp.PromptResponse, error) {
	a := h.a
	s, err := a.mustSession(p.SessionID)
	if err != nil {
		return nil, err
	}
	if len(p.Prompt) == 0 {
		// CodeCompanion sends an empty Enter as prompt []: nothing to do.
		return &acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
	}
	s.prompted.Store(true)
	t, err := s.slot.Begin(ctx, jsonrpc.Arrival(ctx))
	if err != nil {
		return s.notBegun(p.Prompt, err)
	}
	// The slot is released once the reply is written (AfterReply runs even
	// when the write fails or the handler panics): a prompt waiting for this
	// cancelled turn must not stream before the client has this reply.
	jsonrpc.AfterReply(ctx, t.End)
	defer t.Replying()
	return s.runPrompt(t, p.Prompt, false)
}

// notBegun is the answer to a prompt whose turn could not begin (err from
// turnslot's Begin). A prompt a cancel dropped from the queue is told.
func (s *sess) notBegun(prompt []acp.ContentBlock, err error) (*acp.PromptResponse, error) {
	switch {
	case errors.Is(err, turnslot.ErrCancelledEarly):
		// session/cancel read after this prompt (a quick Stop, or the
		// queue behind a cancelled turn).
		s.tellDropped(prompt, "It waited for the cancelled turn and never ran; send it again to run it.")
		s.sync()
		return &acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	case errors.Is(err, turnslot.ErrClosed):
		return nil, &jsonrpc.Error{Code: int(acp.ErrorCodeResourceNotFound), Message: fmt.Sprintf("session %q is closed", s.id)}
	case errors.Is(err, turnslot.ErrBusy):
		return nil, turnerr.InProgress
	}
	return nil, err
}

// runPrompt runs the turn t of prompt to its answer; show: the client has
// not shown the prompt itself (a turn a steering request started). The
// steering messages the turn did not take are told.
func (s *sess) runPrompt(t *turnslot.Turn[steerMsg], prompt []acp.ContentBlock, show bool) (*acp.PromptResponse, error) {
	s.beginUsage()
	stop, err := s.runTurn(t.Context(), t, prompt, show)
	usage := s.endUsage()
	cancelled := t.Cancelled()
	for _, m := range t.Shut() {
		if cancelled {
			s.tellDropped(m, "It was sent to steer the cancelled turn and had not reached the model yet; send it again to run it.")
		} else {
			s.tellDropped(m, "It was sent to steer a turn that ended before its next model request; send it again to run it.")
		}
	}
	s.sync()
	if cancelled {
		// session/cancel: the turn ends with "cancelled", never an error
		// (a failure to save waits for the next turn).
		return &acp.PromptResponse{StopReason: acp.StopReasonCancelled, Usage: usage}, nil
	}
	if perr := s.persistFailure(true); perr != nil {
		// Told live only: a card would be one more record to lose.
		s.notice(s.a.baseContext(), acp.NoticeSeverityError, "This session could not be saved: "+perr.Error())
		s.out.Flush(s.a.baseContext())
		return nil, turnerr.NotSaved(perr)
	}
	if err != nil {
		return nil, err
	}
	// usage is unstable in the schema, yet needs no capability: like
	// claude-agent-acp, every turn that made model requests reports it.
	return &acp.PromptResponse{StopReason: stop, Usage: usage}, nil
}

// turnState is one model response as the turn streams it.
type turnState struct {
	msgID string
	asm   model.Assembler
	// calls are the response's tool calls: after a failed stream only
	// the completed ones (the others are not in the transcript).
	calls []*model.StreamedCall
	shown map[string]bool // calls whose tool_call update was sent, by ID
	// started: a delta reached the client.
	started bool
	// refused are the calls not to run (repetitions), by ID.
	refused map[string]bool
	// info is the model the response came from.
	info model.ModelInfo
}

// runTurn runs the prompt turn t to its stop reason; show: send the
// client the prompt as a user message (it did not show it itself).
func (s *sess) runTurn(ctx context.Context, t *turnslot.Turn[steerMsg], prompt []acp.ContentBlock, show bool) (acp.StopReason, error) {
	out := s.a.baseContext()
	if cmd, ok := slash.Parse(prompt); !ok || slash.ModelTurn(cmd) {
		// A model turn: its changes to files are its checkpoint.
		s.beginTurn(promptin.Title(prompt))
		defer s.endTurn(out)
	}
	s.userMessage(out, prompt, show)
	st := s.settings()
	if st.Model == "" && s.a.refreshCredentials(out) {
		st = s.settings() // the refresh may have given this session a model
	}
	if st.Model == "" && s.adoptDefaultModel() {
		// A session created while no model was available (no key yet)
		// takes the default found since (after `acpd login` and ACP
		// authenticate), so the user's retry works in the same session.
		st = s.settings()
		s.announce(out, false)
	}
	backend, info, resolveErr := s.a.opts.Resolve(st.Model)
	backend = s.metered(backend, info)
	parts, notes := promptin.Parts(ctx, prompt, info, s.readLinked)
	for _, n := range notes {
		s.tell(out, acp.NoticeSeverityWarning, promptin.NoteTitle(n), n+" Choose a model that takes it in the model selector to include it.")
	}
	_, isCommand := slash.Parse(prompt)
	if st.Title == "" && !isCommand {
		if title := promptin.Title(prompt); title != "" {
			s.update(func(st *settings) { st.Title = title })
			now := time.Now().UTC().Format(time.RFC3339)
			s.notify(out, acp.SessionUpdate{SessionInfoUpdate: &acp.SessionInfoUpdate{Title: strp(title), UpdatedAt: &now}})
		}
	}
	reviewing := false
	if cmd, ok := slash.Parse(prompt); ok {
		switch cmd {
		case "init":
			// /init is a model turn with acpd's own prompt.
			parts = []model.Part{{Type: model.PartText, Text: slash.InitPrompt}}
		case "review":
			// /review is a model turn with the changes in its prompt; what
			// cannot be reviewed is said without a model request.
			text, err := s.reviewPrompt(ctx, slash.Args(prompt))
			if err != nil {
				if ctx.Err() != nil {
					return acp.StopReasonCancelled, nil
				}
				s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk(reviewRefusal(err), newID("m_"))})
				return acp.StopReasonEndTurn, nil
			}
			parts = []model.Part{{Type: model.PartText, Text: text}}
			reviewing = true
		default:
			// Other slash commands are for acpd, not the model: they stay
			// out of the transcript, and a steering message sent meanwhile
			// becomes a turn of its own.
			s.refuseSteering(t)
			if cmd == "compact" && resolveErr != nil {
				return "", s.noModel(out, st.Model, resolveErr)
			}
			return s.runCommand(ctx, cmd, slash.Args(prompt), backend, info)
		}
	}
	if resolveErr != nil {
		// The model never saw this prompt: keep it out of the transcript,
		// so the user's retry does not send it twice.
		return "", s.noModel(out, st.Model, resolveErr)
	}
	ext := s.refreshCommands(out)
	if c, args, ok := usercmd.Find(ext.cmds, prompt); ok {
		// A custom command (a Markdown file): its prompt, expanded, is
		// the user's message; blocks after the command's text (attached
		// files) follow it.
		rest, _ := promptin.Parts(ctx, prompt[1:], info, s.readLinked)
		parts = append([]model.Part{{Type: model.PartText, Text: usercmd.Expand(c, args)}}, rest...)
		// A command's model answers its turn (the session keeps its own).
		if ref := commandModel(st.Model, c.Model); ref != "" && ref != st.Model {
			if b, i, err := s.a.opts.Resolve(ref); err == nil {
				backend, info = b, i
				ctx = context.WithValue(ctx, turnModelKey{}, ref)
			} else {
				s.tell(out, acp.NoticeSeverityWarning, "Command model unavailable", fmt.Sprintf("/%s asks for model %s, which is not available (%v); the session's model answers.", c.Name, ref, err))
			}
		}
	} else if sk, args, ok := skillInvoked(ext, prompt); ok {
		// /skill-name: the skill's instructions, read now, are the
		// user's message.
		text, err := s.useSkill(ctx, sk, args)
		if err != nil {
			text = fmt.Sprintf("The user asked for skill %s, which cannot be read: %v", sk.Name, err)
		}
		rest, _ := promptin.Parts(ctx, prompt[1:], info, s.readLinked)
		parts = append([]model.Part{{Type: model.PartText, Text: text}}, rest...)
	} else if p, stop, ok := s.mcp.PromptTurn(ctx, prompt); ok {
		// An MCP prompt command: its messages are the user's message.
		if stop != "" {
			return stop, nil
		}
		parts = p
	}
	// Hooks (the user's, and the project's once trusted): SessionStart
	// and UserPromptSubmit may add context or block the prompt.
	hs := s.turnHooks(ctx)
	ctx = withTurnHooks(ctx, hs)
	extra, blocked := s.promptHooks(ctx, hs, prompt)
	if blocked != "" {
		s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk(blocked, newID("m_"))})
		return acp.StopReasonEndTurn, nil
	}
	for _, t := range extra {
		parts = append(parts, model.Part{Type: model.PartText, Text: t})
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
	s.asked.Store(false)
	stop, err := s.loop(ctx, t, backend, info, maxReq)
	// Stop hooks may send the model back to work, a bounded number of
	// times; never while the turn ends on a question to the user, whose
	// next prompt answers it.
	for i := 0; err == nil && stop == acp.StopReasonEndTurn && !s.asked.Swap(false) && i < maxStopContinuations && len(hs.Match(hooks.Stop)) > 0; i++ {
		reason := s.stopHooks(ctx, hs, i > 0)
		if reason == "" {
			break
		}
		s.appendMessage(model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "A Stop hook did not let the turn end yet: " + reason}}})
		stop, err = s.loop(ctx, t, backend, info, maxReq)
	}
	if reviewing && err == nil && stop == acp.StopReasonEndTurn {
		s.showFindings(out)
	}
	return stop, err
}

// noModel is the turn's error without a model. A client that cannot log
// in is also told as the agent's answer, which every editor renders,
// since it would show the error itself only as a raw error.
func (s *sess) noModel(ctx context.Context, ref string, err error) error {
	e := turnerr.NoModel(ref, err)
	if !s.a.canLogIn() {
		var ae *jsonrpc.Error
		if errors.As(e, &ae) {
			s.notify(ctx, acp.SessionUpdate{AgentMessageChunk: textChunk(ae.Message, newID("m_"))})
		}
	}
	return e
}

// maxRestarts bounds re-requests after a retryable failure that happened
// once part of the response had reached the client.
const maxRestarts = 2

// loop runs model requests and tool calls until the model ends the turn.
// Before each request it delivers the steering messages t holds; when the
// model would end the turn while some wait, the turn goes on with them.
func (s *sess) loop(ctx context.Context, t *turnslot.Turn[steerMsg], backend model.Backend, info model.ModelInfo, maxReq int) (acp.StopReason, error) {
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
		if why := s.takeHalt(); why != "" {
			// A hook answered continue: false.
			s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk("Stopped by a hook: "+why, newID("m_"))})
			return acp.StopReasonEndTurn, nil
		}
		if err := s.persistFailure(false); err != nil {
			// The log lost a record: stop before the session drifts
			// further from what a resume would restore (Prompt reports it).
			return "", err
		}
		if s.needsCompaction(info) {
			if err := s.compact(ctx, backend, info); err != nil {
				if ctx.Err() != nil {
					return acp.StopReasonCancelled, nil
				}
				s.a.log.Warn("compaction failed", "session", s.id, "err", err)
			}
		}
		// After compaction, so the request has them verbatim.
		s.deliverSteered(ctx, t.Steered(false), info)
		ts, err := s.stream(ctx, backend, info, last)
		s.reportUsage(out, ts.asm.Usage, info)
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
			return "", turnerr.ModelOf(s.settings().Model, err)
		}
		if len(ts.calls) == 0 {
			if last {
				return acp.StopReasonMaxTurnRequests, nil
			}
			switch ts.asm.Finish {
			case model.FinishMaxTokens:
				return acp.StopReasonMaxTokens, nil
			case model.FinishRefusal:
				return acp.StopReasonRefusal, nil
			}
			if more := t.Steered(true); len(more) > 0 {
				// The user said more while the model answered: the
				// answer is not the turn's last.
				s.deliverSteered(ctx, more, info)
				continue
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
		for _, c := range ts.calls {
			v := guard.Observe(c.Name, c.Input)
			if v == loopguard.Stop {
				name = c.Name
				break
			}
			if v == loopguard.Refuse {
				if refused == nil {
					refused = map[string]bool{}
				}
				refused[c.ID] = true
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
	ts := &turnState{msgID: newID("m_"), shown: map[string]bool{}, info: info}
	req := s.buildRequest(info)
	if ref, ok := ctx.Value(turnModelKey{}).(string); ok {
		_, req.Model, _ = model.ParseRef(ref)
	}
	if last {
		compact.FinalRequest(req)
	}
	var streamErr error
	for ev, err := range b.Stream(ctx, req) {
		if err != nil {
			streamErr = err
			break
		}
		c := ts.asm.Add(ev)
		switch ev.Type {
		case model.EventText, model.EventReasoning:
			if ev.Text == "" {
				continue
			}
			ts.started = true
			s.notifyText(out, ev.Type == model.EventReasoning, ts.msgID, ev.Text)
		case model.EventToolStart, model.EventToolDone:
			if !ts.shown[c.ID] {
				ts.shown[c.ID] = true
				s.notify(out, acp.SessionUpdate{ToolCall: s.toolCallStarted(c)})
			} else if ev.Type == model.EventToolDone {
				// Shown at tool_start, before its input existed: now show
				// the title rendered from the input, and the input.
				if tc := s.toolCallStarted(c); tc.RawInput != nil {
					s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: tc.ToolCallID, Title: &tc.Title, RawInput: tc.RawInput}})
				}
			}
		}
	}
	if streamErr == nil && !ts.asm.Finished && ctx.Err() == nil {
		streamErr = &model.Error{Kind: model.ErrNetwork, Message: "the model's stream ended without finishing"}
	}
	if streamErr == nil && ctx.Err() != nil {
		streamErr = ctx.Err()
	}
	msg := ts.asm.Message()
	msg.Interrupted = streamErr != nil
	s.appendMessage(msg)
	if streamErr == nil {
		ts.calls = ts.asm.Calls()
		return ts, nil
	}
	// Only completed calls are in the transcript; they get results below.
	for _, c := range ts.asm.Calls() {
		if len(c.Input) > 0 {
			ts.calls = append(ts.calls, c)
		} else if ts.shown[c.ID] {
			s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Status: new(acp.ToolCallStatusFailed)}})
		}
	}
	return ts, streamErr
}

func msgID(id string) *acp.MessageID {
	m := acp.MessageID(id)
	return &m
}

// textChunk is a message's text chunk. Its parts are allocated together,
// one allocation instead of three: a turn makes one per streamed delta.
func textChunk(text, id string) *acp.ContentChunk {
	p := &struct {
		chunk acp.ContentChunk
		text  acp.TextContent
		id    acp.MessageID
	}{text: acp.TextContent{Text: text}, id: acp.MessageID(id)}
	p.chunk = acp.ContentChunk{Content: acp.ContentBlock{Text: &p.text}, MessageID: &p.id}
	return &p.chunk
}

// appendMessage adds m to the transcript and the log.
func (s *sess) appendMessage(m model.Message) {
	m = m.Memoized()
	s.mu.Lock()
	s.transcript = append(s.transcript, m)
	s.mu.Unlock()
	s.record(kindMessage, m)
}

// memoized gives each message of msgs a memo, which its copies share: the
// dialects keep its encoding there, so that a request encodes only the
// messages that are new since the last one (see model.Memo). It returns
// msgs.
func memoized(msgs []model.Message) []model.Message {
	for i := range msgs {
		msgs[i] = msgs[i].Memoized()
	}
	return msgs
}

// buildRequest assembles the model request from the session's state.
func (s *sess) buildRequest(info model.ModelInfo) *model.Request {
	st := s.settings()
	_, modelID, _ := model.ParseRef(st.Model)
	s.mu.Lock()
	// The transcript itself, capped: appending to the request's messages
	// copies them, and the next request's extend these (model.Prefix), so
	// a request of a long conversation neither copies nor walks it.
	msgs := s.transcript[:len(s.transcript):len(s.transcript)]
	s.mu.Unlock()
	// Cache breakpoints (for providers with explicit prompt caching) after
	// the newest user message, so the next request of the turn reads the
	// conversation so far from the cache, and after the one before it,
	// where the previous request wrote its entry.
	var cacheAt []int
	for i := len(msgs) - 1; i >= 0 && len(cacheAt) < 2; i-- {
		if msgs[i].Role == model.RoleUser {
			cacheAt = append(cacheAt, i)
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
		Tools:       s.toolDefs(info),
		Effort:      effort,
		CacheSystem: true,
		CacheTools:  true,
		CacheAt:     cacheAt,
	}
}

// notice shows clients that take notices something they should see, live
// (not logged; see package notice).
func (s *sess) notice(ctx context.Context, sev acp.NoticeSeverity, title string) {
	if notice.Shown(s.a.clientCapabilities()) {
		s.send(ctx, notice.Notice(sev, title, ""))
	}
}

// tell shows the user a problem in any editor (notice.Tell): title says
// what, why says why and how to fix it.
func (s *sess) tell(ctx context.Context, sev acp.NoticeSeverity, title, why string) {
	if u, card := notice.Tell(s.a.clientCapabilities(), sev, title, why); card {
		s.notify(ctx, u)
	} else {
		s.send(ctx, u)
	}
}

// turnModelKey carries the model reference of a turn answered by another
// model than the session's (a custom command's).
type turnModelKey struct{}

// commandModel is the model reference a custom command's model: names, in
// a session using parent: "" for none; a provider/model reference as it
// is; Claude Code's sonnet, opus and haiku as Anthropic's models on
// Anthropic; any other bare id as a model of the session's provider.
func commandModel(parent, want string) string {
	switch {
	case want == "" || want == "inherit":
		return ""
	case strings.Contains(want, "/"):
		return want
	}
	provider, _, err := model.ParseRef(parent)
	if err != nil {
		return ""
	}
	if id, ok := subagents.ClaudeModel.Get()[want]; ok {
		if provider != "anthropic" {
			return ""
		}
		want = id
	}
	return provider + "/" + want
}
