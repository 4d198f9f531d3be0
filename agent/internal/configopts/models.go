package configopts

import (
	"fmt"
	"strconv"
	"strings"

	"acpd/acp"
	"acpd/internal/lazy"
	"acpd/model"
)

// providerNames are the group names of the built-in providers.
var providerNames = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"anthropic": "Anthropic", "openai": "OpenAI", "gemini": "Google Gemini", "ollama": "Ollama",
		"openrouter": "OpenRouter", "replay": "Replay",
	}
}}

// Grouped is the model selector's options for the provider/model
// references refs: human names with the context window and price when
// describe knows them, grouped by provider in the order the providers
// first appear; values stay the references.
func Grouped(refs []string, describe func(ref string) (model.ModelInfo, bool)) acp.SessionConfigSelectOptions {
	var groups []acp.SessionConfigSelectGroup
	at := map[string]int{}
	for _, ref := range refs {
		prov, opt := option(ref, describe)
		if prov == "ollama" {
			opt.Name += " (Ollama)"
		}
		i, ok := at[prov]
		if !ok {
			name := providerName(prov)
			i = len(groups)
			at[prov] = i
			groups = append(groups, acp.SessionConfigSelectGroup{Group: acp.SessionConfigGroupID(prov), Name: name})
		}
		groups[i].Options = append(groups[i].Options, opt)
	}
	return acp.SessionConfigSelectOptions{Grouped: groups}
}

// Flat is the model selector's options for clients that do not render
// groups (agent-shell reads a group as one option with no value): one
// list in the order of refs, each name the model's human name followed by
// its provider, e.g. "Claude X (Anthropic)"; values stay the references.
func Flat(refs []string, describe func(ref string) (model.ModelInfo, bool)) acp.SessionConfigSelectOptions {
	opts := make([]acp.SessionConfigSelectOption, 0, len(refs))
	for _, ref := range refs {
		prov, opt := option(ref, describe)
		opt.Name += " (" + providerName(prov) + ")"
		opts = append(opts, opt)
	}
	return acp.SessionConfigSelectOptions{Ungrouped: opts}
}

// option is ref's selector option without its provider: the human name
// when describe knows one (else the model id), and the context window and
// price as its description.
func option(ref string, describe func(ref string) (model.ModelInfo, bool)) (provider string, opt acp.SessionConfigSelectOption) {
	prov, id, err := model.ParseRef(ref)
	if err != nil {
		prov, id = "other", ref
	}
	opt = acp.SessionConfigSelectOption{Value: acp.SessionConfigValueID(ref), Name: id}
	if describe == nil {
		return prov, opt
	}
	if info, ok := describe(ref); ok {
		if info.Name != "" && info.Name != id {
			opt.Name = info.Name
		}
		if d := describeModel(info); d != "" {
			opt.Description = &d
		}
	}
	return prov, opt
}

// providerName is a provider's human name (the built-in ones), else its id.
func providerName(prov string) string {
	if name := providerNames.Get()[prov]; name != "" {
		return name
	}
	return prov
}

// describeModel is a model's context window and price, e.g. "200K context,
// $3 / $15 per million tokens in / out".
func describeModel(info model.ModelInfo) string {
	var parts []string
	if w := info.ContextWindow; w > 0 {
		switch {
		case w >= 1_000_000:
			parts = append(parts, fmt.Sprintf("%.2gM context", float64(w)/1_000_000))
		default:
			parts = append(parts, fmt.Sprintf("%dK context", w/1000))
		}
	}
	if info.InputPrice > 0 || info.OutputPrice > 0 {
		parts = append(parts, fmt.Sprintf("$%s / $%s per million tokens in / out", price(info.InputPrice), price(info.OutputPrice)))
	}
	return strings.Join(parts, ", ")
}

func price(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) }
