package mcptools

import (
	"strings"
	"testing"

	"acpd/mcpclient"
)

func TestPromptArgs(t *testing.T) {
	p := mcpclient.Prompt{QualifiedName: "s:p", Arguments: []mcpclient.PromptArg{
		{Name: "city", Required: true}, {Name: "state"}, {Name: "note"},
	}}
	for _, tc := range []struct {
		rest string
		want map[string]string
		err  string
	}{
		{"Paris", map[string]string{"city": "Paris"}, ""},
		{"New   York state=NY", map[string]string{"city": "New York", "state": "NY"}, ""},
		{"city=Lyon free text", map[string]string{"city": "Lyon", "state": "free text"}, ""},
		{"state=TX", nil, "missing required argument city"},
		{"", nil, "missing required argument city"},
		{"a=b", map[string]string{"city": "a=b"}, ""},
		{"city=x state=y note=z more", nil, "every argument is already set"},
	} {
		got, err := promptArgs(p, tc.rest)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("promptArgs(%q) error = %v, want %q", tc.rest, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("promptArgs(%q) = %v, %v; want %v", tc.rest, got, err, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("promptArgs(%q)[%s] = %q, want %q", tc.rest, k, got[k], v)
			}
		}
	}
	if _, err := promptArgs(mcpclient.Prompt{QualifiedName: "s:q"}, "extra"); err == nil {
		t.Error("text for a prompt without arguments accepted")
	}
	if got, err := promptArgs(mcpclient.Prompt{QualifiedName: "s:q"}, ""); err != nil || len(got) != 0 {
		t.Errorf("no arguments = %v, %v", got, err)
	}
}

// FuzzPromptArgs: whatever the user types after an MCP prompt command, the
// arguments either fail with an explanation or name only the prompt's
// arguments and include every required one.
func FuzzPromptArgs(f *testing.F) {
	for _, s := range []string{"", "Paris", "New York state=NY", "city=a=b", "state= city=", "= = =", "é\u00a0x"} {
		f.Add(s)
	}
	p := mcpclient.Prompt{QualifiedName: "s:p", Arguments: []mcpclient.PromptArg{{Name: "city", Required: true}, {Name: "state"}}}
	f.Fuzz(func(t *testing.T, rest string) {
		got, err := promptArgs(p, rest)
		if err != nil {
			return
		}
		if _, ok := got["city"]; !ok {
			t.Fatalf("promptArgs(%q) = %v without the required argument", rest, got)
		}
		for k := range got {
			if k != "city" && k != "state" {
				t.Fatalf("promptArgs(%q) set unknown argument %q", rest, k)
			}
		}
	})
}
