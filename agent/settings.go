package agent

import (
	"context"
	"slices"

	"acpd/acp"
	"acpd/internal/modelmenu"
	"acpd/model"
	"acpd/permissions"
)

// Config option ids (fixed: clients and users depend on them).
const (
	optMode    = "mode"
	optModel   = "model"
	optThought = "thought_level"
)

func strp(s string) *string { return &s }

// modeState is the legacy modes view of the session's mode.
func (s *sess) modeState() *acp.SessionModeState {
	st := s.settings()
	ms := &acp.SessionModeState{CurrentModeID: acp.SessionModeID(st.Mode), AvailableModes: []acp.SessionMode{}}
	for _, m := range permissions.Modes() {
		ms.AvailableModes = append(ms.AvailableModes, acp.SessionMode{ID: acp.SessionModeID(m.Mode), Name: m.Name, Description: strp(m.Description)})
	}
	return ms
}

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

// noModel is the model selector's only value while no model is configured.
const noModel = "none"

// configOptions is the config-options view of the session's settings.
func (s *sess) configOptions() []acp.SessionConfigOption {
	st := s.settings()
	selectOpt := func(id, name, desc string, cat acp.SessionConfigOptionCategory, cur string, vals [][2]string) acp.SessionConfigOption {
		opts := make([]acp.SessionConfigSelectOption, 0, len(vals))
		for _, v := range vals {
			opts = append(opts, acp.SessionConfigSelectOption{Value: acp.SessionConfigValueID(v[0]), Name: v[1]})
		}
		return acp.SessionConfigOption{
			ID: acp.SessionConfigID(id), Name: name, Description: strp(desc), Category: &cat,
			Select: &acp.SessionConfigSelect{
				CurrentValue: acp.SessionConfigValueID(cur),
				Options:      acp.SessionConfigSelectOptions{Ungrouped: opts},
			},
		}
	}
	var modes, models, thoughts [][2]string
	for _, m := range permissions.Modes() {
		modes = append(modes, [2]string{string(m.Mode), m.Name})
	}
	refs := s.modelChoices(st.Model)
	for _, ref := range refs {
		models = append(models, [2]string{ref, ref})
	}
	for _, t := range thoughtLevels {
		thoughts = append(thoughts, [2]string{t.id, t.name})
	}
	out := []acp.SessionConfigOption{
		selectOpt(optMode, "Mode", "What the agent may do without asking.", acp.SessionConfigOptionCategoryMode, st.Mode, modes),
	}
	if len(models) > 0 {
		o := selectOpt(optModel, "Model", "The model answering in this session (provider/model).", acp.SessionConfigOptionCategoryModel, st.Model, models)
		if s.a.opts.Describe != nil {
			o.Select.Options = modelmenu.Grouped(refs, s.a.opts.Describe)
		}
		out = append(out, o)
	} else {
		// The selector still shows what to do before the first prompt fails.
		o := selectOpt(optModel, "Model", "No model is configured yet.", acp.SessionConfigOptionCategoryModel, noModel,
			[][2]string{{noModel, "No model: set ANTHROPIC_API_KEY or run acpd login"}})
		o.Select.Options.Ungrouped[0].Description = strp("Set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY in the editor's environment for acpd, run `acpd login`, or start Ollama; then start a new session.")
		out = append(out, o)
	}
	out = append(out, selectOpt(optThought, "Reasoning", "How much the model thinks before answering.", acp.SessionConfigOptionCategoryThoughtLevel, st.Thought, thoughts))
	return out
}

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
		if value == noModel && s.settings().Model == "" {
			return nil // the placeholder of a session without a model
		}
		if _, _, err := model.ParseRef(value); err != nil {
			return invalidParams("%v", err)
		}
		// An offered model is fine; anything else must at least resolve.
		if !slices.Contains(s.modelChoices(s.settings().Model), value) {
			if _, _, err := s.a.opts.Resolve(value); err != nil {
				return invalidParams("model %q is not available: %v", value, err)
			}
		}
		s.update(func(st *settings) { st.Model = value })
	case optThought:
		if !validThought(value) {
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
	acp.AfterReply(ctx, func() { s.announce(a.baseContext(), changed) })
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
	acp.AfterReply(ctx, func() { s.announce(a.baseContext(), changed) })
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
	acp.AfterReply(ctx, func() { s.announce(a.baseContext(), false) })
	return &acp.SetSessionModelResponse{}, nil
}

// commands are the slash commands acpd offers.
var commands = []acp.AvailableCommand{
	{Name: "compact", Description: "Summarise older turns to free the context window"},
	{Name: "init", Description: "Write an AGENTS.md describing this project for coding agents"},
	{Name: "plan", Description: "Switch to plan mode (read-only)"},
}

// sendCommands announces the slash commands, MCP prompts included (see
// announceCommands); it is called once the session's reply is out.
func (s *sess) sendCommands(ctx context.Context) {
	if w := s.configWarning; w != nil {
		s.a.log.Warn("session starts without its project configuration", "session", s.id, "err", w)
		s.tell(ctx, acp.NoticeSeverityWarning, w.Error(), "The session goes on without that file's settings. Fix the file, then start a new session.")
	}
	s.announceCommands(ctx, true)
}
