package terminal

import (
	"errors"
	"os/exec"
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

func TestLookPath(t *testing.T) {
	p, err := lookPath("sh", "relative/bin::/nonexistent:/bin:/usr/bin", true)
	if err != nil || (p != "/bin/sh" && p != "/usr/bin/sh") {
		t.Errorf("lookPath(sh) = %q, %v", p, err)
	}
	if p, err := lookPath("./x", "", true); p != "./x" || err != nil {
		t.Errorf("lookPath(./x) = %q, %v", p, err)
	}
	if _, err := lookPath("sh", "", true); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("lookPath with empty PATH: %v, want ErrNotFound", err)
	}
	if p, err := lookPath("sh", "", false); err != nil || p == "" {
		t.Errorf("lookPath without PATH should use DefaultPath: %q, %v", p, err)
	}
}
