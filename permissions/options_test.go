package permissions

import (
	"strings"
	"testing"
)

func TestOptions(t *testing.T) {
	once := Options(Decision{Action: Ask})
	if len(once) != 2 || once[0].Kind != AllowOnce || once[1].Kind != RejectOnce {
		t.Errorf("without remember: %v", once)
	}
	all := Options(Decision{Action: Ask, Remember: []Rule{{Tool: "run_command", Match: "go test ./..."}, {Tool: "mcp__a__b"}}})
	kinds := []OptionKind{AllowOnce, AllowAlways, RejectOnce, RejectAlways}
	if len(all) != 4 {
		t.Fatalf("with remember: %v", all)
	}
	for i, o := range all {
		if o.Kind != kinds[i] || o.ID != string(kinds[i]) || o.Name == "" {
			t.Errorf("option %d: %+v", i, o)
		}
	}
	if !strings.Contains(all[1].Name, "go test ./...") || !strings.Contains(all[1].Name, "mcp__a__b") {
		t.Errorf("always-allow name does not say what is remembered: %q", all[1].Name)
	}
	long := Options(Decision{Remember: []Rule{{Tool: "run_command", Match: strings.Repeat("x", 1000)}}})
	if len([]rune(long[1].Name)) > maxOptionDetail+20 {
		t.Errorf("name not truncated: %d runes", len([]rune(long[1].Name)))
	}
}

func TestVerdict(t *testing.T) {
	four := Options(Decision{Remember: []Rule{{Tool: "x"}}})
	two := Options(Decision{})
	cases := []struct {
		name     string
		offered  []Option
		outcome  string
		id       string
		late     bool
		allowed  bool
		remember bool
		kind     OptionKind
	}{
		{"allow once", four, "selected", "allow_once", false, true, false, AllowOnce},
		{"allow always", four, "selected", "allow_always", false, true, true, AllowAlways},
		{"reject once", four, "selected", "reject_once", false, false, false, RejectOnce},
		{"reject always", four, "selected", "reject_always", false, false, true, RejectAlways},
		{"cancelled", four, "cancelled", "", false, false, false, ""},
		{"cancelled with id", four, "cancelled", "allow_once", false, false, false, ""},
		{"late allow", four, "selected", "allow_once", true, false, false, ""},
		{"late allow always", four, "selected", "allow_always", true, false, false, ""},
		{"unknown outcome", four, "approved", "allow_once", false, false, false, ""},
		{"empty outcome", four, "", "allow_once", false, false, false, ""},
		{"outcome case", four, "Selected", "allow_once", false, false, false, ""},
		{"forged id", four, "selected", "allow", false, false, false, ""},
		{"id case", four, "selected", "ALLOW_ONCE", false, false, false, ""},
		{"empty id", four, "selected", "", false, false, false, ""},
		{"not offered", two, "selected", "allow_always", false, false, false, ""},
		{"nothing offered", nil, "selected", "allow_once", false, false, false, ""},
		{"ambiguous id", []Option{{ID: "x", Kind: AllowOnce}, {ID: "x", Kind: RejectOnce}}, "selected", "x", false, false, false, ""},
		{"unknown kind", []Option{{ID: "x", Kind: "allow_forever"}}, "selected", "x", false, false, false, ""},
		{"custom id", []Option{{ID: "yes", Kind: AllowOnce}}, "selected", "yes", false, true, false, AllowOnce},
	}
	for _, c := range cases {
		allowed, remember, kind := Verdict(c.offered, c.outcome, c.id, c.late)
		if allowed != c.allowed || remember != c.remember || kind != c.kind {
			t.Errorf("%s: got (%v, %v, %q), want (%v, %v, %q)", c.name, allowed, remember, kind, c.allowed, c.remember, c.kind)
		}
	}
}

// Each option kind has its label, an unknown kind none.
func TestOptionLabel(t *testing.T) {
	for k, want := range map[OptionKind]string{AllowOnce: "Allow once", AllowAlways: "Always allow", RejectOnce: "Reject", RejectAlways: "Always reject", "other": ""} {
		if got := k.Label(); got != want {
			t.Errorf("%q.Label() = %q, want %q", k, got, want)
		}
	}
}
