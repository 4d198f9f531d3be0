package configopts

import (
	"testing"

	"acpd/model"
)

// References group by provider in order of first appearance, with the
// known names, windows and prices.
func TestGrouped(t *testing.T) {
	describe := func(ref string) (model.ModelInfo, bool) {
		if ref == "anthropic/claude-x" {
			return model.ModelInfo{Name: "Claude X", ContextWindow: 200_000, InputPrice: 3, OutputPrice: 15}, true
		}
		return model.ModelInfo{}, false
	}
	got := Grouped([]string{"anthropic/claude-x", "ollama/qwen", "anthropic/other"}, describe).Grouped
	if len(got) != 2 || got[0].Name != "Anthropic" || got[1].Name != "Ollama" || len(got[0].Options) != 2 {
		t.Fatalf("groups = %+v", got)
	}
	o := got[0].Options[0]
	if o.Name != "Claude X" || o.Description == nil || *o.Description != "200K context, $3 / $15 per million tokens in / out" {
		t.Errorf("option = %+v", o)
	}
	if q := got[1].Options[0]; q.Name != "qwen (Ollama)" || q.Value != "ollama/qwen" {
		t.Errorf("ollama option = %+v", q)
	}
}
