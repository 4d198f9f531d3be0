package terminal

import (
	"slices"
	"testing"
)

// TestFilterEnv checks that terminals use the shared filter (its rules are
// tested in internal/childenv).
func TestFilterEnv(t *testing.T) {
	env := []string{"PATH=/usr/bin", "GITHUB_TOKEN=ghp", "GITHUB_TOKENS=a", "SMTP_PASS=p", "LANG=C"}
	if got, want := FilterEnv(env, nil), []string{"PATH=/usr/bin", "LANG=C"}; !slices.Equal(got, want) {
		t.Errorf("FilterEnv = %q, want %q", got, want)
	}
	if got, want := FilterEnv(env, []string{"GITHUB_*"}), []string{"PATH=/usr/bin", "GITHUB_TOKEN=ghp", "GITHUB_TOKENS=a", "LANG=C"}; !slices.Equal(got, want) {
		t.Errorf("FilterEnv with allow = %q, want %q", got, want)
	}
}

func TestBuildEnv(t *testing.T) {
	env, err := buildEnv(Spec{
		BaseEnv: []string{"A=1", "B=2", "A=3", "bad"},
		Env:     []EnvVar{{Name: "B", Value: "over"}, {Name: "C", Value: "x=y"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A=3", "B=over", "C=x=y", "TERM=" + defaultTerm}
	if !slices.Equal(env, want) {
		t.Errorf("buildEnv = %q, want %q", env, want)
	}

	env, err = buildEnv(Spec{BaseEnv: []string{"TERM=dumb"}})
	if err != nil || !slices.Equal(env, []string{"TERM=dumb"}) {
		t.Errorf("buildEnv kept TERM: %q, %v", env, err)
	}

	for _, bad := range []EnvVar{{Name: ""}, {Name: "A=B"}, {Name: "A\x00"}, {Name: "A", Value: "\x00"}} {
		if _, err := buildEnv(Spec{BaseEnv: []string{}, Env: []EnvVar{bad}}); err == nil {
			t.Errorf("buildEnv accepted %q", bad)
		}
	}
}
