package provider

import "acpd/model"

// catalogEntry describes one model of a built-in cloud provider.
type catalogEntry struct {
	provider string // "anthropic", "openai" or "gemini": the dialect family
	info     model.ModelInfo
}

// catalog is a small table of current models of the built-in cloud
// providers. The figures are APPROXIMATE, copied from the providers'
// public documentation (late 2025), and are only used for models the
// configuration does not describe: context windows and output limits in
// tokens, prices in USD per million tokens (list prices, short prompts).
// A [providers.NAME] models entry overrides them.
var catalog = []catalogEntry{
	{"anthropic", model.ModelInfo{ID: "claude-sonnet-4-5", Name: "Claude Sonnet 4.5", ContextWindow: 200_000, MaxOutputTokens: 64_000,
		Tools: true, Images: true, Reasoning: true, InputPrice: 3, OutputPrice: 15}},
	{"anthropic", model.ModelInfo{ID: "claude-opus-4-5", Name: "Claude Opus 4.5", ContextWindow: 200_000, MaxOutputTokens: 64_000,
		Tools: true, Images: true, Reasoning: true, InputPrice: 5, OutputPrice: 25}},
	{"anthropic", model.ModelInfo{ID: "claude-haiku-4-5", Name: "Claude Haiku 4.5", ContextWindow: 200_000, MaxOutputTokens: 64_000,
		Tools: true, Images: true, Reasoning: true, InputPrice: 1, OutputPrice: 5}},
	{"openai", model.ModelInfo{ID: "gpt-5", Name: "GPT-5", ContextWindow: 400_000, MaxOutputTokens: 128_000,
		Tools: true, Images: true, Reasoning: true, InputPrice: 1.25, OutputPrice: 10}},
	{"openai", model.ModelInfo{ID: "gpt-5-mini", Name: "GPT-5 mini", ContextWindow: 400_000, MaxOutputTokens: 128_000,
		Tools: true, Images: true, Reasoning: true, InputPrice: 0.25, OutputPrice: 2}},
	{"openai", model.ModelInfo{ID: "gpt-4.1", Name: "GPT-4.1", ContextWindow: 1_047_576, MaxOutputTokens: 32_768,
		Tools: true, Images: true, InputPrice: 2, OutputPrice: 8}},
	{"gemini", model.ModelInfo{ID: "gemini-2.5-pro", Name: "Gemini 2.5 Pro", ContextWindow: 1_048_576, MaxOutputTokens: 65_536,
		Tools: true, Images: true, Audio: true, Reasoning: true, InputPrice: 1.25, OutputPrice: 10}},
	{"gemini", model.ModelInfo{ID: "gemini-2.5-flash", Name: "Gemini 2.5 Flash", ContextWindow: 1_048_576, MaxOutputTokens: 65_536,
		Tools: true, Images: true, Audio: true, Reasoning: true, InputPrice: 0.30, OutputPrice: 2.50}},
	{"gemini", model.ModelInfo{ID: "gemini-3-pro-preview", Name: "Gemini 3 Pro (preview)", ContextWindow: 1_048_576, MaxOutputTokens: 65_536,
		Tools: true, Images: true, Audio: true, Reasoning: true, InputPrice: 2, OutputPrice: 12}},
}

// lookupCatalog returns the catalog entry of model id in dialect family
// fam. A dated snapshot id ("claude-sonnet-4-5-20250929",
// "gpt-4.1-2025-04-14") matches its alias.
func lookupCatalog(fam, id string) (model.ModelInfo, bool) {
	for _, e := range catalog {
		if e.provider == fam && (id == e.info.ID || datedSnapshot(id, e.info.ID)) {
			return e.info, true
		}
	}
	return model.ModelInfo{}, false
}

// datedSnapshot reports whether id is alias followed by "-" and a date
// (YYYYMMDD or YYYY-MM-DD).
func datedSnapshot(id, alias string) bool {
	if len(id) <= len(alias)+1 || id[:len(alias)] != alias || id[len(alias)] != '-' {
		return false
	}
	date := id[len(alias)+1:]
	switch len(date) {
	case 8:
	case 10:
		if date[4] != '-' || date[7] != '-' {
			return false
		}
		date = date[:4] + date[5:7] + date[8:]
	default:
		return false
	}
	for _, c := range date {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
