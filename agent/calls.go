package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"acpd/acp"
	"acpd/agent/internal/batch"
	"acpd/agent/internal/subagents"
	"acpd/model"
	"acpd/permissions"
	"acpd/tools"
	"acpd/tools/task"
)

// tools returns the session's tools by name.
func (s *sess) tools() map[string]*tools.Tool {
	all, _ := s.toolsMade()
	return all
}

// toolsMade is [sess.tools] with the map's serial number: the same number
// means the same map (0: the built-in tools' own, which never changes).
func (s *sess) toolsMade() (map[string]*tools.Tool, uint64) {
	mcp, made := s.mcp.ToolsMade()
	hasSkills := len(s.currentSkills()) > 0
	agents := s.currentAgents()
	builtin := s.builtinTools()
	if len(mcp) == 0 && !hasSkills && len(agents) == 0 {
		return builtin, 0
	}
	// A turn asks for the tools several times per model request and tool
	// call: the merged map is made again only when an input changed (the
	// bridge's map is replaced when a server's tools change, the agents'
	// list when the extensions are read again).
	s.toolSet.mu.Lock()
	defer s.toolSet.mu.Unlock()
	ts := &s.toolSet
	if ts.all != nil && ts.skills == hasSkills && ts.mcp == made && sameSlice(ts.agents, agents) {
		return ts.all, ts.serial
	}
	all := make(map[string]*tools.Tool, len(builtin)+len(mcp)+1)
	if hasSkills {
		all["skill"] = s.skillTool()
	}
	for n, t := range mcp {
		all[n] = t
	}
	for n, t := range builtin {
		all[n] = t
	}
	if len(agents) > 0 {
		types := make([]task.Type, len(agents))
		for i, a := range agents {
			types[i] = task.Type{Name: a.Name, Description: a.Description}
		}
		all["task"] = task.ToolWith(types)
	}
	ts.all, ts.mcp, ts.skills, ts.agents = all, made, hasSkills, agents
	ts.serial++
	return all, ts.serial
}

// toolSet is the tool map [sess.tools] made last and what it was made of.
type toolSet struct {
	mu     sync.Mutex
	all    map[string]*tools.Tool
	serial uint64 // counts the maps made (the first is 1)
	mcp    uint64 // the MCP tools' map, by its serial (mcpbridge.Bridge.ToolsMade)
	skills bool
	agents []subagents.Agent

	// defs is the list toolDefs made last and what it was made of.
	defs    []model.ToolDef
	defsKey defsKey
}

// defsKey is everything a tool list offered to the model depends on: the
// tool map (by its serial, see sess.toolsMade) and the three choices
// toolDefs makes of it.
type defsKey struct {
	tools     uint64
	patch     bool // apply_patch offered (the model family's trained on it)
	webSearch bool // web_search offered (the provider has a search)
	plan      bool // plan mode: read-only tools only
	made      bool // the entry holds a list
}

// sameSlice reports whether a and b are the same slice: the same elements
// in memory, not equal ones.
func sameSlice[E any](a, b []E) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// toolDefs lists the tool definitions offered to the model (info), sorted
// by name: apply_patch only to the model families trained on it,
// web_search only where the provider has a search of its own, and in plan
// mode only the tools the mode allows (read-only tools and update_plan).
//
// The list is made again only when one of its inputs changed (see
// defsKey): every model request of a session asks for it, and with twenty
// MCP servers it is eighty tools filtered and sorted. The list returned is
// shared by the requests until then: callers must not modify it.
func (s *sess) toolDefs(info model.ModelInfo) []model.ToolDef {
	ts, serial := s.toolsMade()
	st := s.settings()
	_, modelID, _ := model.ParseRef(st.Model)
	key := defsKey{tools: serial, patch: tools.PatchModel(modelID), webSearch: info.WebSearch,
		plan: st.Mode == string(permissions.ModePlan), made: true}
	set := &s.toolSet
	set.mu.Lock()
	if set.defsKey == key {
		defs := set.defs
		set.mu.Unlock()
		return defs
	}
	set.mu.Unlock()
	names := make([]string, 0, len(ts))
	for n, t := range ts {
		if n == "apply_patch" && !key.patch {
			continue
		}
		// web_search runs on the provider's own search: not offered where
		// there is none.
		if n == tools.WebSearchTool && !key.webSearch {
			continue
		}
		// task stays: its sub-agents get only what the mode allows.
		if key.plan && !t.ReadOnly && n != "update_plan" && n != "task" {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	defs := make([]model.ToolDef, 0, len(names))
	for _, n := range names {
		defs = append(defs, ts[n].Def)
	}
	set.mu.Lock()
	set.defs, set.defsKey = defs, key
	set.mu.Unlock()
	return defs
}

// toolCallStarted is the first tool_call update of a call.
func (s *sess) toolCallStarted(c *model.StreamedCall) *acp.ToolCall {
	name := c.Name
	tc := &acp.ToolCall{ToolCallID: acp.ToolCallID(c.ID), Name: &name, Title: c.Name, Kind: acp.ToolKindOther, Status: acp.ToolCallStatusPending}
	if t := s.tools()[c.Name]; t != nil {
		tc.Kind = t.Kind
		if t.Title != nil && len(c.Input) > 0 {
			tc.Title = t.Title(c.Input)
		}
	}
	if len(c.Input) > 0 && json.Valid(c.Input) {
		tc.RawInput = c.Input
	}
	return tc
}

// runCalls runs the response's tool calls (package agent/internal/batch) and
// appends their results to the transcript. done reports that the turn ends
// here (with stop): cancelled, or a call that ends the turn
// (tools.Result.EndTurn) had its text shown as the agent's message.
func (s *sess) runCalls(ctx context.Context, ts *turnState) (stop acp.StopReason, done bool) {
	out := s.a.baseContext()
	calls := make([]batch.Call, len(ts.calls))
	for i, c := range ts.calls {
		calls[i] = batch.Call{ID: c.ID, Name: c.Name, Input: c.Input, Refused: ts.refused[c.ID]}
	}
	results, ends := batch.Run(ctx, batch.Options{
		Tools:  s.tools,
		Env:    toolEnv{s},
		Update: func(u acp.ToolCallUpdate) { s.notify(out, acp.SessionUpdate{ToolCallUpdate: &u}) },
		// The session owns the stuck calls from here: it waits for them
		// when it closes.
		Abandon: s.abandoned.Go,
		Images:  ts.info.ID == "" || ts.info.Images,
		Logger:  s.sessLog(),
		Pre:     s.preHook(ctx),
		Post:    s.postHook(ctx),
	}, calls)
	if r := s.changeReminder(false); r != "" && len(results) > 0 {
		// Attached to the newest tool result: the system prompt stays the
		// same, so the provider's prompt cache keeps hitting.
		last := &results[len(results)-1]
		last.Content = append(last.Content, model.Part{Type: model.PartText, Text: "\n\n" + r})
	}
	s.appendMessage(model.Message{Role: model.RoleUser, Parts: results})
	if ctx.Err() != nil {
		return acp.StopReasonCancelled, true
	}
	if len(ends) > 0 {
		// ask_user without forms: its question is the agent's message,
		// and the user's next prompt answers it.
		text := strings.Join(ends, "\n\n")
		s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk(text, newID("m_"))})
		s.appendMessage(model.Message{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartText, Text: text}}})
		s.asked.Store(true)
		return acp.StopReasonEndTurn, true
	}
	return "", false
}

// closeCalls gives every completed-but-unrun call of a failed response an
// error result, so the transcript stays valid for the next request.
func (s *sess) closeCalls(ts *turnState, reason string) {
	if ts == nil || len(ts.calls) == 0 {
		return
	}
	out := s.a.baseContext()
	parts := make([]model.Part, 0, len(ts.calls))
	for _, c := range ts.calls {
		parts = append(parts, tools.Errorf("%s", reason).Part(c.ID))
		s.notify(out, acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Status: new(acp.ToolCallStatusFailed)}})
	}
	s.appendMessage(model.Message{Role: model.RoleUser, Parts: parts})
}

// sessLog is the agent's logger with the session's id.
func (s *sess) sessLog() *slog.Logger {
	s.logOnce.Do(func() { s.logger = s.a.log.With("session", s.id) })
	return s.logger
}
