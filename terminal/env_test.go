package terminal

import (
	"errors"
	"os/exec"
	"slices"
	"testing"
)

func TestFilterEnv(t *testing.T) {
	env := []string{
		"PATH=/usr/bin",
		"HOME=/home/u",
		"OPENAI_API_KEY=sk-1",
		"ANTHROPIC_API_KEY=sk-2",
		"GEMINI_API_KEY=g",
		"GOOGLE_API_KEY=g2",
		"AWS_SECRET_ACCESS_KEY=aws",
		"AWS_ACCESS_KEY_ID=akid",
		"GITHUB_TOKEN=ghp",
		"my_service_token=lower",
		"DB_PASSWORD=pw",
		"PGPASSWORD=pg",
		"MYSQL_PWD=my",
		"CLIENT_SECRET=cs",
		"SSH_KEY=k",
		"DD_APIKEY=dd",
		"STRIPE_API_KEY_LIVE=st",
		"TOKEN=t",
		"TOKENIZERS_PARALLELISM=false",
		"KEYBOARD=us",
		"SSH_AUTH_SOCK=/tmp/agent",
		"LANG=C.UTF-8",
		"EMPTY=",
		"noequals",
		"=novalue",
	}
	want := []string{
		"PATH=/usr/bin",
		"HOME=/home/u",
		"TOKENIZERS_PARALLELISM=false",
		"KEYBOARD=us",
		"SSH_AUTH_SOCK=/tmp/agent",
		"LANG=C.UTF-8",
		"EMPTY=",
	}
	orig := slices.Clone(env)
	if got := FilterEnv(env, nil); !slices.Equal(got, want) {
		t.Errorf("FilterEnv = %q\nwant %q", got, want)
	}
	if !slices.Equal(env, orig) {
		t.Error("FilterEnv modified its input")
	}

	got := FilterEnv(env, []string{"GITHUB_TOKEN", "AWS_*", "[", "openai_api_key"})
	for _, kv := range []string{"GITHUB_TOKEN=ghp", "AWS_SECRET_ACCESS_KEY=aws", "AWS_ACCESS_KEY_ID=akid"} {
		if !slices.Contains(got, kv) {
			t.Errorf("allowed %q missing from %q", kv, got)
		}
	}
	for _, kv := range []string{"OPENAI_API_KEY=sk-1", "ANTHROPIC_API_KEY=sk-2"} {
		if slices.Contains(got, kv) {
			t.Errorf("%q kept although not allowed (allow is case-sensitive)", kv)
		}
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

func TestParseProcStat(t *testing.T) {
	state, pg, ok := parseProcStat([]byte("123 (weird ) (name) S 1 4567 4567 0 -1 4194560"))
	if !ok || state != 'S' || pg != 4567 {
		t.Errorf("parseProcStat = %c %d %v", state, pg, ok)
	}
	for _, bad := range []string{"", "123 (x", "1 (x) S", "1 (x) S 1 abc"} {
		if _, _, ok := parseProcStat([]byte(bad)); ok {
			t.Errorf("parseProcStat(%q) ok", bad)
		}
	}
}
