package slash

import (
	"testing"

	"acpd/acp"
)

// A prompt is a command when it is one text block naming one of acpd's.
func TestParse(t *testing.T) {
	text := func(s string) []acp.ContentBlock { return []acp.ContentBlock{{Text: &acp.TextContent{Text: s}}} }
	for in, want := range map[string]string{" /compact now": "compact", "/plan": "plan", "/init": "init", "/review base x": "review", "/nope": "", "plan": "", "/srv:prompt": ""} {
		got, ok := Parse(text(in))
		if got != want || ok != (want != "") {
			t.Errorf("Parse(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := Parse(append(text("/plan"), text("more")...)); ok {
		t.Error("two blocks parsed as a command")
	}
	if got := Args(text(" /review base main  focus ")); got != "base main  focus" {
		t.Errorf("Args = %q", got)
	}
	if got := Args(text("/review")); got != "" {
		t.Errorf("Args of no arguments = %q", got)
	}
	if len(Commands()) != 7 {
		t.Errorf("commands = %+v", Commands())
	}
}
