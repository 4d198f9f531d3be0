package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"acpd/acp"
	"acpd/agent/internal/editor"
	"acpd/agent/internal/hooks"
	"acpd/agent/internal/subagents"
	"acpd/files"
	"acpd/model"
	"acpd/permissions"
	"acpd/sandbox"
	"acpd/terminal"
	"acpd/tools"
	"acpd/tools/task"
)

// toolEnv is a session as its tools see it (tools.Env).
type toolEnv struct{ s *sess }

var _ tools.Env = toolEnv{}

func (e toolEnv) Resolve(p string) (files.Resolved, error) {
	if p == "" {
		p = "."
	}
	return e.s.roots.Resolve(p)
}

func (e toolEnv) Authorize(ctx context.Context, c *tools.Call, req permissions.Call, upd acp.ToolCallUpdate) (bool, string) {
	return e.s.authorize(ctx, c, req, upd, nil)
}

func (e toolEnv) AuthorizeShowing(ctx context.Context, c *tools.Call, req permissions.Call, upd acp.ToolCallUpdate, preview func() []acp.ToolCallContent) (bool, string) {
	return e.s.authorize(ctx, c, req, upd, preview)
}

func (e toolEnv) Files() *files.Broker { return e.s.broker }

func (e toolEnv) Jobs() *tools.Jobs { return e.s.jobs }

func (e toolEnv) SawFile(path string) { e.s.sawFile(path) }

func (e toolEnv) Update(u acp.ToolCallUpdate) {
	e.s.notify(e.s.a.baseContext(), acp.SessionUpdate{ToolCallUpdate: &u})
}

func (e toolEnv) StartTerminal(ctx context.Context, spec terminal.Spec) (tools.Terminal, error) {
	s := e.s
	s.beforeCommand(ctx)
	if s.a.clientCapabilities().Terminal {
		et, err := editor.StartTerminal(ctx, s.a.peer, s.id, spec)
		if err != nil {
			return tools.Terminal{InEditor: true}, err
		}
		return tools.Terminal{Terminal: et, InEditor: true}, nil
	}
	lt, err := s.a.terms.Start(ctx, spec)
	if err != nil {
		return tools.Terminal{}, err
	}
	return tools.Terminal{Terminal: lt, OutputMeta: s.a.wantsTerminalMeta()}, nil
}

func (e toolEnv) ChildEnv() []string { return e.s.childEnv() }

// Sandbox is the session's command sandbox: the configured mode, network
// and extra paths, the session roots writable, acpd's configuration and
// state and every session's saved command outputs hidden. Where none is available although one is configured, the
// session is told once.
func (e toolEnv) Sandbox() sandbox.Policy {
	s := e.s
	hidden := slices.Clone(s.a.opts.Protected)
	if s.a.opts.Outputs != "" {
		hidden = append(hidden, s.a.opts.Outputs)
	}
	p := s.cfg.SandboxPolicy(append([]string{s.cwd}, s.dirs...), hidden)
	if p.Mode != sandbox.Off {
		if st := sandbox.Available(); st.Err != nil {
			s.sandboxNotice.Do(func() {
				s.a.log.Warn("no OS sandbox for commands", "session", s.id, "why", st.Detail)
				s.tell(s.a.baseContext(), acp.NoticeSeverityWarning, "No OS sandbox for commands", "No OS sandbox is available ("+st.Detail+"): commands run unconfined, so full mode asks before every command. `acpd doctor` says what the sandbox needs.")
			})
		}
	}
	return p
}

// SetPlan keeps the plan and shows it: as the unstable plan_update of the
// session's one plan (planID) to a client that advertised the plan
// capability, as the stable plan update to others. The log keeps the
// stable form, which session/load replays to any client.
func (e toolEnv) SetPlan(p *acp.Plan) {
	s := e.s
	s.mu.Lock()
	s.plan = tools.PlanText(p)
	s.mu.Unlock()
	u := acp.SessionUpdate{Plan: p}
	if !s.a.planUpdates() {
		s.notify(s.a.baseContext(), u)
		return
	}
	s.chunks.Record(u)
	s.send(s.a.baseContext(), acp.SessionUpdate{PlanUpdate: &acp.PlanUpdate{
		Plan: acp.PlanUpdateContent{Items: &acp.PlanItems{PlanID: planID, Entries: p.Entries}},
	}})
}

// planID names the session's plan in plan_update: acpd keeps one plan per
// session, replaced whole by every update_plan call.
const planID acp.PlanID = "plan"

// planUpdates reports the unstable plan capability: the client takes
// plan_update (and plan_removed) session updates.
func (a *Agent) planUpdates() bool { return a.clientCapabilities().Plan != nil }

// childEnv is the base environment of the session's children (commands and
// stdio MCP servers): Options.Env (the filtered environment when nil)
// without the providers' key variables (config.Config.ChildEnv).
func (s *sess) childEnv() []string { return s.cfg.ChildEnv(s.a.opts.Env) }

// wantsTerminalMeta reports Zed's terminal-output extension
// (clientCapabilities._meta.terminal_output = true).
func (a *Agent) wantsTerminalMeta() bool {
	caps := a.clientCapabilities()
	v, ok := caps.Meta["terminal_output"].(bool)
	return ok && v
}

var _ tools.Asker = toolEnv{}

// AskUser puts ask_user's question to the user as elicitation/create (a
// form scoped to the session and the call), when the editor shows forms.
func (e toolEnv) AskUser(ctx context.Context, c *tools.Call, message string, schema acp.ElicitationSchema) (acp.CreateElicitationResponse, error) {
	s := e.s
	if ec := s.a.clientCapabilities().Elicitation; ec == nil || ec.Form == nil {
		return acp.CreateElicitationResponse{}, tools.ErrCannotAsk
	}
	peer, ok := s.a.peer()
	if !ok {
		return acp.CreateElicitationResponse{}, tools.ErrCannotAsk
	}
	id := acp.ToolCallID(c.ID)
	resp, err := peer.CreateElicitation(ctx, &acp.CreateElicitationRequest{Message: message,
		Form: &acp.ElicitationFormMode{RequestedSchema: schema, Session: &acp.ElicitationSessionScope{SessionID: s.id, ToolCallID: &id}}})
	if err != nil {
		if ctx.Err() != nil {
			return acp.CreateElicitationResponse{}, ctx.Err()
		}
		return acp.CreateElicitationResponse{}, err
	}
	return *resp, nil
}

// AskTimeout is agent.ask_timeout_ms (0: tools.DefaultAskTimeout).
func (e toolEnv) AskTimeout() time.Duration {
	return time.Duration(max(e.s.cfg.Agent.AskTimeoutMs, 0)) * time.Millisecond
}

var _ task.Host = toolEnv{}

var _ tools.Searcher = toolEnv{}

// WebSearch is the session's model for web_search, when its provider has
// a web search of its own.
func (e toolEnv) WebSearch() (model.Backend, string, string, bool) {
	ref := e.s.settings().Model
	b, info, err := e.s.a.opts.Resolve(ref)
	if err != nil || !info.WebSearch {
		return nil, "", "", false
	}
	provider, modelID, _ := model.ParseRef(ref)
	return b, modelID, provider, true
}

// SubAgent is what the task tool's sub-agent of agentType runs with: the
// session's model and effort (or the custom agent's model), its built-in
// tools (a custom agent's list, or all; never task itself, nor ask_user:
// a sub-agent reports to its parent, which asks the user; web_search only
// where its model's provider searches; in plan mode only the read-only
// ones), and the session with the policy deciding alone
// (task.PolicyEnv), so a sub-agent may do at most what the mode allows
// without asking. A client that renders sub-agents sees it as a session
// of its own (child).
func (e toolEnv) SubAgent(agentType, callID string) (task.Sub, error) {
	s := e.s
	st := s.settings()
	ref := st.Model
	var custom *subagents.Agent
	if agentType != "" {
		for _, a := range s.currentAgents() {
			if a.Name == agentType {
				custom = &a
				break
			}
		}
		if custom == nil {
			return task.Sub{}, fmt.Errorf("no sub-agent %q", agentType)
		}
		ref = subAgentModel(ref, custom.Model)
	}
	backend, info, err := s.a.opts.Resolve(ref)
	if err != nil {
		return task.Sub{}, fmt.Errorf("its model is not available: %w", err)
	}
	provider, modelID, _ := model.ParseRef(ref)
	metered := s.metered(backend, info)
	env := task.PolicyEnv(e, func(ctx context.Context, c permissions.Call) permissions.Decision {
		// A PreToolUse hook's verdict counts as in the parent: "allow"
		// answers what would ask, "ask" (no one to ask) refuses.
		return hookVerdict(ctx, s.decide(permissions.Mode(s.settings().Mode), c))
	})
	if info.WebSearch {
		// web_search asks the sub-agent's own model, whose provider
		// searches.
		env = searchEnv{Env: env, b: metered, model: modelID, provider: provider}
	}
	sub := task.Sub{Backend: metered, Model: modelID, Cwd: s.cwd, Env: env,
		Tool: func(name string) *tools.Tool { return s.builtinTools()[name] }, // commands wrapped for the checkpoints
		// The turn's PreToolUse and PostToolUse hooks run for the
		// sub-agent's calls too (the task call's context carries them).
		Pre: func(ctx context.Context, id, name string, in json.RawMessage) (context.Context, string) {
			if set := turnHooksOf(ctx); len(set.Match(hooks.PreToolUse)) > 0 {
				return s.preToolHooks(ctx, set, id, name, in)
			}
			return ctx, ""
		},
		Post: func(ctx context.Context, id, name string, in json.RawMessage, res *tools.Result) {
			if set := turnHooksOf(ctx); len(set.Match(hooks.PostToolUse)) > 0 {
				s.postToolHooks(ctx, set, id, name, in, res)
			}
		}}
	if info.Reasoning {
		sub.Effort = model.Effort(st.Thought)
	}
	if custom != nil {
		sub.Prompt = custom.Prompt
		names := custom.Tools
		if names == nil {
			names = slices.Sorted(maps.Keys(s.a.builtin))
		}
		sub.Tools = []string{}
		for _, n := range names {
			t := s.a.builtin[n]
			if t == nil || n == "task" || n == "ask_user" || n == tools.WebSearchTool && !info.WebSearch || st.Mode == string(permissions.ModePlan) && !t.ReadOnly && n != "update_plan" {
				continue
			}
			sub.Tools = append(sub.Tools, n)
		}
	}
	if s.a.subagents() {
		sub.Child, sub.Backend = s.newChild(callID, sub.Backend, info)
	}
	return sub, nil
}

// searchEnv is a sub-agent's tool environment when its model's provider
// has a web search of its own: web_search asks that model.
type searchEnv struct {
	tools.Env
	b               model.Backend
	model, provider string
}

var _ tools.Searcher = searchEnv{}

func (e searchEnv) WebSearch() (model.Backend, string, string, bool) {
	return e.b, e.model, e.provider, true
}

// subAgentModel is the model reference of a custom sub-agent whose file
// says want, in a session using parent: the parent's for "" (inherit); a
// provider/model reference as it is; Claude Code's sonnet, opus and haiku
// as Anthropic's models when the parent is on Anthropic, else the parent's.
func subAgentModel(parent, want string) string {
	switch {
	case want == "":
		return parent
	case strings.Contains(want, "/"):
		return want
	}
	provider, _, _ := model.ParseRef(parent)
	if id, ok := subagents.ClaudeModel.Get()[want]; ok && provider == "anthropic" {
		return "anthropic/" + id
	}
	return parent
}
