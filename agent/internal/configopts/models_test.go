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

// Clients that do not render groups get one flat list: every option keeps
// its reference as the value and names its provider, so agent-shell can
// set it and show the human name.
func TestFlat(t *testing.T) {
	describe := func(ref string) (model.ModelInfo, bool) {
		if ref == "anthropic/claude-x" {
			return model.ModelInfo{Name: "Claude X", ContextWindow: 200_000}, true
		}
		return model.ModelInfo{}, false
	}
	got := Flat([]string{"anthropic/claude-x", "openai/fake-model", "custom/m"}, describe)
	if got.Grouped != nil || len(got.Ungrouped) != 3 {
		t.Fatalf("options = %+v", got)
	}
	want := []struct{ value, name string }{
		{"anthropic/claude-x", "Claude X (Anthropic)"},
		{"openai/fake-model", "fake-model (OpenAI)"},
		{"custom/m", "m (custom)"},
	}
	for i, w := range want {
		if o := got.Ungrouped[i]; string(o.Value) != w.value || o.Name != w.name {
			t.Errorf("option %d = %+v, want %+v", i, o, w)
		}
	}
	if d := got.Ungrouped[0].Description; d == nil || *d != "200K context" {
		t.Errorf("description = %v", d)
	}
	// Options picks the flat list unless told the client renders groups.
	flat := Options("ask", "openai/fake-model", "off", []string{"openai/fake-model"}, describe, false)[1].Select.Options
	grouped := Options("ask", "openai/fake-model", "off", []string{"openai/fake-model"}, describe, true)[1].Select.Options
	if flat.Grouped != nil || len(flat.Ungrouped) != 1 || grouped.Ungrouped != nil || len(grouped.Grouped) != 1 {
		t.Errorf("flat %+v, grouped %+v", flat, grouped)
	}
}
