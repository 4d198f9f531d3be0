package run

import (
	"reflect"
	"testing"
)

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		"":                          nil,
		"  a  b\tc ":                {"a", "b", "c"},
		`a 'b c' "d e"`:             {"a", "b c", "d e"},
		`x"y"'z' \ a`:               {"xyz", " a"},
		`"a \"q\" \\ \n $"`:         {`a "q" \ \n $`},
		`'it''s' "" ''`:             {"its", "", ""},
		"npx -y @scope/agent --acp": {"npx", "-y", "@scope/agent", "--acp"},
	} {
		got, err := splitWords(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{`'a`, `"a`, `a\`} {
		if _, err := splitWords(bad); err == nil {
			t.Errorf("splitWords(%q) succeeded", bad)
		}
	}
}
