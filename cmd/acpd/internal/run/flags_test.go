package run

import (
	"errors"
	"reflect"
	"testing"

	"github.com/spf13/pflag"
)

// TestFlagsCheck: the flags that stand for others resolve (--json, --yes),
// --agent is split and gets its --agent-arg arguments, and every bad
// combination is a usage error before anything starts.
func TestFlagsCheck(t *testing.T) {
	parse := func(t *testing.T, args ...string) *Flags {
		t.Helper()
		f := &Flags{}
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		f.Register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := parse(t, "--json", "-y", "--agent", `npx "some agent"`, "--agent-arg", "--acp")
	argv, err := f.check()
	if err != nil || f.output != outputStreamJSON || f.approve != approveAll || !reflect.DeepEqual(argv, []string{"npx", "some agent", "--acp"}) {
		t.Errorf("output %q, approve %q, argv %q, err %v", f.output, f.approve, argv, err)
	}
	if argv, err := parse(t).check(); err != nil || argv != nil || parse(t).approve != approveAsk {
		t.Errorf("defaults: argv %q, err %v", argv, err)
	}
	for _, args := range [][]string{
		{"--json", "--output", "json"},
		{"--output", "yaml"},
		{"--approve", "maybe"},
		{"--yes", "--approve", "none"},
		{"--continue", "--session", "s1"},
		{"--max-turn-requests", "-1"},
		{"--timeout", "-1s"},
		{"--agent", "'unterminated"},
		{"--agent", "  "},
		{"--agent", "a", "--max-turn-requests", "3"},
		{"--agent-arg", "x"},
		{"--follow-up", " "},
	} {
		if _, err := parse(t, args...).check(); !errors.Is(err, ExitStatus(ExitUsage)) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}
