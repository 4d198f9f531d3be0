// Package configopts renders a session's settings as ACP shows them: the
// legacy modes view, and the config options mode, model (the model
// selector, grouped by provider with human names, context windows and
// prices when known: models.go) and reasoning level. Its functions are
// pure and safe for concurrent use; the settings themselves are the
// session's.
package configopts

import (
	"slices"

	"acpd/acp"
	"acpd/model"
	"acpd/permissions"
)

// Config option ids (fixed: clients and users depend on them).
const (
	Mode    = "mode"
	Model   = "model"
	Thought = "thought_level"
)

// NoModel is the model selector's only value while no model is configured.
const NoModel = "none"

var thoughtLevels = []struct{ id, name string }{
	{"off", "Off"}, {"low", "Low"}, {"medium", "Medium"}, {"high", "High"},
}

// ValidThought reports whether t is a reasoning level.
func ValidThought(t string) bool {
	return slices.ContainsFunc(thoughtLevels, func(tl struct{ id, name string }) bool { return tl.id == t })
}

// Modes is the legacy modes view of the session's mode.
func Modes(mode string) *acp.SessionModeState {
	ms := &acp.SessionModeState{CurrentModeID: acp.SessionModeID(mode), AvailableModes: []acp.SessionMode{}}
	for _, m := range permissions.Modes() {
		ms.AvailableModes = append(ms.AvailableModes, acp.SessionMode{ID: acp.SessionModeID(m.Mode), Name: m.Name, Description: strp(m.Description)})
	}
	return ms
}

// Options is the config-options view of the settings mode, ref (the
// model) and thought: refs are the models offered, with human names when
// describe is not nil, grouped by provider when grouped is true (only for
// clients known to render groups) and otherwise one flat list naming each
// model's provider; without any the selector says how to get one.
func Options(mode, ref, thought string, refs []string, describe func(ref string) (model.ModelInfo, bool), grouped bool) []acp.SessionConfigOption {
	selectOpt := func(id, name, desc string, cat acp.SessionConfigOptionCategory, cur string, opts []acp.SessionConfigSelectOption) acp.SessionConfigOption {
		return acp.SessionConfigOption{
			ID: acp.SessionConfigID(id), Name: name, Description: strp(desc), Category: &cat,
			Select: &acp.SessionConfigSelect{
				CurrentValue: acp.SessionConfigValueID(cur),
				Options:      acp.SessionConfigSelectOptions{Ungrouped: opts},
			},
		}
	}
	// Each list is built once at its size: this runs at every session/new.
	pm := permissions.Modes()
	modes := make([]acp.SessionConfigSelectOption, len(pm))
	for i, m := range pm {
		modes[i] = acp.SessionConfigSelectOption{Value: acp.SessionConfigValueID(m.Mode), Name: m.Name}
	}
	thoughts := make([]acp.SessionConfigSelectOption, len(thoughtLevels))
	for i, t := range thoughtLevels {
		thoughts[i] = acp.SessionConfigSelectOption{Value: acp.SessionConfigValueID(t.id), Name: t.name}
	}
	out := make([]acp.SessionConfigOption, 0, 3)
	out = append(out, selectOpt(Mode, "Mode", "What the agent may do without asking.", acp.SessionConfigOptionCategoryMode, mode, modes))
	if len(refs) > 0 {
		o := selectOpt(Model, "Model", "The model answering in this session (provider/model).", acp.SessionConfigOptionCategoryModel, ref, nil)
		if grouped {
			o.Select.Options = Grouped(refs, describe)
		} else {
			o.Select.Options = Flat(refs, describe)
		}
		out = append(out, o)
	} else {
		// The selector still shows what to do before the first prompt fails.
		o := selectOpt(Model, "Model", "No model is configured yet.", acp.SessionConfigOptionCategoryModel, NoModel,
			[]acp.SessionConfigSelectOption{{Value: NoModel, Name: "No model: set ANTHROPIC_API_KEY or run acpd login",
				Description: strp("Set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY in the editor's environment for acpd, run `acpd login`, or start Ollama; then start a new session.")}})
		out = append(out, o)
	}
	out = append(out, selectOpt(Thought, "Reasoning", "How much the model thinks before answering.", acp.SessionConfigOptionCategoryThoughtLevel, thought, thoughts))
	return out
}

func strp(s string) *string { return &s }
