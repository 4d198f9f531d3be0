package run

import (
	"slices"
	"testing"
)

func TestUnfence(t *testing.T) {
	for in, want := range map[string]string{
		"```\na\nb\n```":       "a\nb",
		"```console\na\n```\n": "a",
		"````\na ``` b\n````":  "a ``` b",
		"plain output":         "plain output",
		"```":                  "```",
	} {
		if got := unfence(in); got != want {
			t.Errorf("unfence(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOutputLines(t *testing.T) {
	ti := toolInfo{output: "1\n2\n3\n4"}
	if got, want := outputLines(ti, 2, true), []string{"  │ … 2 earlier lines (--verbose shows all)", "  │ 3", "  └ 4"}; !slices.Equal(got, want) {
		t.Errorf("ended, last 2: %q, want %q", got, want)
	}
	if got, want := outputLines(ti, 2, false), []string{"  │ 3", "  └ 4"}; !slices.Equal(got, want) {
		t.Errorf("running, last 2: %q, want %q", got, want)
	}
	ti.outTruncated = true
	if got := outputLines(ti, 0, true); len(got) != 5 || got[0] != "  │ … (the output's start was not kept)" {
		t.Errorf("all of a truncated output: %q", got)
	}
	if got := outputLines(toolInfo{output: " \n"}, 0, true); got != nil {
		t.Errorf("blank output: %q", got)
	}
}
