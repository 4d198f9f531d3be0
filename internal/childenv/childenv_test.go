package childenv

import (
	"slices"
	"testing"
)

func TestFilter(t *testing.T) {
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
		// Reached commands and MCP servers but not plug-ins before the two
		// filters became one.
		"GITHUB_TOKENS=a,b",
		"DOCKER_AUTH_CONFIG={}",
		"REDIS_CREDENTIALS=r",
		"SESSION_COOKIE=c",
		"SMTP_PASS=p",
		"NPM_CONFIG__AUTH=n",
	}
	want := []string{
		"PATH=/usr/bin",
		"HOME=/home/u",
		"TOKENIZERS_PARALLELISM=false",
		"KEYBOARD=us",
		"LANG=C.UTF-8",
		"EMPTY=",
	}
	orig := slices.Clone(env)
	if got := Filter(env, nil); !slices.Equal(got, want) {
		t.Errorf("Filter = %q\nwant %q", got, want)
	}
	if !slices.Equal(env, orig) {
		t.Error("Filter modified its input")
	}

	got := Filter(env, []string{"GITHUB_TOKEN", "AWS_*", "[", "openai_api_key", "SSH_AUTH_SOCK"})
	for _, kv := range []string{"GITHUB_TOKEN=ghp", "AWS_SECRET_ACCESS_KEY=aws", "AWS_ACCESS_KEY_ID=akid", "SSH_AUTH_SOCK=/tmp/agent"} {
		if !slices.Contains(got, kv) {
			t.Errorf("allowed %q missing from %q", kv, got)
		}
	}
	for _, kv := range []string{"OPENAI_API_KEY=sk-1", "ANTHROPIC_API_KEY=sk-2", "GITHUB_TOKENS=a,b"} {
		if slices.Contains(got, kv) {
			t.Errorf("%q kept although not allowed (allow is case-sensitive and exact)", kv)
		}
	}
}

func TestIsSecret(t *testing.T) {
	for name, want := range map[string]bool{
		"OPENAI_API_KEY": true, "ANTHROPIC_API_KEY": true, "GEMINI_API_KEY": true, "GITHUB_TOKEN": true,
		"AWS_SECRET_ACCESS_KEY": true, "AWS_SESSION_TOKEN": true, "DB_PASSWORD": true, "PGPASSWORD": true,
		"GOOGLE_APPLICATION_CREDENTIALS": true, "SSH_AUTH_SOCK": true, "NPM_CONFIG__AUTH": true, "apikey": true,
		"MY_PASS": true, "HF_TOKEN": true, "SECRET": true, "private_key_path": true, "MYSQL_PWD": true,
		"GITHUB_TOKENS": true, "DOCKER_AUTH_CONFIG": true, "REDIS_CREDENTIALS": true, "SESSION_COOKIE": true,
		"SMTP_PASS": true, "my.service-token": true, "DD_APIKEY": true,
		"PATH": false, "HOME": false, "LANG": false, "TERM": false, "PWD": false, "KEYBOARD_LAYOUT": false,
		"GOPATH": false, "XDG_RUNTIME_DIR": false, "PASSAGE": false, "TOKENIZERS_PARALLELISM": false,
	} {
		if got := IsSecret(name); got != want {
			t.Errorf("IsSecret(%q) = %v, want %v", name, got, want)
		}
	}
}

// Provider key variables are left out whatever their names, unless allowed.
func TestWithout(t *testing.T) {
	env := []string{"PATH=/bin", "MY_LLM=k", "OTHER_KEY=k2", "HOME=/h"}
	got := Without(env, []string{"MY_LLM", "OTHER_KEY", ""}, []string{"OTHER_*"})
	if want := []string{"PATH=/bin", "OTHER_KEY=k2", "HOME=/h"}; !slices.Equal(got, want) {
		t.Errorf("Without = %q, want %q", got, want)
	}
	if got := Without(env, nil, nil); &got[0] != &env[0] {
		t.Error("Without copied env with nothing to leave out")
	}
}
