package configopts

import "testing"

// The options are mode, model and reasoning, with the current values; a
// session without models shows the placeholder that says how to get one.
func TestOptions(t *testing.T) {
	opts := Options("ask", "anthropic/x", "high", []string{"anthropic/x"}, nil, false)
	if len(opts) != 3 || opts[0].ID != Mode || opts[1].ID != Model || opts[2].ID != Thought {
		t.Fatalf("options = %+v", opts)
	}
	if v := opts[1].Select.CurrentValue; v != "anthropic/x" || opts[2].Select.CurrentValue != "high" {
		t.Errorf("current values %q %q", v, opts[2].Select.CurrentValue)
	}
	none := Options("ask", "", "medium", nil, nil, false)
	if o := none[1].Select; o.CurrentValue != NoModel || len(o.Options.Ungrouped) != 1 || o.Options.Ungrouped[0].Description == nil {
		t.Errorf("selector without models = %+v", o)
	}
	if !ValidThought("off") || ValidThought("extreme") {
		t.Error("ValidThought")
	}
	if m := Modes("plan"); m.CurrentModeID != "plan" || len(m.AvailableModes) != 4 {
		t.Errorf("modes = %+v", m)
	}
}
