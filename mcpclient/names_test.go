package mcpclient

import (
	"regexp"
	"strings"
	"testing"
)

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func TestQualifiedNames(t *testing.T) {
	long := strings.Repeat("x", 80)
	keys := []toolKey{
		{"fs", "read_file"},          // plain
		{"my server", "do.thing"},    // sanitized
		{"my_server", "do_thing"},    // plain, but the sanitized one above took it first
		{"a", long},                  // too long
		{"a", long + "y"},            // too long, same prefix
		{"émoji", "tööl"},            // multi-byte
		{"fs", "read_file"},          // exact duplicate key
		{"srv", "tool/with/slashes"}, // sanitized
	}
	got := qualifiedNames(keys)
	want0 := map[int]string{
		0: "mcp__fs__read_file",
		1: "mcp__my_server__do_thing",
		5: "mcp___moji__t____l",
		7: "mcp__srv__tool_with_slashes",
	}
	for i, w := range want0 {
		if got[i] != w {
			t.Errorf("name %d = %q, want %q", i, got[i], w)
		}
	}
	seen := map[string]bool{}
	for i, n := range got {
		if !validName.MatchString(n) {
			t.Errorf("name %d %q is not a valid tool name", i, n)
		}
		if seen[n] {
			t.Errorf("name %q assigned twice", n)
		}
		seen[n] = true
	}
	for _, i := range []int{2, 3, 4, 6} {
		if !regexp.MustCompile(`_[0-9a-f]{8}(_[0-9]+)?$`).MatchString(got[i]) {
			t.Errorf("name %d %q lacks the hash suffix", i, got[i])
		}
	}
	if len(got[3]) != maxNameLen || !strings.HasPrefix(got[3], "mcp__a__xxx") {
		t.Errorf("long name = %q (%d chars)", got[3], len(got[3]))
	}
	// Deterministic: the same input yields the same names.
	again := qualifiedNames(keys)
	for i := range got {
		if got[i] != again[i] {
			t.Errorf("name %d not deterministic: %q vs %q", i, got[i], again[i])
		}
	}
	// Earlier keys keep their names when more tools are appended.
	more := qualifiedNames(append(keys[:2:2], toolKey{"my server", "do_thing"}))
	if more[0] != got[0] || more[1] != got[1] {
		t.Errorf("appending a tool renamed existing ones: %q", more)
	}
}

// FuzzQualifiedNames checks the naming invariants on server-chosen names.
func FuzzQualifiedNames(f *testing.F) {
	f.Add("fs", "read", "fs", "read")
	f.Add("a b", "c", "a_b", "c")
	f.Add(strings.Repeat("s", 70), "t", strings.Repeat("s", 70), "u")
	f.Add("", "", "\x00", "\xff")
	f.Fuzz(func(t *testing.T, s1, t1, s2, t2 string) {
		keys := []toolKey{{s1, t1}, {s2, t2}, {s1, t2}, {s2, t1}}
		names := qualifiedNames(keys)
		seen := map[string]bool{}
		for i, n := range names {
			if !validName.MatchString(n) {
				t.Fatalf("name %d %q invalid for %q", i, n, keys[i])
			}
			if seen[n] {
				t.Fatalf("duplicate name %q for %q", n, keys)
			}
			seen[n] = true
		}
	})
}

func TestQualifiedNamesSeparatorIsUnambiguous(t *testing.T) {
	got := qualifiedNames([]toolKey{{"a__b", "c"}, {"a", "b__c"}})
	if got[0] == got[1] {
		t.Fatalf("server a__b/tool c and server a/tool b__c share %q", got[0])
	}
	if got[0] != "mcp__a_b__c" || got[1] != "mcp__a__b__c" {
		t.Fatalf("names = %q", got)
	}
}
