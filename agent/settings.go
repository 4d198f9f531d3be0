package agent

import (
	"context"
	"slices"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/agent/internal/configopts"
	"acpd/agent/internal/turnerr"
	"acpd/model"
	"acpd/permissions"
)

// Config option ids (fixed: clients and users depend on them).
const (
	optMode    = configopts.Mode
	optModel   = configopts.Model
	optThought = configopts.Thought
)

func strp(s string) *string { return &s }

// modeState is the legacy modes view of the session's mode.
func (s *sess) modeState() *acp.SessionModeState { return configopts.Modes(s.settings().Mode) }

// modelChoices lists the model references offered: configured ones plus the
// session's current model.
func (s *sess) modelChoices(current string) []string {
	refs := slices.Clone(s.a.offeredModels())
	if s.cfg.Model != "" && !slices.Contains(refs, s.cfg.Model) {
		refs = append(refs, s.cfg.Model)
	}
	if current != "" && !slices.Contains(refs, current) {
		refs = append(refs, current)
	}
	return refs
}

// configOptions is the config-options view of the session's settings.
func (s *sess) configOptions() []acp.SessionConfigOption {
	st := s.settings()
	return configopts.Options(st.Mode, st.Model, st.Thought, s.modelChoices(st.Model), s.a.opts.Describe, s.a.rendersGroups())
}

// rendersGroups reports whether the client is known to render grouped
// select options (Zed); others get the model selector as one flat list,
// since some (agent-shell) read a group as a single option.
func (a *Agent) rendersGroups() bool { return a.groups.Load() }

// applySetting validates and applies one setting; it reports the updates to
// send (and whether the mode changed).
func (s *sess) applySetting(id, value string) error {
	switch id {
	case optMode:
		if !permissions.Mode(value).Valid() {
			return invalidParams("unknown mode %q (want ask, auto-edit, plan or full)", value)
		}
		s.update(func(st *settings) { st.Mode = value })
	case optModel:
		if value == configopts.NoModel && s.settings().Model == "" {
			return nil // the placeholder of a session without a model
		}
		if _, _, err := model.ParseRef(value); err != nil {
			return invalidParams("%v", err)
		}
		// An offered model is fine; anything else must at least resolve.
		if !slices.Contains(s.modelChoices(s.settings().Model), value) {
			if _, _, err := s.a.opts.Resolve(value); err != nil {
				return invalidParams("model %q cannot be used: %s", value, turnerr.Reason(err))
			}
		}
		s.update(func(st *settings) { st.Model = value })
	case optThought:
		if !configopts.ValidThought(value) {
			return invalidParams("unknown thought_level %q (want off, low, medium or high)", value)
		}
		s.update(func(st *settings) { st.Thought = value })
	default:
		return invalidParams("unknown config option %q (acpd has mode, model and thought_level)", id)
	}
	return nil
}

// announce tells the client about a settings change it did not itself make
// visible: current_mode_update when the mode changed, config_option_update
// always.
func (s *sess) announce(ctx context.Context, modeChanged bool) {
	if modeChanged {
		s.notify(ctx, acp.SessionUpdate{CurrentModeUpdate: &acp.CurrentModeUpdate{CurrentModeID: acp.SessionModeID(s.settings().Mode)}})
	}
	s.notify(ctx, acp.SessionUpdate{ConfigOptionUpdate: &acp.ConfigOptionUpdate{ConfigOptions: s.configOptions()}})
}

func (h handlers) SetSessionMode(ctx context.Context, p *acp.SetSessionModeRequest) (*acp.SetSessionModeResponse, error) {
	a := h.a
	s, err := a.mustSession(p.SessionID)
	if err != nil {
		return nil, err
	}
	before := s.settings().Mode
	if err := s.applySetting(optMode, string(p.ModeID)); err != nil {
		return nil, err
	}
	changed := before != string(p.ModeID)
	jsonrpc.AfterReply(ctx, func() { s.announce(a.baseContext(), changed) })
	return &acp.SetSessionModeResponse{}, nil
}

func (h handlers) SetSessionConfigOption(ctx context.Context, p *acp.SetSessionConfigOptionRequest) (*acp.SetSessionConfigOptionResponse, error) {
	a := h.a
	s, err := a.mustSession(p.SessionID)
	if err != nil {
		return nil, err
	}
	if p.Boolean != nil {
		return nil, invalidParams("config option %q takes a value id, not a boolean", p.ConfigID)
	}
	if p.ValueID == nil {
		return nil, invalidParams("missing value")
	}
	before := s.settings().Mode
	if err := s.applySetting(string(p.ConfigID), string(p.ValueID.Value)); err != nil {
		return nil, err
	}
	changed := s.settings().Mode != before
	jsonrpc.AfterReply(ctx, func() { s.announce(a.baseContext(), changed) })
	return &acp.SetSessionConfigOptionResponse{ConfigOptions: s.configOptions()}, nil
}

func (h handlers) SetSessionModel(ctx context.Context, p *acp.SetSessionModelRequest) (*acp.SetSessionModelResponse, error) {
	a := h.a
	s, err := a.mustSession(p.SessionID)
	if err != nil {
		return nil, err
	}
	if err := s.applySetting(optModel, string(p.ModelID)); err != nil {
		return nil, err
	}
	jsonrpc.AfterReply(ctx, func() { s.announce(a.baseContext(), false) })
	return &acp.SetSessionModelResponse{}, nil
}

// sendCommands announces the slash commands, MCP prompts included (see
// announceCommands); it is called once the session's reply is out.
func (s *sess) sendCommands(ctx context.Context) {
	if w := s.configWarning; w != nil {
		s.a.log.Warn("session starts without its project configuration", "session", s.id, "err", w)
		s.tell(ctx, acp.NoticeSeverityWarning, w.Error(), "The session goes on without what this names. Fix the file, then start a new session.")
	}
	s.announceCommands(ctx, true)
}
